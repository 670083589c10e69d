"""Games and their two append-only logs: events (what happened) and commands (what was asked).

The event log is the source of truth a restarted actor rebuilds from; the command log lets a
game be replayed through the engine to check it still produces the same events.
"""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, CheckConstraint, Enum, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from vollmond.store.models.base import Base
from vollmond.store.types import BigId, JSONColumn, UTCDateTime, utcnow


class GameStatus(enum.StrEnum):
    """Life cycle of a game; only `lobby` and `running` games are resumed after a restart."""

    LOBBY = "lobby"
    RUNNING = "running"
    FINISHED = "finished"
    ABORTED = "aborted"


GAME_STATUS_ENUM = Enum(
    GameStatus,
    name="game_status",
    native_enum=False,
    create_constraint=False,
    length=16,
    values_callable=lambda statuses: [status.value for status in statuses],
    validate_strings=True,
)


class GameRow(Base):
    """A game; private rounds store only a hash of their invitation code."""

    __tablename__ = "games"
    __table_args__ = (
        CheckConstraint(
            "status IN ('lobby', 'running', 'finished', 'aborted')", name="status_known"
        ),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    world: Mapped[str] = mapped_column(String(64))
    ruleset: Mapped[str] = mapped_column(String(32), server_default="standard")
    options: Mapped[dict[str, Any]] = mapped_column(JSONColumn)
    seed: Mapped[int] = mapped_column(BigInteger)
    status: Mapped[GameStatus] = mapped_column(GAME_STATUS_ENUM, index=True)
    invitation_hash: Mapped[str | None] = mapped_column(String(64), unique=True)
    host_account_id: Mapped[int | None] = mapped_column(BigId, ForeignKey("accounts.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class GameEventRow(Base):
    """One engine event; the primary key (game_id, seq) is what makes duplicates impossible."""

    __tablename__ = "game_events"
    __table_args__ = (CheckConstraint("seq >= 1", name="seq_positive"),)

    game_id: Mapped[str] = mapped_column(String(32), ForeignKey("games.id"), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    kind: Mapped[str] = mapped_column(String(64))
    payload: Mapped[Any] = mapped_column(JSONColumn)
    audience: Mapped[Any] = mapped_column(JSONColumn)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


CID_LENGTH = 48
"""Room for a seat's client id of a command: `<seat>:<cid>` (protocol.py bounds the cid)."""


class GameCommandRow(Base):
    """One accepted command, in the order the actor applied it.

    `cid` is the client's id for a command (scoped to its seat, e.g. ``"3:k2f9"``): a client
    that lost the acknowledgement retries with the same cid and is answered from here, so the
    command is never applied twice, also across a restart (docs/protocol.md).
    """

    __tablename__ = "game_commands"
    __table_args__ = (
        CheckConstraint("seq >= 1", name="seq_positive"),
        Index("uq_game_commands_game_id_cid", "game_id", "cid", unique=True),
    )

    game_id: Mapped[str] = mapped_column(String(32), ForeignKey("games.id"), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    command: Mapped[Any] = mapped_column(JSONColumn)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    cid: Mapped[str | None] = mapped_column(String(CID_LENGTH))
