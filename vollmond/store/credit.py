"""The credit ledger: append-only bookings and a balance that can never go negative.

The balance lives on the account row and every booking changes it with one conditional
UPDATE (`... WHERE credit_balance + amount >= 0`). On PostgreSQL that statement takes the
row lock and re-checks the condition after a concurrent writer commits; on SQLite it takes the
database write lock. So two concurrent spends can never both see the old balance, on either
backend, and the ledger row is written in the same transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from vollmond.store._validate import check_amount, check_reason
from vollmond.store.db import Sessions
from vollmond.store.errors import (
    AccountNotFoundError,
    GameNotFoundError,
    InsufficientCreditError,
)
from vollmond.store.models import AccountRow, CreditEntryRow
from vollmond.store.types import utcnow


@dataclass(frozen=True, slots=True)
class CreditEntry:
    """One booking as written to the ledger."""

    id: int
    account_id: int
    amount: int
    balance_after: int
    reason: str
    game_id: str | None
    created_at: datetime


def _entry(row: CreditEntryRow) -> CreditEntry:
    return CreditEntry(
        id=row.id,
        account_id=row.account_id,
        amount=row.amount,
        balance_after=row.balance_after,
        reason=row.reason,
        game_id=row.game_id,
        created_at=row.created_at,
    )


async def credit_balance(sessions: Sessions, account_id: int) -> int:
    """The account's current credit; raises AccountNotFoundError."""
    async with sessions() as session:
        balance = await session.scalar(
            select(AccountRow.credit_balance).where(AccountRow.id == account_id)
        )
    if balance is None:
        raise AccountNotFoundError(account_id)
    return balance


async def credit_change(
    sessions: Sessions,
    account_id: int,
    amount: int,
    reason: str,
    *,
    game_id: str | None = None,
    now: datetime | None = None,
) -> CreditEntry:
    """Book `amount` (negative to spend) with its reason; the whole change or nothing.

    Raises InsufficientCreditError if the balance would drop below zero (nothing is booked).
    """
    check_amount(amount)
    cleaned_reason = check_reason(reason)
    try:
        return await _book(
            sessions, account_id, amount=amount, reason=cleaned_reason, game_id=game_id, now=now
        )
    except IntegrityError as exc:
        # The only constraint a valid booking can still violate is the game reference.
        raise GameNotFoundError(game_id or "") from exc


async def _book(
    sessions: Sessions,
    account_id: int,
    *,
    amount: int,
    reason: str,
    game_id: str | None,
    now: datetime | None,
) -> CreditEntry:
    async with sessions.begin() as session:
        # The UPDATE comes first so that on SQLite the transaction starts by taking the write
        # lock; reading first would let two spenders act on the same stale snapshot.
        balance_after = await session.scalar(
            update(AccountRow)
            .where(AccountRow.id == account_id, AccountRow.credit_balance + amount >= 0)
            .values(credit_balance=AccountRow.credit_balance + amount)
            .returning(AccountRow.credit_balance)
            .execution_options(synchronize_session=False)
        )
        if balance_after is None:
            balance = await session.scalar(
                select(AccountRow.credit_balance).where(AccountRow.id == account_id)
            )
            if balance is None:
                raise AccountNotFoundError(account_id)
            raise InsufficientCreditError(account_id, balance, amount)
        row = CreditEntryRow(
            account_id=account_id,
            amount=amount,
            balance_after=balance_after,
            reason=reason,
            game_id=game_id,
            created_at=now or utcnow(),
        )
        session.add(row)
    return _entry(row)


async def credit_history(
    sessions: Sessions, account_id: int, *, limit: int = 100
) -> list[CreditEntry]:
    """The newest `limit` bookings, newest first."""
    async with sessions() as session:
        rows = await session.scalars(
            select(CreditEntryRow)
            .where(CreditEntryRow.account_id == account_id)
            .order_by(CreditEntryRow.id.desc())
            .limit(limit)
        )
        return [_entry(row) for row in rows]
