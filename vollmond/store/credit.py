"""The credit ledger: append-only bookings and a balance that can never go negative.

The balance lives on the account row and every booking changes it with one conditional
UPDATE (`... WHERE credit_balance + amount >= 0`). On PostgreSQL that statement takes the
row lock and re-checks the condition after a concurrent writer commits; on SQLite it takes the
database write lock. So two concurrent spends can never both see the old balance, on either
backend, and the ledger row is written in the same transaction. A phone-only identity keeps
its balance on its own row the same way (issue 10; `Owner`, a bare int is an account id).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from vollmond.store._validate import check_amount, check_reason
from vollmond.store.db import Sessions
from vollmond.store.errors import GameNotFoundError, InsufficientCreditError
from vollmond.store.models import CreditEntryRow
from vollmond.store.owners import OwnerLike, holder_table, not_found, owned_by, owner_columns
from vollmond.store.types import utcnow


@dataclass(frozen=True, slots=True)
class CreditEntry:
    """One booking as written to the ledger."""

    id: int
    account_id: int | None
    amount: int
    balance_after: int
    reason: str
    game_id: str | None
    created_at: datetime
    phone_identity_id: int | None = None


def _entry(row: CreditEntryRow) -> CreditEntry:
    return CreditEntry(
        id=row.id,
        account_id=row.account_id,
        phone_identity_id=row.phone_identity_id,
        amount=row.amount,
        balance_after=row.balance_after,
        reason=row.reason,
        game_id=row.game_id,
        created_at=row.created_at,
    )


async def credit_balance(sessions: Sessions, who: OwnerLike) -> int:
    """The owner's current credit; raises AccountNotFoundError / PhoneIdentityNotFoundError."""
    async with sessions() as session:
        return await credit_held(session, who)


async def credit_held(session: AsyncSession, who: OwnerLike) -> int:
    """The balance inside the caller's transaction (linking merges it in the same one)."""
    table, key = holder_table(who)
    balance = await session.scalar(select(table.credit_balance).where(table.id == key))
    if balance is None:
        raise not_found(who)
    return balance


async def credit_change(
    sessions: Sessions,
    who: OwnerLike,
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
        async with sessions.begin() as session:
            return await book_credit(session, who, amount, cleaned_reason, game_id=game_id, now=now)
    except IntegrityError as exc:
        # The only constraint a valid booking can still violate is the game reference.
        raise GameNotFoundError(game_id or "") from exc


async def book_credit(
    session: AsyncSession,
    who: OwnerLike,
    amount: int,
    reason: str,
    *,
    game_id: str | None = None,
    now: datetime | None = None,
) -> CreditEntry:
    """One booking inside the caller's transaction (`credit_change` checks the arguments)."""
    table, key = holder_table(who)
    # The UPDATE comes first so that on SQLite the transaction starts by taking the write
    # lock; reading first would let two spenders act on the same stale snapshot.
    balance_after = await session.scalar(
        update(table)
        .where(table.id == key, table.credit_balance + amount >= 0)
        .values(credit_balance=table.credit_balance + amount)
        .returning(table.credit_balance)
        .execution_options(synchronize_session=False)
    )
    if balance_after is None:
        balance = await credit_held(session, who)
        raise InsufficientCreditError(key, balance, amount)
    row = CreditEntryRow(
        **owner_columns(who),
        amount=amount,
        balance_after=balance_after,
        reason=reason,
        game_id=game_id,
        created_at=now or utcnow(),
    )
    session.add(row)
    await session.flush()
    return _entry(row)


async def credit_history(
    sessions: Sessions, who: OwnerLike, *, limit: int = 100
) -> list[CreditEntry]:
    """The newest `limit` bookings, newest first."""
    async with sessions() as session:
        rows = await session.scalars(
            select(CreditEntryRow)
            .where(owned_by(CreditEntryRow, who))
            .order_by(CreditEntryRow.id.desc())
            .limit(limit)
        )
        return [_entry(row) for row in rows]
