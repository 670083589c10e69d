"""Telephone identities: a phone ID and PIN, an optional verified number, and the PIN lockout.

A caller may play by phone before (or without) having a web account, so identities exist on
their own and are linked to at most one account later. A caller number is never proof of
anything by itself (caller IDs are trivially spoofed): `number` is only ever set through the
verification in :mod:`vollmond.store.phone_numbers`, and the PIN is checked by
:func:`check_pin`, which also keeps the lockout per identity and the limit per source
(docs/security.md "Telephone identity").
"""

from __future__ import annotations

import enum
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, and_, delete, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from vollmond.settings import IdentitySettings
from vollmond.store.db import Sessions
from vollmond.store.errors import (
    AccountNotFoundError,
    InvalidPhoneNumberError,
    InvalidPinError,
    PhoneIdentityLinkedError,
    PhoneIdentityNotFoundError,
)
from vollmond.store.hashing import hash_secret, verify_secret
from vollmond.store.merge import merge_phone_ledgers
from vollmond.store.models import AccountRow, PhoneIdentityRow, PhonePinFailureRow
from vollmond.store.types import utcnow

_SEPARATORS = re.compile(r"[\s\-./()]")
_NUMBER = re.compile(r"\+?[0-9]{3,20}")
_PIN = re.compile(r"[0-9]{4,12}")
#: Tries at finding a free random phone ID before giving up (a full ID space, not bad luck).
_ID_TRIES = 20


@dataclass(frozen=True, slots=True)
class PhoneIdentity:
    """A phone identity without its PIN hash. `number` is set only once verified;
    `number_asserted` says the verification came through a trusted proxy."""

    id: int
    number: str | None
    has_pin: bool
    account_id: int | None
    created_at: datetime
    number_asserted: bool = False
    locked_until: datetime | None = None
    expert: bool = False


def _identity(row: PhoneIdentityRow) -> PhoneIdentity:
    return PhoneIdentity(
        id=row.id,
        number=row.number,
        has_pin=row.pin_hash is not None,
        account_id=row.account_id,
        created_at=row.created_at,
        number_asserted=bool(row.number_asserted),
        locked_until=row.locked_until,
        expert=bool(row.expert),
    )


def normalize_number(number: str) -> str:
    """Caller numbers arrive formatted in many ways; compare them without separators."""
    cleaned = _SEPARATORS.sub("", number)
    if not _NUMBER.fullmatch(cleaned):
        raise InvalidPhoneNumberError(f"not a caller number: {number!r}")
    return cleaned


def _check_pin_format(pin: str) -> None:
    if not _PIN.fullmatch(pin):
        raise InvalidPinError("a PIN is 4 to 12 digits")


def new_phone_id(digits: int) -> int:
    """A random phone ID of exactly `digits` digits (never sequential, so not guessable from
    one's own). IDs made before (1, 2, 3 …) are shorter and stay valid."""
    low = int(10 ** (digits - 1))
    return low + secrets.randbelow(9 * low)


async def create_phone_identity(
    sessions: Sessions,
    *,
    pin: str | None = None,
    account_id: int | None = None,
    settings: IdentitySettings | None = None,
    now: datetime | None = None,
) -> PhoneIdentity:
    """A new identity with a random phone ID and an optional PIN (numbers come only by
    verification)."""
    settings = settings or IdentitySettings()
    pin_hash = None
    if pin is not None:
        _check_pin_format(pin)
        pin_hash = await hash_secret(pin)
    for _ in range(_ID_TRIES):
        row = PhoneIdentityRow(
            id=new_phone_id(settings.phone_id_digits),
            pin_hash=pin_hash,
            account_id=account_id,
            created_at=now or utcnow(),
            number_asserted=False,
            pin_failures=0,
            lockouts=0,
        )
        try:
            async with sessions.begin() as session:
                if account_id is not None:
                    await _require_account(session, account_id)
                session.add(row)
        except IntegrityError:
            continue  # the random ID was taken: draw again
        return _identity(row)
    raise RuntimeError("no free phone ID found; raise IdentitySettings.phone_id_digits")


async def _claim(
    session: AsyncSession, condition: ColumnElement[bool], values: dict[str, object]
) -> PhoneIdentity | None:
    """Link matching identities in one conditional UPDATE, so two accounts racing for the same
    identity cannot both win (the row lock on PostgreSQL, the write lock on SQLite)."""
    claimed = await session.scalar(
        update(PhoneIdentityRow)
        .where(condition)
        .values(values)
        .returning(PhoneIdentityRow.id)
        .execution_options(synchronize_session=False)
    )
    if claimed is None:
        return None
    row = await session.get(PhoneIdentityRow, claimed, populate_existing=True)
    assert row is not None
    return _identity(row)


async def _require_account(session: AsyncSession, account_id: int) -> None:
    if await session.get(AccountRow, account_id) is None:
        raise AccountNotFoundError(account_id)


async def account_identity(sessions: Sessions, account_id: int) -> PhoneIdentity | None:
    """The account's phone identity (its first, if several were linked)."""
    async with sessions() as session:
        row = await session.scalar(
            select(PhoneIdentityRow)
            .where(PhoneIdentityRow.account_id == account_id)
            .order_by(PhoneIdentityRow.created_at, PhoneIdentityRow.id)
            .limit(1)
        )
    return _identity(row) if row is not None else None


async def ensure_account_identity(
    sessions: Sessions, account_id: int, *, settings: IdentitySettings | None = None
) -> PhoneIdentity:
    """The account's phone identity, made (without PIN or number) when it has none yet."""
    existing = await account_identity(sessions, account_id)
    if existing is not None:
        return existing
    return await create_phone_identity(sessions, account_id=account_id, settings=settings)


async def set_account_pin(
    sessions: Sessions, account_id: int, pin: str, *, settings: IdentitySettings | None = None
) -> PhoneIdentity:
    """Set the PIN of the account's phone identity (made when missing); this also ends a
    lockout, since the account holder proved themselves by signing in on the web."""
    _check_pin_format(pin)
    identity = await ensure_account_identity(sessions, account_id, settings=settings)
    await _store_pin_hash(sessions, identity.id, await hash_secret(pin))
    return await get_phone_identity(sessions, identity.id)


async def link_identity(
    sessions: Sessions, identity_id: int, account_id: int, *, now: datetime | None = None
) -> PhoneIdentity:
    """Link an existing identity (e.g. a PIN-only one) to an account it is not yet linked to.

    The link itself (the identity had no account) merges the identity's ledgers into the
    account in the same transaction, audited (:mod:`vollmond.store.merge`); linking it again
    to the same account changes nothing and merges nothing."""
    async with sessions.begin() as session:
        await _require_account(session, account_id)
        claimed = await _claim(
            session,
            and_(PhoneIdentityRow.id == identity_id, PhoneIdentityRow.account_id.is_(None)),
            {"account_id": account_id},
        )
        if claimed is not None:
            await merge_phone_ledgers(session, identity_id, account_id, now or utcnow())
            return claimed
        row = await session.get(PhoneIdentityRow, identity_id)
        if row is None:
            raise PhoneIdentityNotFoundError(identity_id)
        if row.account_id != account_id:
            assert row.account_id is not None
            raise PhoneIdentityLinkedError(identity_id, row.account_id)
        return _identity(row)


async def identify_caller(sessions: Sessions, number: str) -> PhoneIdentity | None:
    """The identity whose *verified* number this is; None for unknown or withheld numbers.

    For pre-filling only: the number of an ordinary call is the caller's claim."""
    try:
        normalized = normalize_number(number)
    except InvalidPhoneNumberError:
        return None
    async with sessions() as session:
        row = await session.scalar(
            select(PhoneIdentityRow).where(
                PhoneIdentityRow.number == normalized,
                PhoneIdentityRow.number_verified_at.is_not(None),
            )
        )
    return _identity(row) if row else None


async def identify_asserted(sessions: Sessions, asserted_number: str) -> PhoneIdentity | None:
    """The identity a trusted proxy's asserted number signs in without a PIN: only one whose
    number was itself verified through a trusted proxy."""
    identity = await identify_caller(sessions, asserted_number)
    return identity if identity is not None and identity.number_asserted else None


async def get_phone_identity(sessions: Sessions, identity_id: int) -> PhoneIdentity:
    """The identity with this id; raises PhoneIdentityNotFoundError."""
    async with sessions() as session:
        row = await session.get(PhoneIdentityRow, identity_id)
    if row is None:
        raise PhoneIdentityNotFoundError(identity_id)
    return _identity(row)


async def set_expert(sessions: Sessions, identity_id: int, on: bool) -> None:
    """Keep the caller's expert mode (``*7#``) with the identity, for every later call and
    every node; raises PhoneIdentityNotFoundError."""
    async with sessions.begin() as session:
        changed = await session.scalar(
            update(PhoneIdentityRow)
            .where(PhoneIdentityRow.id == identity_id)
            .values(expert=on)
            .returning(PhoneIdentityRow.id)
        )
        if changed is None:
            raise PhoneIdentityNotFoundError(identity_id)


async def verify_pin(sessions: Sessions, identity_id: int, pin: str) -> bool:
    """Whether `pin` is this identity's PIN; unknown identities and PIN-less ones fail alike.

    No lockout or counting here: callers facing the public use :func:`check_pin`."""
    async with sessions() as session:
        row = await session.get(PhoneIdentityRow, identity_id)
    if not _PIN.fullmatch(pin):
        return False
    result = await verify_secret(row.pin_hash if row else None, pin)
    if row is None or row.pin_hash is None or not result.ok:
        return False
    if result.needs_rehash:
        await _store_pin_hash(sessions, identity_id, await hash_secret(pin))
    return True


class PinOutcome(enum.Enum):
    """What a PIN attempt from the public telephone came to."""

    OK = "ok"
    WRONG = "wrong"
    # This attempt was wrong and locked the identity (from now on: LOCKED).
    LOCKED_NOW = "locked_now"
    # The identity is locked; the PIN was not even looked at.
    LOCKED = "locked"
    # Too many wrong PINs from this source lately; the PIN was not looked at.
    SOURCE_BLOCKED = "source_blocked"


@dataclass(frozen=True, slots=True)
class PinCheck:
    outcome: PinOutcome
    identity: PhoneIdentity | None = None
    #: Until when LOCKED / LOCKED_NOW / SOURCE_BLOCKED lasts.
    until: datetime | None = None


def lockout_duration(lockouts: int, settings: IdentitySettings) -> timedelta:
    """The `lockouts`-th lockout in a row (1 = the first) lasts this long.

    >>> lockout_duration(3, IdentitySettings(lockout_s=900, lockout_growth=2.0))
    datetime.timedelta(seconds=3600)
    """
    seconds = settings.lockout_s * settings.lockout_growth ** max(0, lockouts - 1)
    return timedelta(seconds=min(seconds, settings.lockout_max_s))


async def source_blocked_until(
    sessions: Sessions, source: str, settings: IdentitySettings, now: datetime
) -> datetime | None:
    """When the source may try PINs again, or None if it may now."""
    since = now - timedelta(seconds=settings.source_window_s)
    async with sessions() as session:
        count, oldest = (
            await session.execute(
                select(func.count(), func.min(PhonePinFailureRow.at)).where(
                    PhonePinFailureRow.source == source, PhonePinFailureRow.at > since
                )
            )
        ).one()
    if count < settings.source_failures or oldest is None:
        return None
    if oldest.tzinfo is None:  # SQLite through a bare aggregate: no column type applied
        oldest = oldest.replace(tzinfo=now.tzinfo)
    return oldest + timedelta(seconds=settings.source_window_s)


async def check_pin(
    sessions: Sessions,
    identity_id: int,
    pin: str,
    *,
    source: str,
    settings: IdentitySettings,
    now: datetime | None = None,
) -> PinCheck:
    """One PIN attempt from the telephone, counted against the identity and the source.

    A locked identity or a blocked source is answered without looking at the PIN, so guessing
    on during a lockout learns nothing. Unknown phone IDs cost the same time as known ones and
    count against the source (they cannot be locked: there is nothing to lock)."""
    now = now or utcnow()
    blocked = await source_blocked_until(sessions, source, settings, now)
    if blocked is not None:
        return PinCheck(PinOutcome.SOURCE_BLOCKED, until=blocked)
    async with sessions() as session:
        row = await session.get(PhoneIdentityRow, identity_id)
    if row is not None and row.locked_until is not None and row.locked_until > now:
        return PinCheck(PinOutcome.LOCKED, until=row.locked_until)
    if await verify_pin(sessions, identity_id, pin):
        async with sessions.begin() as session:
            await session.execute(
                update(PhoneIdentityRow)
                .where(PhoneIdentityRow.id == identity_id)
                .values(pin_failures=0, lockouts=0, locked_until=None)
            )
        return PinCheck(PinOutcome.OK, await get_phone_identity(sessions, identity_id))
    return await _count_failure(sessions, identity_id, source, settings, now)


async def _count_failure(
    sessions: Sessions, identity_id: int, source: str, settings: IdentitySettings, now: datetime
) -> PinCheck:
    async with sessions.begin() as session:
        session.add(PhonePinFailureRow(source=source[:128], at=now))
        # Keep the log short: what is outside every window is of no use any more.
        await session.execute(
            delete(PhonePinFailureRow).where(
                PhonePinFailureRow.source == source[:128],
                PhonePinFailureRow.at <= now - timedelta(seconds=settings.source_window_s),
            )
        )
        counted = (
            await session.execute(
                update(PhoneIdentityRow)
                .where(PhoneIdentityRow.id == identity_id)
                .values(pin_failures=PhoneIdentityRow.pin_failures + 1)
                .returning(PhoneIdentityRow.pin_failures, PhoneIdentityRow.lockouts)
            )
        ).one_or_none()
        if counted is None or counted.pin_failures < settings.lockout_failures:
            return PinCheck(PinOutcome.WRONG)
        lockouts = counted.lockouts + 1
        until = now + lockout_duration(lockouts, settings)
        await session.execute(
            update(PhoneIdentityRow)
            .where(PhoneIdentityRow.id == identity_id)
            .values(pin_failures=0, lockouts=lockouts, locked_until=until)
        )
    return PinCheck(PinOutcome.LOCKED_NOW, until=until)


async def set_pin(sessions: Sessions, identity_id: int, pin: str) -> None:
    """Set or replace the PIN of an identity (and end any lockout)."""
    _check_pin_format(pin)
    await _store_pin_hash(sessions, identity_id, await hash_secret(pin))


async def _store_pin_hash(sessions: Sessions, identity_id: int, pin_hash: str) -> None:
    async with sessions.begin() as session:
        changed = await session.scalar(
            update(PhoneIdentityRow)
            .where(PhoneIdentityRow.id == identity_id)
            .values(pin_hash=pin_hash, pin_failures=0, lockouts=0, locked_until=None)
            .returning(PhoneIdentityRow.id)
        )
        if changed is None:
            raise PhoneIdentityNotFoundError(identity_id)
