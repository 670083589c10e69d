"""Seats at a table: who joined a game, by which channel, and their house number.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "game_seats",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            primary_key=True,
            autoincrement=True,
        ),
        sa.Column("game_id", sa.String(32), nullable=False),
        sa.Column("account_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite")),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("channel", sa.String(16), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("house", sa.Integer(), nullable=True),
        sa.Column("joined_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_game_seats_game_id_games")
        ),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_game_seats_account_id_accounts")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_game_seats")),
        sa.UniqueConstraint("game_id", "token_hash", name=op.f("uq_game_seats_token_unique")),
        sa.UniqueConstraint("game_id", "house", name=op.f("uq_game_seats_house_unique")),
    )
    op.create_index(op.f("ix_game_seats_game_id"), "game_seats", ["game_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_game_seats_game_id"), table_name="game_seats")
    op.drop_table("game_seats")
