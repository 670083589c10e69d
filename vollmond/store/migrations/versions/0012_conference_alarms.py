"""Operator calls from conference rooms (X2, O1): an alarm names a game or a room.

Revision ID: 0012_conference_alarms
Revises: 0011_mailbox_friends
Create Date: 2026-12-02

- `moderation_alarms.game_id` becomes nullable and `conference` (the room's id, e.g.
  ``public-werwolf``) is added; exactly one of the two is set
  (`ck_moderation_alarms_game_or_conference`). Every alarm stored before names its game, so
  the check holds for old rows.

On SQLite the table is rebuilt (a column's NOT NULL cannot be dropped in place).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012_conference_alarms"
down_revision: str | Sequence[str] | None = "0011_mailbox_friends"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLE = "moderation_alarms"
GAME_OR_CONFERENCE = "(game_id IS NULL) <> (conference IS NULL)"


def upgrade() -> None:
    with op.batch_alter_table(TABLE) as batch:
        batch.add_column(sa.Column("conference", sa.String(64), nullable=True))
        batch.alter_column("game_id", existing_type=sa.String(32), nullable=True)
        batch.create_check_constraint(op.f(f"ck_{TABLE}_game_or_conference"), GAME_OR_CONFERENCE)


def downgrade() -> None:
    """Back to game alarms only: a conference room's alarms cannot be kept (no game)."""
    rooms = f"SELECT id FROM {TABLE} WHERE conference IS NOT NULL"
    for referring in ("moderation_sanctions", "moderation_recordings"):
        op.execute(f"UPDATE {referring} SET alarm_id = NULL WHERE alarm_id IN ({rooms})")
    op.execute(f"DELETE FROM {TABLE} WHERE conference IS NOT NULL")
    with op.batch_alter_table(TABLE) as batch:
        batch.drop_constraint(op.f(f"ck_{TABLE}_game_or_conference"), type_="check")
        batch.drop_column("conference")
        batch.alter_column("game_id", existing_type=sa.String(32), nullable=False)
