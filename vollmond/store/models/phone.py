"""Telephone identities, the pending proofs that a number belongs to an account, and the log
of wrong PINs per source (docs/security.md "Telephone identity")."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Boolean, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from vollmond.store.models.base import Base
from vollmond.store.types import BigId, UTCDateTime, utcnow


class PhoneIdentityRow(Base):
    """How a caller is recognised: a phone ID (random for new identities), a PIN, and at most
    one caller number whose ownership was verified (`number` is never set unverified).

    The lockout state lives here so it outlasts the call and a restart of the service."""

    __tablename__ = "phone_identities"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    number: Mapped[str | None] = mapped_column(String(32), unique=True)
    # When the number was verified, and whether through a trusted proxy's asserted identity
    # (only such a number may sign in without the PIN).
    number_verified_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    number_asserted: Mapped[bool] = mapped_column(Boolean, default=False)
    pin_hash: Mapped[str | None] = mapped_column(String(255))
    account_id: Mapped[int | None] = mapped_column(BigId, ForeignKey("accounts.id"), index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # Wrong PINs since the last correct one or the last lockout; lockouts since the last
    # correct PIN (each lasts longer); the end of the current lockout.
    pin_failures: Mapped[int] = mapped_column(Integer, default=0)
    lockouts: Mapped[int] = mapped_column(Integer, default=0)
    locked_until: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # Expert mode (``*7#``): the caller hears only the essentials. A preference of the
    # identity, so it outlasts the call and a restart (issue 11).
    expert: Mapped[bool] = mapped_column(Boolean, default=False)
    # The credit of a phone-only identity (issue 10), kept like the account's: changed only by
    # the ledger's conditional UPDATE, never below zero.
    credit_balance: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")


class PhoneNumberClaimRow(Base):
    """An account asked to link a number: the one-time code (hashed) the caller must type when
    calling from that number. Rows stay after use so link requests can be counted per account."""

    __tablename__ = "phone_number_claims"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    account_id: Mapped[int] = mapped_column(BigId, ForeignKey("accounts.id"), index=True)
    number: Mapped[str] = mapped_column(String(32), index=True)
    code_hash: Mapped[str] = mapped_column(String(255))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    verified_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class PhonePinFailureRow(Base):
    """One wrong PIN from a source (signalling address, or a trusted proxy's asserted number),
    whatever phone ID it was for: the per-source limit counts these within a window."""

    __tablename__ = "phone_pin_failures"
    __table_args__ = (Index("ix_phone_pin_failures_source_at", "source", "at"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    source: Mapped[str] = mapped_column(String(128))
    at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
