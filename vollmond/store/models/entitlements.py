"""What an account is allowed beyond the free defaults: premium periods and personal grants."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import CheckConstraint, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from vollmond.store.models.base import Base
from vollmond.store.models.ledgers import ONE_OWNER
from vollmond.store.types import BigId, UTCDateTime, utcnow


class PremiumRow(Base):
    """One premium period; periods are only added, so the history shows who got what and why."""

    __tablename__ = "premium_periods"
    __table_args__ = (CheckConstraint(ONE_OWNER, name="one_owner"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    account_id: Mapped[int | None] = mapped_column(BigId, ForeignKey("accounts.id"), index=True)
    phone_identity_id: Mapped[int | None] = mapped_column(
        BigId, ForeignKey("phone_identities.id"), index=True
    )
    starts_at: Mapped[datetime] = mapped_column(UTCDateTime)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    reason: Mapped[str] = mapped_column(String(200))
    granted_by: Mapped[int | None] = mapped_column(BigId, ForeignKey("accounts.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class GrantRow(Base):
    """A named permission given to one person (e.g. larger private rounds), optionally bounded.

    `value` carries the grant's size where it has one (such as a seat limit) so that new kinds
    of grant need no migration.
    """

    __tablename__ = "grants"
    __table_args__ = (CheckConstraint(ONE_OWNER, name="one_owner"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    account_id: Mapped[int | None] = mapped_column(BigId, ForeignKey("accounts.id"), index=True)
    phone_identity_id: Mapped[int | None] = mapped_column(
        BigId, ForeignKey("phone_identities.id"), index=True
    )
    name: Mapped[str] = mapped_column(String(64))
    value: Mapped[int | None] = mapped_column(Integer)
    reason: Mapped[str] = mapped_column(String(200))
    granted_by: Mapped[int | None] = mapped_column(BigId, ForeignKey("accounts.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
