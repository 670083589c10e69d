"""Game ownership leases: which node runs a game, and until when (issue 15)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from vollmond.store.models.base import Base
from vollmond.store.types import UTCDateTime


class GameLeaseRow(Base):
    """One row per game that was ever leased; `owner` is NULL while the lease is free.

    `epoch` grows by one whenever the game changes hands (acquired while free or expired, taken
    over), never on a renewal, and never goes back: a fencing token a node can attach to what it
    writes for the game, so that a node that lost its lease is recognised as stale.
    """

    __tablename__ = "game_leases"

    game_id: Mapped[str] = mapped_column(String(32), ForeignKey("games.id"), primary_key=True)
    owner: Mapped[str | None] = mapped_column(String(64), index=True)
    epoch: Mapped[int] = mapped_column(BigInteger)
    acquired_at: Mapped[datetime] = mapped_column(UTCDateTime)
    renewed_at: Mapped[datetime] = mapped_column(UTCDateTime)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
