"""Games name their rule set (issue 14): the runtime builds each game through the registry.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01

Every game stored before this revision was played by the standard rules, so the column is
filled with 'standard' and keeps that as its server default.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.add_column(
            sa.Column("ruleset", sa.String(length=32), nullable=False, server_default="standard")
        )


def downgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.drop_column("ruleset")
