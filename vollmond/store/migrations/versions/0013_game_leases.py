"""Game ownership leases for several nodes (issue 15).

Revision ID: 0013_game_leases
Revises: 0012_conference_alarms
Create Date: 2026-12-02

- `game_leases`: one row per leased game — the owning node (NULL when free), a fencing epoch
  that only grows, when it was acquired and last renewed, and when it expires.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013_game_leases"
down_revision: str | Sequence[str] | None = "0012_conference_alarms"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLE = "game_leases"


def upgrade() -> None:
    op.create_table(
        TABLE,
        sa.Column("game_id", sa.String(32), nullable=False),
        sa.Column("owner", sa.String(64), nullable=True),
        sa.Column("epoch", sa.BigInteger(), nullable=False),
        sa.Column("acquired_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("renewed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], name=op.f(f"fk_{TABLE}_game_id_games")),
        sa.PrimaryKeyConstraint("game_id", name=op.f(f"pk_{TABLE}")),
    )
    op.create_index(op.f(f"ix_{TABLE}_owner"), TABLE, ["owner"])
    op.create_index(op.f(f"ix_{TABLE}_expires_at"), TABLE, ["expires_at"])


def downgrade() -> None:
    op.drop_index(op.f(f"ix_{TABLE}_expires_at"), table_name=TABLE)
    op.drop_index(op.f(f"ix_{TABLE}_owner"), table_name=TABLE)
    op.drop_table(TABLE)
