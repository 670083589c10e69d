"""Append-only ledgers: every change of credit or karma is a row with its reason.

A row belongs to an account or to a phone identity (issue 10: phone-only players have ledgers
of their own, merged into the account once when the identity is linked)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, CheckConstraint, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from vollmond.store.models.base import Base
from vollmond.store.types import BigId, UTCDateTime, utcnow

ONE_OWNER = "(account_id IS NULL) <> (phone_identity_id IS NULL)"
"""A row belongs to an account or to a phone-only identity, never both, never neither."""


class CreditEntryRow(Base):
    """One credit booking; `balance_after` lets an audit replay the ledger row by row."""

    __tablename__ = "credit_ledger"
    __table_args__ = (
        CheckConstraint("amount <> 0", name="amount_not_zero"),
        CheckConstraint("balance_after >= 0", name="balance_not_negative"),
        CheckConstraint(ONE_OWNER, name="one_owner"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    account_id: Mapped[int | None] = mapped_column(BigId, ForeignKey("accounts.id"), index=True)
    phone_identity_id: Mapped[int | None] = mapped_column(
        BigId, ForeignKey("phone_identities.id"), index=True
    )
    amount: Mapped[int] = mapped_column(BigInteger)
    balance_after: Mapped[int] = mapped_column(BigInteger)
    reason: Mapped[str] = mapped_column(String(200))
    game_id: Mapped[str | None] = mapped_column(String(32), ForeignKey("games.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class KarmaEntryRow(Base):
    """One karma change; karma may go negative, that is what it is for."""

    __tablename__ = "karma_ledger"
    __table_args__ = (
        CheckConstraint("amount <> 0", name="amount_not_zero"),
        CheckConstraint(ONE_OWNER, name="one_owner"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    account_id: Mapped[int | None] = mapped_column(BigId, ForeignKey("accounts.id"), index=True)
    phone_identity_id: Mapped[int | None] = mapped_column(
        BigId, ForeignKey("phone_identities.id"), index=True
    )
    amount: Mapped[int] = mapped_column(Integer)
    reason: Mapped[str] = mapped_column(String(200))
    game_id: Mapped[str | None] = mapped_column(String(32), ForeignKey("games.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
