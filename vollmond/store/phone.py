"""Telephone identities: recognising a caller by number and/or PIN, and linking to accounts.

A caller may play by phone before (or without) having a web account, so identities exist on
their own and are linked to at most one account later.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from vollmond.store.db import Sessions
from vollmond.store.errors import (
    AccountNotFoundError,
    InvalidPhoneNumberError,
    InvalidPinError,
    PhoneIdentityLinkedError,
    PhoneIdentityNotFoundError,
    PhoneNumberTakenError,
)
from vollmond.store.hashing import hash_secret, verify_secret
from vollmond.store.models import AccountRow, PhoneIdentityRow
from vollmond.store.types import utcnow

_SEPARATORS = re.compile(r"[\s\-./()]")
_NUMBER = re.compile(r"\+?[0-9]{3,20}")
_PIN = re.compile(r"[0-9]{4,12}")


@dataclass(frozen=True, slots=True)
class PhoneIdentity:
    """A phone identity without its PIN hash."""

    id: int
    number: str | None
    has_pin: bool
    account_id: int | None
    created_at: datetime


def _identity(row: PhoneIdentityRow) -> PhoneIdentity:
    return PhoneIdentity(
        id=row.id,
        number=row.number,
        has_pin=row.pin_hash is not None,
        account_id=row.account_id,
        created_at=row.created_at,
    )


def normalize_number(number: str) -> str:
    """Caller numbers arrive formatted in many ways; compare them without separators."""
    cleaned = _SEPARATORS.sub("", number)
    if not _NUMBER.fullmatch(cleaned):
        raise InvalidPhoneNumberError(f"not a caller number: {number!r}")
    return cleaned


def _check_pin(pin: str) -> None:
    if not _PIN.fullmatch(pin):
        raise InvalidPinError("a PIN is 4 to 12 digits")


async def create_phone_identity(
    sessions: Sessions,
    *,
    number: str | None = None,
    pin: str | None = None,
    account_id: int | None = None,
    now: datetime | None = None,
) -> PhoneIdentity:
    """Register a caller by number and/or PIN; raises PhoneNumberTakenError for a known number."""
    if number is None and pin is None:
        raise ValueError("a phone identity needs a number, a PIN or both")
    normalized = normalize_number(number) if number is not None else None
    pin_hash = None
    if pin is not None:
        _check_pin(pin)
        pin_hash = await hash_secret(pin)
    row = PhoneIdentityRow(
        number=normalized, pin_hash=pin_hash, account_id=account_id, created_at=now or utcnow()
    )
    try:
        async with sessions.begin() as session:
            if account_id is not None and await session.get(AccountRow, account_id) is None:
                raise AccountNotFoundError(account_id)
            session.add(row)
    except IntegrityError as exc:
        raise PhoneNumberTakenError(normalized or "") from exc
    return _identity(row)


async def link_phone(
    sessions: Sessions,
    account_id: int,
    *,
    number: str | None = None,
    pin: str | None = None,
    now: datetime | None = None,
) -> PhoneIdentity:
    """Attach a caller number (and/or a PIN) to an account.

    A number already known but not yet linked (someone who played by phone first) is adopted,
    keeping its history; a number linked to another account raises PhoneNumberTakenError.
    Without a number, a PIN-only identity is created for callers with hidden numbers.
    """
    if number is None:
        return await create_phone_identity(sessions, pin=pin, account_id=account_id, now=now)
    normalized = normalize_number(number)
    pin_hash = None
    if pin is not None:
        _check_pin(pin)
        pin_hash = await hash_secret(pin)
    async with sessions.begin() as session:
        if await session.get(AccountRow, account_id) is None:
            raise AccountNotFoundError(account_id)
        existing = await session.scalar(
            select(PhoneIdentityRow).where(PhoneIdentityRow.number == normalized).with_for_update()
        )
        if existing is not None:
            if existing.account_id not in (None, account_id):
                raise PhoneNumberTakenError(normalized)
            existing.account_id = account_id
            if pin_hash is not None:
                existing.pin_hash = pin_hash
            return _identity(existing)
    return await create_phone_identity(
        sessions, number=normalized, pin=pin, account_id=account_id, now=now
    )


async def link_identity(sessions: Sessions, identity_id: int, account_id: int) -> PhoneIdentity:
    """Link an existing identity (e.g. a PIN-only one) to an account it is not yet linked to."""
    async with sessions.begin() as session:
        if await session.get(AccountRow, account_id) is None:
            raise AccountNotFoundError(account_id)
        row = await session.get(PhoneIdentityRow, identity_id, with_for_update=True)
        if row is None:
            raise PhoneIdentityNotFoundError(identity_id)
        if row.account_id not in (None, account_id):
            raise PhoneIdentityLinkedError(identity_id, row.account_id)
        row.account_id = account_id
    return _identity(row)


async def identify_caller(sessions: Sessions, number: str) -> PhoneIdentity | None:
    """The identity registered for a caller number; None for unknown or withheld numbers."""
    try:
        normalized = normalize_number(number)
    except InvalidPhoneNumberError:
        return None
    async with sessions() as session:
        row = await session.scalar(
            select(PhoneIdentityRow).where(PhoneIdentityRow.number == normalized)
        )
    return _identity(row) if row else None


async def get_phone_identity(sessions: Sessions, identity_id: int) -> PhoneIdentity:
    """The identity with this id; raises PhoneIdentityNotFoundError."""
    async with sessions() as session:
        row = await session.get(PhoneIdentityRow, identity_id)
    if row is None:
        raise PhoneIdentityNotFoundError(identity_id)
    return _identity(row)


async def verify_pin(sessions: Sessions, identity_id: int, pin: str) -> bool:
    """Whether `pin` is this identity's PIN; unknown identities and PIN-less ones fail alike."""
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


async def set_pin(sessions: Sessions, identity_id: int, pin: str) -> None:
    """Set or replace the PIN of an identity."""
    _check_pin(pin)
    await _store_pin_hash(sessions, identity_id, await hash_secret(pin))


async def _store_pin_hash(sessions: Sessions, identity_id: int, pin_hash: str) -> None:
    async with sessions.begin() as session:
        changed = await session.scalar(
            update(PhoneIdentityRow)
            .where(PhoneIdentityRow.id == identity_id)
            .values(pin_hash=pin_hash)
            .returning(PhoneIdentityRow.id)
        )
        if changed is None:
            raise PhoneIdentityNotFoundError(identity_id)
