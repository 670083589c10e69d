"""Moderation: alarm queue, sanctions, recording metadata and the append-only audit log.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01

Staff roles need no table: `accounts.role` (player / moderator / admin) exists since 0001.
The audit log reuses the append-only guard of 0001 (the `vollmond_append_only()` function on
PostgreSQL, RAISE(ABORT) triggers on SQLite).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

AUDIT_TABLE = "moderation_audit"


def _big_id() -> sa.types.TypeEngine[int]:
    return sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _timestamp() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def _account_fk(table: str, column: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        [column], ["accounts.id"], name=op.f(f"fk_{table}_{column}_accounts")
    )


def upgrade() -> None:
    _create_alarms()
    _create_sanctions()
    _create_recordings()
    _create_audit()
    _guard_audit()


def _create_alarms() -> None:
    table = "moderation_alarms"
    op.create_table(
        table,
        sa.Column("id", _big_id(), primary_key=True, autoincrement=True),
        sa.Column("game_id", sa.String(32), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("phase", sa.String(32), nullable=False),
        sa.Column("caller_account_id", _big_id(), nullable=True),
        sa.Column("caller_phone_identity_id", _big_id(), nullable=True),
        sa.Column("caller_house", sa.Integer(), nullable=True),
        sa.Column("reason", sa.Integer(), nullable=True),
        sa.Column("accused_house", sa.Integer(), nullable=True),
        sa.Column("created_at", _timestamp(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("taken_by", _big_id(), nullable=True),
        sa.Column("taken_at", _timestamp(), nullable=True),
        sa.Column("outcome", sa.String(16), nullable=True),
        sa.Column("note", sa.String(500), nullable=True),
        sa.Column("resolved_by", _big_id(), nullable=True),
        sa.Column("resolved_at", _timestamp(), nullable=True),
        sa.CheckConstraint(
            "status IN ('open', 'taken', 'resolved')", name=op.f(f"ck_{table}_status_known")
        ),
        sa.CheckConstraint(
            "outcome IS NULL OR outcome IN ('dismissed', 'warned', 'muted', 'kicked', "
            "'banned', 'false_alarm')",
            name=op.f(f"ck_{table}_outcome_known"),
        ),
        sa.CheckConstraint(
            "reason IS NULL OR reason BETWEEN 1 AND 4", name=op.f(f"ck_{table}_reason_range")
        ),
        sa.CheckConstraint(
            "caller_account_id IS NOT NULL OR caller_phone_identity_id IS NOT NULL "
            "OR caller_house IS NOT NULL",
            name=op.f(f"ck_{table}_caller_named"),
        ),
        sa.CheckConstraint(
            "(status = 'resolved') = (outcome IS NOT NULL)",
            name=op.f(f"ck_{table}_resolved_has_outcome"),
        ),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], name=op.f(f"fk_{table}_game_id_games")),
        _account_fk(table, "caller_account_id"),
        sa.ForeignKeyConstraint(
            ["caller_phone_identity_id"],
            ["phone_identities.id"],
            name=op.f(f"fk_{table}_caller_phone_identity_id_phone_identities"),
        ),
        _account_fk(table, "taken_by"),
        _account_fk(table, "resolved_by"),
        sa.PrimaryKeyConstraint("id", name=op.f(f"pk_{table}")),
    )
    for column in ("game_id", "created_at", "status"):
        op.create_index(op.f(f"ix_{table}_{column}"), table, [column], unique=False)


def _create_sanctions() -> None:
    table = "moderation_sanctions"
    op.create_table(
        table,
        sa.Column("id", _big_id(), primary_key=True, autoincrement=True),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("area", sa.String(80), nullable=True),
        sa.Column("account_id", _big_id(), nullable=True),
        sa.Column("phone_identity_id", _big_id(), nullable=True),
        sa.Column("game_id", sa.String(32), nullable=True),
        sa.Column("alarm_id", _big_id(), nullable=True),
        sa.Column("reason", sa.String(500), nullable=False),
        sa.Column("created_by", _big_id(), nullable=False),
        sa.Column("created_at", _timestamp(), nullable=False),
        sa.Column("expires_at", _timestamp(), nullable=True),
        sa.Column("lifted_at", _timestamp(), nullable=True),
        sa.Column("lifted_by", _big_id(), nullable=True),
        sa.CheckConstraint(
            "kind IN ('warn', 'mute', 'kick', 'ban')", name=op.f(f"ck_{table}_kind_known")
        ),
        sa.CheckConstraint(
            "(account_id IS NULL) <> (phone_identity_id IS NULL)",
            name=op.f(f"ck_{table}_one_subject"),
        ),
        sa.CheckConstraint(
            "kind <> 'ban' OR area IS NOT NULL", name=op.f(f"ck_{table}_ban_has_area")
        ),
        sa.CheckConstraint(
            "kind <> 'mute' OR expires_at IS NOT NULL", name=op.f(f"ck_{table}_mute_expires")
        ),
        sa.CheckConstraint(
            "expires_at IS NULL OR expires_at > created_at",
            name=op.f(f"ck_{table}_expiry_later"),
        ),
        _account_fk(table, "account_id"),
        sa.ForeignKeyConstraint(
            ["phone_identity_id"],
            ["phone_identities.id"],
            name=op.f(f"fk_{table}_phone_identity_id_phone_identities"),
        ),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], name=op.f(f"fk_{table}_game_id_games")),
        sa.ForeignKeyConstraint(
            ["alarm_id"],
            ["moderation_alarms.id"],
            name=op.f(f"fk_{table}_alarm_id_moderation_alarms"),
        ),
        _account_fk(table, "created_by"),
        _account_fk(table, "lifted_by"),
        sa.PrimaryKeyConstraint("id", name=op.f(f"pk_{table}")),
    )
    for column in ("account_id", "phone_identity_id"):
        op.create_index(op.f(f"ix_{table}_{column}"), table, [column], unique=False)


def _create_recordings() -> None:
    table = "moderation_recordings"
    op.create_table(
        table,
        sa.Column("id", sa.String(32), nullable=False),
        sa.Column("game_id", sa.String(32), nullable=True),
        sa.Column("alarm_id", _big_id(), nullable=True),
        sa.Column("room", sa.String(64), nullable=False),
        sa.Column("started_at", _timestamp(), nullable=False),
        sa.Column("ended_at", _timestamp(), nullable=True),
        sa.Column("blob_path", sa.String(255), nullable=False),
        sa.Column("wrapped_key", sa.LargeBinary(64), nullable=False),
        sa.Column("key_nonce", sa.LargeBinary(16), nullable=False),
        sa.Column("key_fingerprint", sa.String(16), nullable=False),
        sa.Column("hold_reason", sa.String(500), nullable=True),
        sa.Column("hold_by", _big_id(), nullable=True),
        sa.Column("held_at", _timestamp(), nullable=True),
        sa.Column("deleted_at", _timestamp(), nullable=True),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], name=op.f(f"fk_{table}_game_id_games")),
        sa.ForeignKeyConstraint(
            ["alarm_id"],
            ["moderation_alarms.id"],
            name=op.f(f"fk_{table}_alarm_id_moderation_alarms"),
        ),
        _account_fk(table, "hold_by"),
        sa.PrimaryKeyConstraint("id", name=op.f(f"pk_{table}")),
    )
    for column in ("game_id", "started_at"):
        op.create_index(op.f(f"ix_{table}_{column}"), table, [column], unique=False)


def _create_audit() -> None:
    op.create_table(
        AUDIT_TABLE,
        sa.Column("id", _big_id(), primary_key=True, autoincrement=True),
        sa.Column("actor_account_id", _big_id(), nullable=True),
        sa.Column("action", sa.String(64), nullable=False),
        sa.Column("target_kind", sa.String(32), nullable=False),
        sa.Column("target_id", sa.String(64), nullable=False),
        sa.Column("detail", sa.String(500), nullable=False),
        sa.Column("created_at", _timestamp(), nullable=False),
        _account_fk(AUDIT_TABLE, "actor_account_id"),
        sa.PrimaryKeyConstraint("id", name=op.f(f"pk_{AUDIT_TABLE}")),
    )
    for column in ("actor_account_id", "created_at"):
        op.create_index(op.f(f"ix_{AUDIT_TABLE}_{column}"), AUDIT_TABLE, [column], unique=False)


def _guard_audit() -> None:
    """The audit log is append-only in the database itself, like the ledgers (0001)."""
    dialect = op.get_bind().dialect.name
    if dialect == "postgresql":
        op.execute(
            f"CREATE TRIGGER {AUDIT_TABLE}_append_only BEFORE UPDATE OR DELETE ON {AUDIT_TABLE} "
            "FOR EACH ROW EXECUTE FUNCTION vollmond_append_only()"
        )
    elif dialect == "sqlite":
        for action in ("UPDATE", "DELETE"):
            op.execute(
                f"CREATE TRIGGER {AUDIT_TABLE}_no_{action.lower()} BEFORE {action} "
                f"ON {AUDIT_TABLE} "
                f"BEGIN SELECT RAISE(ABORT, 'table {AUDIT_TABLE} is append-only'); END"
            )


def _unguard_audit() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "postgresql":
        op.execute(f"DROP TRIGGER IF EXISTS {AUDIT_TABLE}_append_only ON {AUDIT_TABLE}")
    elif dialect == "sqlite":
        for action in ("update", "delete"):
            op.execute(f"DROP TRIGGER IF EXISTS {AUDIT_TABLE}_no_{action}")


def downgrade() -> None:
    _unguard_audit()
    for column in ("actor_account_id", "created_at"):
        op.drop_index(op.f(f"ix_{AUDIT_TABLE}_{column}"), table_name=AUDIT_TABLE)
    op.drop_table(AUDIT_TABLE)
    for column in ("game_id", "started_at"):
        op.drop_index(
            op.f(f"ix_moderation_recordings_{column}"), table_name="moderation_recordings"
        )
    op.drop_table("moderation_recordings")
    for column in ("account_id", "phone_identity_id"):
        op.drop_index(op.f(f"ix_moderation_sanctions_{column}"), table_name="moderation_sanctions")
    op.drop_table("moderation_sanctions")
    for column in ("game_id", "created_at", "status"):
        op.drop_index(op.f(f"ix_moderation_alarms_{column}"), table_name="moderation_alarms")
    op.drop_table("moderation_alarms")
