"""Web accounts: creation, password checks and roles."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError

from vollmond.store.db import Sessions
from vollmond.store.errors import (
    AccountNotFoundError,
    InvalidAccountNameError,
    NameTakenError,
    WeakPasswordError,
)
from vollmond.store.hashing import hash_secret, verify_secret
from vollmond.store.models import AccountRow, Role
from vollmond.store.types import utcnow

NAME_MAX_LENGTH = 64
PASSWORD_MIN_LENGTH = 8
# Hashing cost grows with input; an upper bound keeps a login form from being a CPU sink.
PASSWORD_MAX_LENGTH = 1024


@dataclass(frozen=True, slots=True)
class Account:
    """An account as the rest of the service sees it: no hash, detached from any session."""

    id: int
    name: str
    role: Role
    credit_balance: int
    created_at: datetime


def _account(row: AccountRow) -> Account:
    return Account(
        id=row.id,
        name=row.name,
        role=Role(row.role),
        credit_balance=row.credit_balance,
        created_at=row.created_at,
    )


def name_key(name: str) -> str:
    """The form in which names must be unique: NFKC-normalised and case-folded."""
    return unicodedata.normalize("NFKC", name).casefold()


def _check_name(name: str) -> str:
    cleaned = name.strip()
    if not cleaned:
        raise InvalidAccountNameError("account name is empty")
    if len(cleaned) > NAME_MAX_LENGTH or len(name_key(cleaned)) > NAME_MAX_LENGTH:
        raise InvalidAccountNameError(f"account name is longer than {NAME_MAX_LENGTH} characters")
    if any(unicodedata.category(char).startswith("C") for char in cleaned):
        raise InvalidAccountNameError("account name contains control or invisible characters")
    return cleaned


def _check_password(password: str) -> None:
    if len(password) < PASSWORD_MIN_LENGTH:
        raise WeakPasswordError(f"password needs at least {PASSWORD_MIN_LENGTH} characters")
    if len(password) > PASSWORD_MAX_LENGTH:
        raise WeakPasswordError(f"password is longer than {PASSWORD_MAX_LENGTH} characters")


async def create_account(
    sessions: Sessions,
    name: str,
    password: str,
    *,
    role: Role = Role.PLAYER,
    now: datetime | None = None,
) -> Account:
    """Register a web account; raises NameTakenError if the name (case-insensitively) exists."""
    cleaned = _check_name(name)
    _check_password(password)
    # Hash before opening the transaction so no lock is held during the slow part.
    password_hash = await hash_secret(password)
    row = AccountRow(
        name=cleaned,
        name_key=name_key(cleaned),
        password_hash=password_hash,
        role=role,
        credit_balance=0,
        created_at=now or utcnow(),
    )
    try:
        async with sessions.begin() as session:
            session.add(row)
    except IntegrityError as exc:
        raise NameTakenError(cleaned) from exc
    return _account(row)


async def create_admin(
    sessions: Sessions, name: str, password: str, *, now: datetime | None = None
) -> Account:
    """Bootstrap an administrator (`vollmond admin create-admin`); same rules as any account."""
    return await create_account(sessions, name, password, role=Role.ADMIN, now=now)


async def verify_password(sessions: Sessions, name: str, password: str) -> Account | None:
    """The account if name and password match, else None — never saying which part was wrong.

    A hash made with weaker parameters than today's defaults is replaced on a successful login.
    """
    async with sessions() as session:
        row = await session.scalar(
            select(AccountRow).where(AccountRow.name_key == name_key(name.strip()))
        )
    if len(password) > PASSWORD_MAX_LENGTH:
        return None
    result = await verify_secret(row.password_hash if row else None, password)
    if row is None or not result.ok:
        return None
    if result.needs_rehash:
        new_hash = await hash_secret(password)
        async with sessions.begin() as session:
            await session.execute(
                update(AccountRow).where(AccountRow.id == row.id).values(password_hash=new_hash)
            )
    return _account(row)


async def change_password(sessions: Sessions, account_id: int, password: str) -> None:
    """Replace an account's password (the caller has already checked the old one)."""
    _check_password(password)
    new_hash = await hash_secret(password)
    async with sessions.begin() as session:
        changed = await session.scalar(
            update(AccountRow)
            .where(AccountRow.id == account_id)
            .values(password_hash=new_hash)
            .returning(AccountRow.id)
        )
        if changed is None:
            raise AccountNotFoundError(account_id)


async def get_account(sessions: Sessions, account_id: int) -> Account:
    """The account with this id; raises AccountNotFoundError."""
    async with sessions() as session:
        row = await session.get(AccountRow, account_id)
    if row is None:
        raise AccountNotFoundError(account_id)
    return _account(row)


async def find_account(sessions: Sessions, name: str) -> Account | None:
    """Look an account up by name, ignoring case and surrounding spaces."""
    async with sessions() as session:
        row = await session.scalar(
            select(AccountRow).where(AccountRow.name_key == name_key(name.strip()))
        )
    return _account(row) if row else None


async def set_role(sessions: Sessions, account_id: int, role: Role) -> Account:
    """Promote or demote an account (authorisation is the caller's business)."""
    async with sessions.begin() as session:
        row = await session.get(AccountRow, account_id, with_for_update=True)
        if row is None:
            raise AccountNotFoundError(account_id)
        row.role = role
    return _account(row)


async def count_admins(sessions: Sessions) -> int:
    """How many admins exist; `create-admin` uses it to refuse a second bootstrap by mistake."""
    async with sessions() as session:
        count = await session.scalar(
            select(func.count()).select_from(AccountRow).where(AccountRow.role == Role.ADMIN)
        )
    return count or 0
