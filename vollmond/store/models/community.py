"""The mailbox (X3) and friends (X4): messages, friendships and blocks between people.

A person is an account or a phone-only identity, exactly one, as in the ledgers; each table
keeps the two sides as owner column pairs with the same one-owner check. `pair` (friendships)
and `pair` (blocks) are the two owners written as text (``a:12``, ``p:4711``), which makes a
pair unique whatever the owners' kinds.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, CheckConstraint, ForeignKey, Integer, LargeBinary, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from vollmond.store.models.base import Base
from vollmond.store.types import BigId, UTCDateTime, utcnow


def _one(prefix: str) -> str:
    return f"({prefix}_account_id IS NULL) <> ({prefix}_phone_id IS NULL)"


class MailRow(Base):
    """One message in a mailbox: a text from the web or a voice message from the phone.

    A voice message's audio is a file under the data directory, encrypted with a key of its
    own; the key is kept here wrapped by the mailbox's service key (`voice_key`, `voice_nonce`).
    """

    __tablename__ = "mail_messages"
    __table_args__ = (
        CheckConstraint(_one("to"), name="one_recipient"),
        CheckConstraint(_one("from"), name="one_sender"),
        CheckConstraint("kind IN ('text', 'voice')", name="known_kind"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    to_account_id: Mapped[int | None] = mapped_column(BigId, ForeignKey("accounts.id"), index=True)
    to_phone_id: Mapped[int | None] = mapped_column(
        BigId, ForeignKey("phone_identities.id"), index=True
    )
    from_account_id: Mapped[int | None] = mapped_column(BigId, ForeignKey("accounts.id"))
    from_phone_id: Mapped[int | None] = mapped_column(BigId, ForeignKey("phone_identities.id"))
    kind: Mapped[str] = mapped_column(String(8))
    body: Mapped[str | None] = mapped_column(Text)
    voice_file: Mapped[str | None] = mapped_column(String(64))
    voice_key: Mapped[bytes | None] = mapped_column(LargeBinary)
    voice_nonce: Mapped[bytes | None] = mapped_column(LargeBinary)
    duration_ms: Mapped[int] = mapped_column(Integer, default=0)
    size_bytes: Mapped[int] = mapped_column(Integer, default=0)
    reply_to: Mapped[int | None] = mapped_column(BigId)
    kept: Mapped[bool] = mapped_column(Boolean, default=False)
    read_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, index=True)


class FriendshipRow(Base):
    """A friendship asked by `from_*` of `to_*`; `accepted_at` is set once the other accepts."""

    __tablename__ = "friendships"
    __table_args__ = (
        CheckConstraint(_one("to"), name="one_addressee"),
        CheckConstraint(_one("from"), name="one_requester"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    pair: Mapped[str] = mapped_column(String(48), unique=True)
    from_account_id: Mapped[int | None] = mapped_column(
        BigId, ForeignKey("accounts.id"), index=True
    )
    from_phone_id: Mapped[int | None] = mapped_column(
        BigId, ForeignKey("phone_identities.id"), index=True
    )
    to_account_id: Mapped[int | None] = mapped_column(BigId, ForeignKey("accounts.id"), index=True)
    to_phone_id: Mapped[int | None] = mapped_column(
        BigId, ForeignKey("phone_identities.id"), index=True
    )
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    accepted_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class BlockRow(Base):
    """`from_*` blocked `to_*`: no friendship, no messages, no invitations from them."""

    __tablename__ = "blocks"
    __table_args__ = (
        CheckConstraint(_one("to"), name="one_blocked"),
        CheckConstraint(_one("from"), name="one_blocker"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    pair: Mapped[str] = mapped_column(String(48), unique=True)
    from_account_id: Mapped[int | None] = mapped_column(
        BigId, ForeignKey("accounts.id"), index=True
    )
    from_phone_id: Mapped[int | None] = mapped_column(
        BigId, ForeignKey("phone_identities.id"), index=True
    )
    to_account_id: Mapped[int | None] = mapped_column(BigId, ForeignKey("accounts.id"))
    to_phone_id: Mapped[int | None] = mapped_column(BigId, ForeignKey("phone_identities.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
