"""The karma ledger: append-only changes with reasons; the total is their sum.

The rules that award or take karma come later (issue 3); this module only records them.
Unlike credit, karma may become negative.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select

from vollmond.store._validate import check_amount, check_reason
from vollmond.store.db import Sessions
from vollmond.store.errors import AccountNotFoundError
from vollmond.store.models import AccountRow, GameRow, GameStatus, KarmaEntryRow, SeatRow
from vollmond.store.types import utcnow


@dataclass(frozen=True, slots=True)
class KarmaEntry:
    """One karma change."""

    id: int
    account_id: int
    amount: int
    reason: str
    game_id: str | None
    created_at: datetime


def _entry(row: KarmaEntryRow) -> KarmaEntry:
    return KarmaEntry(
        id=row.id,
        account_id=row.account_id,
        amount=row.amount,
        reason=row.reason,
        game_id=row.game_id,
        created_at=row.created_at,
    )


async def karma_change(
    sessions: Sessions,
    account_id: int,
    amount: int,
    reason: str,
    *,
    game_id: str | None = None,
    now: datetime | None = None,
) -> KarmaEntry:
    """Record a karma change with its reason."""
    check_amount(amount)
    row = KarmaEntryRow(
        account_id=account_id,
        amount=amount,
        reason=check_reason(reason),
        game_id=game_id,
        created_at=now or utcnow(),
    )
    async with sessions.begin() as session:
        if await session.get(AccountRow, account_id) is None:
            raise AccountNotFoundError(account_id)
        session.add(row)
    return _entry(row)


async def karma_total(sessions: Sessions, account_id: int) -> int:
    """Sum of all karma changes (0 for an account without any)."""
    async with sessions() as session:
        if await session.get(AccountRow, account_id) is None:
            raise AccountNotFoundError(account_id)
        total = await session.scalar(
            select(func.coalesce(func.sum(KarmaEntryRow.amount), 0)).where(
                KarmaEntryRow.account_id == account_id
            )
        )
    return int(total or 0)


async def karma_history(
    sessions: Sessions, account_id: int, *, limit: int = 100
) -> list[KarmaEntry]:
    """The newest `limit` karma changes, newest first."""
    async with sessions() as session:
        rows = await session.scalars(
            select(KarmaEntryRow)
            .where(KarmaEntryRow.account_id == account_id)
            .order_by(KarmaEntryRow.id.desc())
            .limit(limit)
        )
        return [_entry(row) for row in rows]


async def karma_since(
    sessions: Sessions, account_id: int, since: datetime, reasons: Collection[str]
) -> list[int]:
    """The amounts booked for `reasons` at or after `since`: what the daily cap counts."""
    async with sessions() as session:
        rows = await session.scalars(
            select(KarmaEntryRow.amount).where(
                KarmaEntryRow.account_id == account_id,
                KarmaEntryRow.created_at >= since,
                KarmaEntryRow.reason.in_(list(reasons)),
            )
        )
        return list(rows)


async def game_booked(sessions: Sessions, game_id: str, reasons: Collection[str]) -> bool:
    """Whether any of `reasons` was booked for this game already (a game is booked once)."""
    async with sessions() as session:
        found = await session.scalar(
            select(KarmaEntryRow.id)
            .where(KarmaEntryRow.game_id == game_id, KarmaEntryRow.reason.in_(list(reasons)))
            .limit(1)
        )
    return found is not None


async def tables_played(
    sessions: Sessions, account_ids: Collection[int], since: datetime, *, besides: str
) -> list[frozenset[int]]:
    """The account sets of the finished games since `since` (but `besides`) in which any of
    `account_ids` sat: each game's humans with an account, as one set."""
    wanted = list(account_ids)
    async with sessions() as session:
        games = select(SeatRow.game_id).where(SeatRow.account_id.in_(wanted)).distinct()
        rows = await session.execute(
            select(SeatRow.game_id, SeatRow.account_id)
            .join(GameRow, GameRow.id == SeatRow.game_id)
            .where(
                SeatRow.game_id.in_(games),
                SeatRow.game_id != besides,
                SeatRow.account_id.is_not(None),
                GameRow.status == GameStatus.FINISHED,
                GameRow.created_at >= since,
            )
        )
        tables: dict[str, set[int]] = {}
        for game_id, account_id in rows:
            if account_id is not None:
                tables.setdefault(game_id, set()).add(account_id)
    return [frozenset(t) for t in tables.values()]
