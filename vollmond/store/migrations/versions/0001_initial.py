"""Initial schema: accounts, phone identities, entitlements, ledgers, games and game logs.

Revision ID: 0001
Revises:
Create Date: 2026-11-30

Types are spelled out here rather than imported from the models: a migration must keep
describing the schema of its own revision when the models move on.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

APPEND_ONLY_TABLES = ("credit_ledger", "karma_ledger", "game_events", "game_commands")


def _big_id() -> sa.types.TypeEngine[int]:
    return sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _timestamp() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "accounts",
        sa.Column("id", _big_id(), primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("name_key", sa.String(64), nullable=False),
        sa.Column("password_hash", sa.String(255), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("credit_balance", sa.BigInteger(), nullable=False),
        sa.Column("created_at", _timestamp(), nullable=False),
        sa.CheckConstraint("credit_balance >= 0", name=op.f("ck_accounts_credit_not_negative")),
        sa.CheckConstraint(
            "role IN ('player', 'moderator', 'admin')", name=op.f("ck_accounts_role_known")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_accounts")),
        sa.UniqueConstraint("name_key", name=op.f("uq_accounts_name_key")),
    )
    op.create_table(
        "phone_identities",
        sa.Column("id", _big_id(), primary_key=True, autoincrement=True),
        sa.Column("number", sa.String(32), nullable=True),
        sa.Column("pin_hash", sa.String(255), nullable=True),
        sa.Column("account_id", _big_id(), nullable=True),
        sa.Column("created_at", _timestamp(), nullable=False),
        sa.CheckConstraint(
            "number IS NOT NULL OR pin_hash IS NOT NULL",
            name=op.f("ck_phone_identities_number_or_pin"),
        ),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name=op.f("fk_phone_identities_account_id_accounts"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_phone_identities")),
        sa.UniqueConstraint("number", name=op.f("uq_phone_identities_number")),
    )
    op.create_index(
        op.f("ix_phone_identities_account_id"), "phone_identities", ["account_id"], unique=False
    )
    op.create_table(
        "premium_periods",
        sa.Column("id", _big_id(), primary_key=True, autoincrement=True),
        sa.Column("account_id", _big_id(), nullable=False),
        sa.Column("starts_at", _timestamp(), nullable=False),
        sa.Column("expires_at", _timestamp(), nullable=False),
        sa.Column("reason", sa.String(200), nullable=False),
        sa.Column("granted_by", _big_id(), nullable=True),
        sa.Column("created_at", _timestamp(), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_premium_periods_account_id_accounts")
        ),
        sa.ForeignKeyConstraint(
            ["granted_by"], ["accounts.id"], name=op.f("fk_premium_periods_granted_by_accounts")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_premium_periods")),
    )
    op.create_index(
        op.f("ix_premium_periods_account_id"), "premium_periods", ["account_id"], unique=False
    )
    op.create_table(
        "grants",
        sa.Column("id", _big_id(), primary_key=True, autoincrement=True),
        sa.Column("account_id", _big_id(), nullable=False),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("value", sa.Integer(), nullable=True),
        sa.Column("reason", sa.String(200), nullable=False),
        sa.Column("granted_by", _big_id(), nullable=True),
        sa.Column("created_at", _timestamp(), nullable=False),
        sa.Column("expires_at", _timestamp(), nullable=True),
        sa.Column("revoked_at", _timestamp(), nullable=True),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_grants_account_id_accounts")
        ),
        sa.ForeignKeyConstraint(
            ["granted_by"], ["accounts.id"], name=op.f("fk_grants_granted_by_accounts")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_grants")),
    )
    op.create_index(op.f("ix_grants_account_id"), "grants", ["account_id"], unique=False)
    op.create_table(
        "games",
        sa.Column("id", sa.String(32), nullable=False),
        sa.Column("world", sa.String(64), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("invitation_hash", sa.String(64), nullable=True),
        sa.Column("host_account_id", _big_id(), nullable=True),
        sa.Column("created_at", _timestamp(), nullable=False),
        sa.Column("finished_at", _timestamp(), nullable=True),
        sa.CheckConstraint(
            "status IN ('lobby', 'running', 'finished', 'aborted')",
            name=op.f("ck_games_status_known"),
        ),
        sa.ForeignKeyConstraint(
            ["host_account_id"], ["accounts.id"], name=op.f("fk_games_host_account_id_accounts")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_games")),
        sa.UniqueConstraint("invitation_hash", name=op.f("uq_games_invitation_hash")),
    )
    op.create_index(op.f("ix_games_status"), "games", ["status"], unique=False)
    op.create_table(
        "credit_ledger",
        sa.Column("id", _big_id(), primary_key=True, autoincrement=True),
        sa.Column("account_id", _big_id(), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("balance_after", sa.BigInteger(), nullable=False),
        sa.Column("reason", sa.String(200), nullable=False),
        sa.Column("game_id", sa.String(32), nullable=True),
        sa.Column("created_at", _timestamp(), nullable=False),
        sa.CheckConstraint("amount <> 0", name=op.f("ck_credit_ledger_amount_not_zero")),
        sa.CheckConstraint(
            "balance_after >= 0", name=op.f("ck_credit_ledger_balance_not_negative")
        ),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_credit_ledger_account_id_accounts")
        ),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_credit_ledger_game_id_games")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_credit_ledger")),
    )
    op.create_index(
        op.f("ix_credit_ledger_account_id"), "credit_ledger", ["account_id"], unique=False
    )
    op.create_table(
        "karma_ledger",
        sa.Column("id", _big_id(), primary_key=True, autoincrement=True),
        sa.Column("account_id", _big_id(), nullable=False),
        sa.Column("amount", sa.Integer(), nullable=False),
        sa.Column("reason", sa.String(200), nullable=False),
        sa.Column("game_id", sa.String(32), nullable=True),
        sa.Column("created_at", _timestamp(), nullable=False),
        sa.CheckConstraint("amount <> 0", name=op.f("ck_karma_ledger_amount_not_zero")),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_karma_ledger_account_id_accounts")
        ),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_karma_ledger_game_id_games")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_karma_ledger")),
    )
    op.create_index(
        op.f("ix_karma_ledger_account_id"), "karma_ledger", ["account_id"], unique=False
    )
    op.create_table(
        "game_events",
        sa.Column("game_id", sa.String(32), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False, autoincrement=False),
        sa.Column("kind", sa.String(64), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("audience", sa.JSON(), nullable=False),
        sa.Column("created_at", _timestamp(), nullable=False),
        sa.CheckConstraint("seq >= 1", name=op.f("ck_game_events_seq_positive")),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_game_events_game_id_games")
        ),
        sa.PrimaryKeyConstraint("game_id", "seq", name=op.f("pk_game_events")),
    )
    op.create_table(
        "game_commands",
        sa.Column("game_id", sa.String(32), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False, autoincrement=False),
        sa.Column("command", sa.JSON(), nullable=False),
        sa.Column("created_at", _timestamp(), nullable=False),
        sa.CheckConstraint("seq >= 1", name=op.f("ck_game_commands_seq_positive")),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_game_commands_game_id_games")
        ),
        sa.PrimaryKeyConstraint("game_id", "seq", name=op.f("pk_game_commands")),
    )
    _create_append_only_guards()


def _create_append_only_guards() -> None:
    """Refuse UPDATE and DELETE on ledgers and logs in the database itself.

    The service functions never modify these rows; the triggers make sure a bug, a script or
    a hand-typed query cannot either, because replay and audits depend on it.
    """
    dialect = op.get_bind().dialect.name
    if dialect == "postgresql":
        op.execute(
            """
            CREATE FUNCTION vollmond_append_only() RETURNS trigger AS $$
            BEGIN
                RAISE EXCEPTION 'table % is append-only', TG_TABLE_NAME
                    USING ERRCODE = 'restrict_violation';
            END;
            $$ LANGUAGE plpgsql
            """
        )
        for table in APPEND_ONLY_TABLES:
            op.execute(
                f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
                "FOR EACH ROW EXECUTE FUNCTION vollmond_append_only()"
            )
    elif dialect == "sqlite":
        for table in APPEND_ONLY_TABLES:
            for action in ("UPDATE", "DELETE"):
                op.execute(
                    f"CREATE TRIGGER {table}_no_{action.lower()} BEFORE {action} ON {table} "
                    f"BEGIN SELECT RAISE(ABORT, 'table {table} is append-only'); END"
                )


def _drop_append_only_guards() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "postgresql":
        for table in APPEND_ONLY_TABLES:
            op.execute(f"DROP TRIGGER IF EXISTS {table}_append_only ON {table}")
        op.execute("DROP FUNCTION IF EXISTS vollmond_append_only()")
    elif dialect == "sqlite":
        for table in APPEND_ONLY_TABLES:
            for action in ("update", "delete"):
                op.execute(f"DROP TRIGGER IF EXISTS {table}_no_{action}")


def downgrade() -> None:
    _drop_append_only_guards()
    op.drop_table("game_commands")
    op.drop_table("game_events")
    for ledger in ("karma_ledger", "credit_ledger"):
        op.drop_index(op.f(f"ix_{ledger}_account_id"), table_name=ledger)
        op.drop_table(ledger)
    op.drop_index(op.f("ix_games_status"), table_name="games")
    op.drop_table("games")
    op.drop_index(op.f("ix_grants_account_id"), table_name="grants")
    op.drop_table("grants")
    op.drop_index(op.f("ix_premium_periods_account_id"), table_name="premium_periods")
    op.drop_table("premium_periods")
    op.drop_index(op.f("ix_phone_identities_account_id"), table_name="phone_identities")
    op.drop_table("phone_identities")
    op.drop_table("accounts")
