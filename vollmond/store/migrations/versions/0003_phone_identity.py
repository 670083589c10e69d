"""Phone identities: verified numbers, PIN lockouts, non-sequential phone IDs (issue 8).

Numbers stored before this revision were never proven (anyone could link any number, and a
caller's From number was stored as is), so they are dropped: a number comes back only through
the new verification (docs/security.md "Telephone identity"). Identities and their IDs stay;
an identity may now have neither number nor PIN (an account's shell until it gets one).

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _big_id() -> sa.types.TypeEngine[int]:
    return sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _timestamp() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    with op.batch_alter_table("phone_identities") as batch:
        batch.drop_constraint(op.f("ck_phone_identities_number_or_pin"), type_="check")
        batch.add_column(sa.Column("number_verified_at", _timestamp(), nullable=True))
        batch.add_column(
            sa.Column("number_asserted", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch.add_column(
            sa.Column("pin_failures", sa.Integer(), nullable=False, server_default="0")
        )
        batch.add_column(sa.Column("lockouts", sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(sa.Column("locked_until", _timestamp(), nullable=True))
    op.execute("UPDATE phone_identities SET number = NULL")
    op.create_table(
        "phone_number_claims",
        sa.Column("id", _big_id(), primary_key=True, autoincrement=True),
        sa.Column("account_id", _big_id(), nullable=False),
        sa.Column("number", sa.String(32), nullable=False),
        sa.Column("code_hash", sa.String(255), nullable=False),
        sa.Column("created_at", _timestamp(), nullable=False),
        sa.Column("expires_at", _timestamp(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("verified_at", _timestamp(), nullable=True),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name=op.f("fk_phone_number_claims_account_id_accounts"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_phone_number_claims")),
    )
    op.create_index(
        op.f("ix_phone_number_claims_account_id"),
        "phone_number_claims",
        ["account_id"],
        unique=False,
    )
    op.create_index(
        op.f("ix_phone_number_claims_number"), "phone_number_claims", ["number"], unique=False
    )
    op.create_table(
        "phone_pin_failures",
        sa.Column("id", _big_id(), primary_key=True, autoincrement=True),
        sa.Column("source", sa.String(128), nullable=False),
        sa.Column("at", _timestamp(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_phone_pin_failures")),
    )
    op.create_index(
        "ix_phone_pin_failures_source_at", "phone_pin_failures", ["source", "at"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_phone_pin_failures_source_at", table_name="phone_pin_failures")
    op.drop_table("phone_pin_failures")
    op.drop_index(op.f("ix_phone_number_claims_number"), table_name="phone_number_claims")
    op.drop_index(op.f("ix_phone_number_claims_account_id"), table_name="phone_number_claims")
    op.drop_table("phone_number_claims")
    # Identities with neither number nor PIN cannot exist before this revision.
    op.execute("DELETE FROM phone_identities WHERE number IS NULL AND pin_hash IS NULL")
    with op.batch_alter_table("phone_identities") as batch:
        batch.drop_column("locked_until")
        batch.drop_column("lockouts")
        batch.drop_column("pin_failures")
        batch.drop_column("number_asserted")
        batch.drop_column("number_verified_at")
        batch.create_check_constraint(
            op.f("ck_phone_identities_number_or_pin"), "number IS NOT NULL OR pin_hash IS NOT NULL"
        )
