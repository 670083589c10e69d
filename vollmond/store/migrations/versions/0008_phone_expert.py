"""Expert mode is a setting of the phone identity (issue 11): ``*7#`` survives the call.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01

Until this revision the choice lived in one node's memory only, so nothing is carried over:
every identity starts in the normal mode, which is also the server default.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("phone_identities") as batch:
        batch.add_column(
            sa.Column("expert", sa.Boolean(), nullable=False, server_default=sa.false())
        )


def downgrade() -> None:
    with op.batch_alter_table("phone_identities") as batch:
        batch.drop_column("expert")
