"""The mailbox (X3) and friends (X4) in the store: messages, friendships and blocks.

Each side is an :class:`~vollmond.store.owners.Owner` (an account or a phone-only identity).
The service resolves a phone identity linked to an account to that account before it writes
(:func:`person_of`); a person's own rows are read by all their addresses (:func:`addresses_of`:
the account and every phone identity linked to it), so messages and friendships a phone ID
had before it was linked stay with the person afterwards.

Nothing here checks limits or bans: that is the service's business (vollmond/service/mailbox.py,
vollmond/service/friends.py); this module only keeps the rows consistent (one owner per
side, one friendship or block per pair).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, delete, func, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from vollmond.store.db import Sessions
from vollmond.store.errors import StoreError
from vollmond.store.models import BlockRow, FriendshipRow, MailRow, PhoneIdentityRow
from vollmond.store.owners import Owner, row_owner
from vollmond.store.types import utcnow


class MailNotFoundError(StoreError, LookupError):
    """No such message in this mailbox (never says whether it is in another one)."""

    def __init__(self, mail_id: int) -> None:
        super().__init__(f"message {mail_id} is not in this mailbox")
        self.mail_id = mail_id


class FriendshipConflictError(StoreError):
    """A friendship request that cannot be made as asked; `code` names why."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


def owner_key(owner: Owner) -> str:
    """An owner as text: ``a:<account id>`` or ``p:<phone id>``."""
    return f"p:{owner.phone_id}" if owner.phone_id is not None else f"a:{owner.account_id}"


def _columns(prefix: str, owner: Owner) -> dict[str, int | None]:
    return {f"{prefix}_account_id": owner.account_id, f"{prefix}_phone_id": owner.phone_id}


def _owner(row: Any, prefix: str) -> Owner:
    return row_owner(getattr(row, f"{prefix}_account_id"), getattr(row, f"{prefix}_phone_id"))


@dataclass(frozen=True, slots=True)
class Addresses:
    """Everything that is one person: their owner and the phone identities linked to it."""

    owner: Owner
    phones: tuple[int, ...] = ()

    def match(self, model: Any, prefix: str) -> ColumnElement[bool]:
        account = getattr(model, f"{prefix}_account_id")
        phone = getattr(model, f"{prefix}_phone_id")
        if self.owner.account_id is None:
            return phone == self.owner.phone_id  # type: ignore[no-any-return]
        if not self.phones:
            return account == self.owner.account_id  # type: ignore[no-any-return]
        return or_(account == self.owner.account_id, phone.in_(self.phones))

    def has(self, owner: Owner) -> bool:
        return owner == self.owner or (owner.phone_id is not None and owner.phone_id in self.phones)


async def person_of(session: AsyncSession, owner: Owner) -> Owner:
    """The person behind `owner`: a phone identity linked to an account is that account."""
    if owner.phone_id is None:
        return owner
    account = await session.scalar(
        select(PhoneIdentityRow.account_id).where(PhoneIdentityRow.id == owner.phone_id)
    )
    return Owner.account(account) if account is not None else owner


async def addresses_of(session: AsyncSession, owner: Owner) -> Addresses:
    person = await person_of(session, owner)
    if person.account_id is None:
        return Addresses(person)
    phones = await session.scalars(
        select(PhoneIdentityRow.id).where(PhoneIdentityRow.account_id == person.account_id)
    )
    return Addresses(person, tuple(sorted(phones)))


# -- the mailbox ---------------------------------------------------------------------------------
class MailKind(enum.StrEnum):
    TEXT = "text"
    VOICE = "voice"


@dataclass(frozen=True, slots=True)
class VoiceFile:
    """Where a voice message's sealed audio lies and its wrapped key."""

    name: str
    key: bytes
    nonce: bytes


@dataclass(frozen=True, slots=True)
class Mail:
    id: int
    recipient: Owner
    sender: Owner
    kind: MailKind
    body: str | None
    voice: VoiceFile | None
    duration_ms: int
    size_bytes: int
    reply_to: int | None
    kept: bool
    read_at: datetime | None
    created_at: datetime

    @property
    def unread(self) -> bool:
        return self.read_at is None


def _mail(row: MailRow) -> Mail:
    voice = None
    if row.voice_file is not None and row.voice_key is not None and row.voice_nonce is not None:
        voice = VoiceFile(row.voice_file, bytes(row.voice_key), bytes(row.voice_nonce))
    return Mail(
        id=row.id,
        recipient=_owner(row, "to"),
        sender=_owner(row, "from"),
        kind=MailKind(row.kind),
        body=row.body,
        voice=voice,
        duration_ms=row.duration_ms,
        size_bytes=row.size_bytes,
        reply_to=row.reply_to,
        kept=bool(row.kept),
        read_at=row.read_at,
        created_at=row.created_at,
    )


async def add_mail(
    sessions: Sessions,
    recipient: Owner,
    sender: Owner,
    *,
    body: str | None = None,
    voice: VoiceFile | None = None,
    duration_ms: int = 0,
    size_bytes: int = 0,
    reply_to: int | None = None,
    now: datetime | None = None,
) -> Mail:
    """Put one message into `recipient`'s mailbox (a text `body` or a `voice` file)."""
    if (body is None) == (voice is None):
        raise ValueError("a message is a text or a voice message, exactly one")
    row = MailRow(
        **_columns("to", recipient),
        **_columns("from", sender),
        kind=MailKind.TEXT if body is not None else MailKind.VOICE,
        body=body,
        voice_file=voice.name if voice else None,
        voice_key=voice.key if voice else None,
        voice_nonce=voice.nonce if voice else None,
        duration_ms=duration_ms,
        size_bytes=size_bytes,
        reply_to=reply_to,
        kept=False,
        created_at=now or utcnow(),
    )
    async with sessions.begin() as session:
        session.add(row)
    return _mail(row)


async def list_mail(sessions: Sessions, owner: Owner, *, limit: int = 200) -> list[Mail]:
    """`owner`'s mailbox, newest first."""
    async with sessions() as session:
        mine = await addresses_of(session, owner)
        rows = await session.scalars(
            select(MailRow)
            .where(mine.match(MailRow, "to"))
            .order_by(MailRow.created_at.desc(), MailRow.id.desc())
            .limit(limit)
        )
        return [_mail(row) for row in rows]


async def mail_counts(sessions: Sessions, owner: Owner) -> tuple[int, int, int]:
    """(messages, unread, bytes) in `owner`'s mailbox."""
    async with sessions() as session:
        mine = await addresses_of(session, owner)
        row = (
            await session.execute(
                select(
                    func.count(MailRow.id),
                    func.count(MailRow.read_at.is_(None)).filter(MailRow.read_at.is_(None)),
                    func.coalesce(func.sum(MailRow.size_bytes), 0),
                ).where(mine.match(MailRow, "to"))
            )
        ).one()
    return int(row[0]), int(row[1]), int(row[2])


async def get_mail(sessions: Sessions, owner: Owner, mail_id: int) -> Mail:
    async with sessions() as session:
        mine = await addresses_of(session, owner)
        row = await session.scalar(
            select(MailRow).where(MailRow.id == mail_id, mine.match(MailRow, "to"))
        )
    if row is None:
        raise MailNotFoundError(mail_id)
    return _mail(row)


async def _change(sessions: Sessions, owner: Owner, mail_id: int, **values: Any) -> Mail:
    async with sessions.begin() as session:
        mine = await addresses_of(session, owner)
        changed = await session.scalar(
            update(MailRow)
            .where(MailRow.id == mail_id, mine.match(MailRow, "to"))
            .values(**values)
            .returning(MailRow.id)
        )
        if changed is None:
            raise MailNotFoundError(mail_id)
        row = await session.get(MailRow, mail_id, populate_existing=True)
        assert row is not None
        return _mail(row)


async def mark_read(
    sessions: Sessions, owner: Owner, mail_id: int, *, now: datetime | None = None
) -> Mail:
    """The message has been heard or read (the first time counts)."""
    mail = await get_mail(sessions, owner, mail_id)
    if mail.read_at is not None:
        return mail
    return await _change(sessions, owner, mail_id, read_at=now or utcnow())


async def keep_mail(sessions: Sessions, owner: Owner, mail_id: int, kept: bool = True) -> Mail:
    """A kept message is spared by the retention (but still counts against the limits)."""
    return await _change(sessions, owner, mail_id, kept=kept)


async def delete_mail(sessions: Sessions, owner: Owner, mail_id: int) -> Mail:
    """Remove the message; returns it, so the caller deletes its voice file."""
    async with sessions.begin() as session:
        mine = await addresses_of(session, owner)
        row = await session.scalar(
            select(MailRow).where(MailRow.id == mail_id, mine.match(MailRow, "to"))
        )
        if row is None:
            raise MailNotFoundError(mail_id)
        mail = _mail(row)
        await session.delete(row)
    return mail


async def expire_mail(sessions: Sessions, before: datetime) -> list[Mail]:
    """Delete every message older than `before` that its owner did not keep."""
    async with sessions.begin() as session:
        rows = list(
            await session.scalars(
                select(MailRow).where(MailRow.created_at < before, MailRow.kept.is_(False))
            )
        )
        gone = [_mail(row) for row in rows]
        if rows:
            await session.execute(delete(MailRow).where(MailRow.id.in_([r.id for r in rows])))
    return gone


# -- friends and blocks --------------------------------------------------------------------------
class FriendState(enum.StrEnum):
    FRIEND = "friend"
    ASKED = "asked"  # I asked them, they have not answered
    ASKING = "asking"  # they asked me


@dataclass(frozen=True, slots=True)
class Friend:
    other: Owner
    state: FriendState
    since: datetime


def _pair(a: Owner, b: Owner) -> str:
    return "|".join(sorted((owner_key(a), owner_key(b))))


async def _friendship(session: AsyncSession, a: Owner, b: Owner) -> FriendshipRow | None:
    row: FriendshipRow | None = await session.scalar(
        select(FriendshipRow).where(FriendshipRow.pair == _pair(a, b))
    )
    return row


async def is_blocked(sessions: Sessions, blocker: Owner, whom: Owner) -> bool:
    """Whether `blocker` (any of their addresses) blocked `whom` (any of theirs)."""
    async with sessions() as session:
        return await _blocked(session, blocker, whom)


async def _blocked(session: AsyncSession, blocker: Owner, whom: Owner) -> bool:
    mine = await addresses_of(session, blocker)
    theirs = await addresses_of(session, whom)
    found = await session.scalar(
        select(BlockRow.id).where(mine.match(BlockRow, "from"), theirs.match(BlockRow, "to"))
    )
    return found is not None


async def request_friend(
    sessions: Sessions, me: Owner, other: Owner, *, now: datetime | None = None
) -> FriendState:
    """Ask `other` to be friends; if they had asked me, this accepts. Refused (with a code)
    for oneself, a pair already friends or already asked, or where either blocked the other
    (the code is the same either way: a block is never revealed as such)."""
    if me == other:
        raise FriendshipConflictError("friend_self")
    try:
        async with sessions.begin() as session:
            if await _blocked(session, me, other) or await _blocked(session, other, me):
                raise FriendshipConflictError("friend_unavailable")
            row = await _friendship(session, me, other)
            if row is None:
                session.add(
                    FriendshipRow(
                        pair=_pair(me, other),
                        **_columns("from", me),
                        **_columns("to", other),
                        created_at=now or utcnow(),
                    )
                )
                return FriendState.ASKED
            if row.accepted_at is not None:
                raise FriendshipConflictError("friend_already")
            if _owner(row, "from") == me:
                raise FriendshipConflictError("friend_already_asked")
            row.accepted_at = now or utcnow()
            return FriendState.FRIEND
    except IntegrityError as exc:  # two requests at once: the other one won
        raise FriendshipConflictError("friend_already_asked") from exc


async def accept_friend(
    sessions: Sessions, me: Owner, other: Owner, *, now: datetime | None = None
) -> None:
    """Accept `other`'s request; FriendshipConflictError("friend_no_request") if none."""
    async with sessions.begin() as session:
        row = await _friendship(session, me, other)
        if row is None or row.accepted_at is not None or _owner(row, "to") != me:
            raise FriendshipConflictError("friend_no_request")
        row.accepted_at = now or utcnow()


async def remove_friend(sessions: Sessions, me: Owner, other: Owner) -> bool:
    """End a friendship or withdraw/decline a request; False if there was none."""
    async with sessions.begin() as session:
        row = await _friendship(session, me, other)
        if row is None:
            return False
        await session.delete(row)
        return True


async def block(
    sessions: Sessions, me: Owner, other: Owner, *, now: datetime | None = None
) -> None:
    """Block `other`: any friendship or request between us ends; blocking twice is one block."""
    if me == other:
        raise FriendshipConflictError("friend_self")
    await remove_friend(sessions, me, other)
    try:
        async with sessions.begin() as session:
            session.add(
                BlockRow(
                    pair=f"{owner_key(me)}>{owner_key(other)}",
                    **_columns("from", me),
                    **_columns("to", other),
                    created_at=now or utcnow(),
                )
            )
    except IntegrityError:
        return  # blocked already


async def unblock(sessions: Sessions, me: Owner, other: Owner) -> bool:
    async with sessions.begin() as session:
        result = await session.execute(
            delete(BlockRow).where(BlockRow.pair == f"{owner_key(me)}>{owner_key(other)}")
        )
    return bool(getattr(result, "rowcount", 0))


async def list_blocked(sessions: Sessions, me: Owner) -> list[Owner]:
    async with sessions() as session:
        mine = await addresses_of(session, me)
        rows = await session.scalars(
            select(BlockRow).where(mine.match(BlockRow, "from")).order_by(BlockRow.id)
        )
        return [_owner(row, "to") for row in rows]


async def list_friends(sessions: Sessions, me: Owner) -> list[Friend]:
    """My friends and open requests (both ways), oldest first."""
    async with sessions() as session:
        mine = await addresses_of(session, me)
        rows = await session.scalars(
            select(FriendshipRow)
            .where(or_(mine.match(FriendshipRow, "from"), mine.match(FriendshipRow, "to")))
            .order_by(FriendshipRow.id)
        )
        out: list[Friend] = []
        for row in rows:
            asked_by_me = mine.has(_owner(row, "from"))
            other = _owner(row, "to") if asked_by_me else _owner(row, "from")
            if row.accepted_at is not None:
                out.append(Friend(other, FriendState.FRIEND, row.accepted_at))
            else:
                state = FriendState.ASKED if asked_by_me else FriendState.ASKING
                out.append(Friend(other, state, row.created_at))
        return out


async def are_friends(sessions: Sessions, a: Owner, b: Owner) -> bool:
    async with sessions() as session:
        theirs = await addresses_of(session, b)
        mine = await addresses_of(session, a)
        found = await session.scalar(
            select(FriendshipRow.id).where(
                FriendshipRow.accepted_at.is_not(None),
                or_(
                    and_(mine.match(FriendshipRow, "from"), theirs.match(FriendshipRow, "to")),
                    and_(theirs.match(FriendshipRow, "from"), mine.match(FriendshipRow, "to")),
                ),
            )
        )
    return found is not None
