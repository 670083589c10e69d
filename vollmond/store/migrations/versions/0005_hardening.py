"""Invitation codes as HMAC, command client ids (issue 8).

- `game_commands.cid`: the client's id of a command (scoped to its seat), unique per game, so a
  command retried after a lost acknowledgement is answered from the log instead of applied
  twice — also after a restart. A plain nullable column and a unique index: both backends add
  them in place, so the append-only triggers of the table stay as they are.
- Invitation codes are stored as an HMAC with the service key from now on. A hash cannot be
  turned into another hash without the code, so rows stored before stay as bare SHA-256:
  rounds that are still open keep working (the lookup falls back to SHA-256 and rehashes the
  row the first time its code is used, `store/games.py`); ended rounds' codes are of no use any
  more, so their hashes are replaced by a random marker that still marks the round private but
  leaves nothing to brute-force in a copy of the database.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

RETIRED_PREFIX = "retired:"  # not hex: never equal to a SHA-256 or HMAC digest
CID_LENGTH = 48


def upgrade() -> None:
    op.add_column("game_commands", sa.Column("cid", sa.String(CID_LENGTH), nullable=True))
    op.create_index(
        "uq_game_commands_game_id_cid", "game_commands", ["game_id", "cid"], unique=True
    )
    games = sa.table(
        "games",
        sa.column("id", sa.String),
        sa.column("status", sa.String),
        sa.column("invitation_hash", sa.String),
    )
    connection = op.get_bind()
    ended = connection.execute(
        sa.select(games.c.id).where(
            games.c.invitation_hash.is_not(None), games.c.status.in_(("finished", "aborted"))
        )
    ).scalars()
    for game_id in list(ended):
        retired = RETIRED_PREFIX + secrets.token_hex(28)
        connection.execute(
            games.update().where(games.c.id == game_id).values(invitation_hash=retired)
        )


def downgrade() -> None:
    # Retired and HMAC hashes stay: without the codes there is nothing to turn them back into.
    op.drop_index("uq_game_commands_game_id_cid", table_name="game_commands")
    op.drop_column("game_commands", "cid")  # in place (SQLite >= 3.35): triggers stay
