"""Telephone identities: recognising a caller by number and/or PIN, and linking to accounts.

A caller may play by phone before (or without) having a web account, so identities exist on
their own and are linked to at most one account later.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import ColumnElement, and_, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

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


_IDENTITY_COLUMNS = (
    PhoneIdentityRow.id,
    PhoneIdentityRow.number,
    PhoneIdentityRow.pin_hash,
    PhoneIdentityRow.account_id,
    PhoneIdentityRow.created_at,
)


async def _claim(
    session: AsyncSession, condition: ColumnElement[bool], values: dict[str, object]
) -> PhoneIdentity | None:
    """Link matching identities in one conditional UPDATE, so two accounts racing for the same
    identity cannot both win (the row lock on PostgreSQL, the write lock on SQLite)."""
    claimed = (
        await session.execute(
            update(PhoneIdentityRow)
            .where(condition)
            .values(values)
            .returning(*_IDENTITY_COLUMNS)
            .execution_options(synchronize_session=False)
        )
    ).one_or_none()
    if claimed is None:
        return None
    return PhoneIdentity(
        id=claimed.id,
        number=claimed.number,
        has_pin=claimed.pin_hash is not None,
        account_id=claimed.account_id,
        created_at=claimed.created_at,
    )


async def _require_account(session: AsyncSession, account_id: int) -> None:
    if await session.get(AccountRow, account_id) is None:
        raise AccountNotFoundError(account_id)


def _free_for(account_id: int) -> ColumnElement[bool]:
    return or_(PhoneIdentityRow.account_id.is_(None), PhoneIdentityRow.account_id == account_id)


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
    values: dict[str, object] = {"account_id": account_id}
    if pin is not None:
        _check_pin(pin)
        values["pin_hash"] = await hash_secret(pin)
    try:
        async with sessions.begin() as session:
            await _require_account(session, account_id)
            claimed = await _claim(
                session,
                and_(PhoneIdentityRow.number == normalized, _free_for(account_id)),
                values,
            )
            if claimed is not None:
                return claimed
            taken = await session.scalar(
                select(PhoneIdentityRow.id).where(PhoneIdentityRow.number == normalized)
            )
            if taken is not None:
                raise PhoneNumberTakenError(normalized)
            row = PhoneIdentityRow(
                number=normalized,
                pin_hash=values.get("pin_hash"),
                account_id=account_id,
                created_at=now or utcnow(),
            )
            session.add(row)
    except IntegrityError as exc:
        # Someone registered the same number between our check and our insert.
        raise PhoneNumberTakenError(normalized) from exc
    return _identity(row)


async def link_identity(sessions: Sessions, identity_id: int, account_id: int) -> PhoneIdentity:
    """Link an existing identity (e.g. a PIN-only one) to an account it is not yet linked to."""
    async with sessions.begin() as session:
        await _require_account(session, account_id)
        claimed = await _claim(
            session,
            and_(PhoneIdentityRow.id == identity_id, _free_for(account_id)),
            {"account_id": account_id},
        )
        if claimed is not None:
            return claimed
        owner = await session.scalar(
            select(PhoneIdentityRow.account_id).where(PhoneIdentityRow.id == identity_id)
        )
    if owner is None:
        raise PhoneIdentityNotFoundError(identity_id)
    raise PhoneIdentityLinkedError(identity_id, owner)


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
