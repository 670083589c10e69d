"""People: web accounts (their telephone identities are in :mod:`.phone`)."""

from __future__ import annotations

import enum
from datetime import datetime

from sqlalchemy import BigInteger, CheckConstraint, Enum, ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from vollmond.store.models.base import Base
from vollmond.store.types import BigId, UTCDateTime, utcnow


class Role(enum.StrEnum):
    """What an account may do beyond playing; ordered from least to most privileged."""

    PLAYER = "player"
    MODERATOR = "moderator"
    ADMIN = "admin"


ROLE_ENUM = Enum(
    Role,
    name="role",
    native_enum=False,
    create_constraint=False,
    length=16,
    values_callable=lambda roles: [role.value for role in roles],
    validate_strings=True,
)


class AccountRow(Base):
    """A web account; `name_key` (case-folded name) is unique so "Anna" cannot pose as "anna"."""

    __tablename__ = "accounts"
    __table_args__ = (
        CheckConstraint("credit_balance >= 0", name="credit_not_negative"),
        CheckConstraint("role IN ('player', 'moderator', 'admin')", name="role_known"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(64))
    name_key: Mapped[str] = mapped_column(String(64), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    role: Mapped[Role] = mapped_column(ROLE_ENUM, default=Role.PLAYER)
    # Denormalised sum of the credit ledger, kept so that "never negative" is one conditional
    # UPDATE (a row lock on PostgreSQL, the write lock on SQLite) instead of a racy SUM.
    credit_balance: Mapped[int] = mapped_column(BigInteger, default=0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class WebSessionRow(Base):
    """A browser sign-in the server can end: logout and rotation delete the row.

    Only a SHA-256 of the session id is kept (the id is 256 random bits, so a plain hash is
    enough): a copy of this table does not sign anybody in.
    """

    __tablename__ = "web_sessions"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    account_id: Mapped[int] = mapped_column(BigId, ForeignKey("accounts.id"), index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
