"""Guest seat codes are kept in the store (issue 11): they survive a restart of the service.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01

Until this revision the codes lived in one node's memory only; nothing is carried over (a
guest seated before the upgrade has no code to call back with, as after any restart before).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    big_id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
    op.create_table(
        "seat_codes",
        sa.Column("code_hash", sa.String(64), nullable=False),
        sa.Column("seat_id", big_id, nullable=False),
        sa.Column("game_id", sa.String(32), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["seat_id"],
            ["game_seats.id"],
            name=op.f("fk_seat_codes_seat_id_game_seats"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_seat_codes_game_id_games")
        ),
        sa.PrimaryKeyConstraint("code_hash", name=op.f("pk_seat_codes")),
        sa.UniqueConstraint("seat_id", name=op.f("uq_seat_codes_seat_id")),
    )
    op.create_index(op.f("ix_seat_codes_game_id"), "seat_codes", ["game_id"], unique=False)
    op.create_index(op.f("ix_seat_codes_expires_at"), "seat_codes", ["expires_at"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_seat_codes_expires_at"), table_name="seat_codes")
    op.drop_index(op.f("ix_seat_codes_game_id"), table_name="seat_codes")
    op.drop_table("seat_codes")
