"""Phone-only identities keep ledgers of their own (issue 10).

Revision ID: 0010_phone_ledgers
Revises: 0009 (seat codes)
Create Date: 2026-12-01

- `karma_ledger`, `credit_ledger`, `premium_periods`, `grants`: a row belongs to an account or
  to a phone identity, exactly one (`ck_<table>_one_owner`); `account_id` becomes nullable and
  `phone_identity_id` is added. Every row stored before belongs to an account, so the check
  holds for old rows.
- `phone_identities.credit_balance`: the phone side's running credit balance, changed by the
  same conditional UPDATE as the account's (never below zero).
- `game_seats.phone_identity_id`: the phone identity a seat was taken with, so a finished game
  books karma for a phone-only player (a seat with an account keeps booking to the account).

On SQLite the ledger tables are rebuilt (a column's NOT NULL cannot be dropped in place),
which drops their append-only triggers; they are created again right after. On PostgreSQL the
tables are altered in place and the triggers stay.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010_phone_ledgers"
down_revision: str | Sequence[str] | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

LEDGERS = ("karma_ledger", "credit_ledger")
OWNED = (*LEDGERS, "premium_periods", "grants")
ONE_OWNER = "(account_id IS NULL) <> (phone_identity_id IS NULL)"
BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _sqlite() -> bool:
    return op.get_bind().dialect.name == "sqlite"


def _sqlite_guards(create: bool) -> None:
    """The SQLite append-only triggers of migration 0001 (a table rebuild drops them)."""
    for table in LEDGERS:
        for action in ("UPDATE", "DELETE"):
            name = f"{table}_no_{action.lower()}"
            op.execute(
                f"CREATE TRIGGER {name} BEFORE {action} ON {table} "
                f"BEGIN SELECT RAISE(ABORT, 'table {table} is append-only'); END"
                if create
                else f"DROP TRIGGER IF EXISTS {name}"
            )


def upgrade() -> None:
    sqlite = _sqlite()
    if sqlite:
        _sqlite_guards(create=False)
    for table in OWNED:
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("phone_identity_id", BIG_ID, nullable=True))
            batch.alter_column("account_id", existing_type=BIG_ID, nullable=True)
            batch.create_foreign_key(
                op.f(f"fk_{table}_phone_identity_id_phone_identities"),
                "phone_identities",
                ["phone_identity_id"],
                ["id"],
            )
            batch.create_check_constraint(op.f(f"ck_{table}_one_owner"), ONE_OWNER)
        op.create_index(
            op.f(f"ix_{table}_phone_identity_id"), table, ["phone_identity_id"], unique=False
        )
    if sqlite:
        _sqlite_guards(create=True)
    with op.batch_alter_table("phone_identities") as batch:
        batch.add_column(
            sa.Column("credit_balance", sa.BigInteger(), nullable=False, server_default="0")
        )
    with op.batch_alter_table("game_seats") as batch:
        batch.add_column(sa.Column("phone_identity_id", BIG_ID, nullable=True))
        batch.create_foreign_key(
            op.f("fk_game_seats_phone_identity_id_phone_identities"),
            "phone_identities",
            ["phone_identity_id"],
            ["id"],
        )


def downgrade() -> None:
    """Back to accounts only: the phone side's rows cannot be kept (they have no account)."""
    with op.batch_alter_table("game_seats") as batch:
        batch.drop_constraint(
            op.f("fk_game_seats_phone_identity_id_phone_identities"), type_="foreignkey"
        )
        batch.drop_column("phone_identity_id")
    with op.batch_alter_table("phone_identities") as batch:
        batch.drop_column("credit_balance")
    sqlite = _sqlite()
    _drop_phone_rows(sqlite)
    for table in OWNED:
        op.drop_index(op.f(f"ix_{table}_phone_identity_id"), table_name=table)
        with op.batch_alter_table(table) as batch:
            batch.drop_constraint(op.f(f"ck_{table}_one_owner"), type_="check")
            batch.drop_constraint(
                op.f(f"fk_{table}_phone_identity_id_phone_identities"), type_="foreignkey"
            )
            batch.drop_column("phone_identity_id")
            batch.alter_column("account_id", existing_type=BIG_ID, nullable=False)
    if sqlite:
        _sqlite_guards(create=True)


def _drop_phone_rows(sqlite: bool) -> None:
    """The ledgers' phone rows go with the downgrade; the guards step aside for it."""
    if sqlite:
        _sqlite_guards(create=False)
    else:
        for table in LEDGERS:
            op.execute(f"ALTER TABLE {table} DISABLE TRIGGER {table}_append_only")
    for table in OWNED:
        op.execute(f"DELETE FROM {table} WHERE phone_identity_id IS NOT NULL")
    if not sqlite:
        for table in LEDGERS:
            op.execute(f"ALTER TABLE {table} ENABLE TRIGGER {table}_append_only")
