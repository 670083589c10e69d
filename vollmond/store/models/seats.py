"""Who sits where: the lobby's seats and, once a game runs, its house numbers (W2)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from vollmond.store.models.base import Base
from vollmond.store.types import BigId, UTCDateTime, utcnow


class SeatRow(Base):
    """A place at a table. `house` is set when the game starts and never changes after."""

    __tablename__ = "game_seats"
    __table_args__ = (
        UniqueConstraint("game_id", "token_hash", name="uq_game_seats_token_unique"),
        UniqueConstraint("game_id", "house", name="uq_game_seats_house_unique"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    game_id: Mapped[str] = mapped_column(String(32), ForeignKey("games.id"), index=True)
    account_id: Mapped[int | None] = mapped_column(BigId, ForeignKey("accounts.id"))
    # The phone identity the seat was taken with (a caller signed in by phone ID and PIN):
    # karma of a seat without an account is booked to it (issue 10).
    phone_identity_id: Mapped[int | None] = mapped_column(BigId, ForeignKey("phone_identities.id"))
    name: Mapped[str] = mapped_column(String(64))
    channel: Mapped[str] = mapped_column(String(16))
    token_hash: Mapped[str] = mapped_column(String(64))
    house: Mapped[int | None] = mapped_column(Integer)
    joined_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class SeatCodeRow(Base):
    """A guest's seat code (said once on the telephone), kept as its HMAC: calling back, the
    code gives the seat again until `expires_at`. It goes with its seat (a guest who leaves
    the table) and is useless once its game is over."""

    __tablename__ = "seat_codes"

    code_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    seat_id: Mapped[int] = mapped_column(
        BigId, ForeignKey("game_seats.id", ondelete="CASCADE"), unique=True
    )
    game_id: Mapped[str] = mapped_column(String(32), ForeignKey("games.id"), index=True)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
