"""The karma ledger: append-only changes with reasons; the total is their sum.

The rules that award or take karma are in `vollmond.community.karma`; this module only records
them. Unlike credit, karma may become negative. A ledger belongs to an account or to a
phone-only identity (`Owner`; a bare int is an account id).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import and_, case, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from vollmond.store._validate import check_amount, check_reason
from vollmond.store.db import Sessions
from vollmond.store.models import GameRow, GameStatus, KarmaEntryRow, SeatRow
from vollmond.store.owners import (
    Owner,
    OwnerLike,
    owned_by,
    owned_by_any,
    owner_columns,
    require_owner,
    row_owner,
)
from vollmond.store.types import utcnow


@dataclass(frozen=True, slots=True)
class KarmaEntry:
    """One karma change."""

    id: int
    account_id: int | None
    amount: int
    reason: str
    game_id: str | None
    created_at: datetime
    phone_identity_id: int | None = None


def _entry(row: KarmaEntryRow) -> KarmaEntry:
    return KarmaEntry(
        id=row.id,
        account_id=row.account_id,
        phone_identity_id=row.phone_identity_id,
        amount=row.amount,
        reason=row.reason,
        game_id=row.game_id,
        created_at=row.created_at,
    )


async def karma_change(
    sessions: Sessions,
    who: OwnerLike,
    amount: int,
    reason: str,
    *,
    game_id: str | None = None,
    now: datetime | None = None,
) -> KarmaEntry:
    """Record a karma change with its reason."""
    (row,) = await karma_changes(sessions, [(who, amount, reason)], game_id=game_id, now=now)
    return row


async def karma_changes(
    sessions: Sessions,
    lines: Sequence[tuple[OwnerLike, int, str]],
    *,
    game_id: str | None = None,
    now: datetime | None = None,
) -> list[KarmaEntry]:
    """Record several changes, each (owner, amount, reason), in one transaction: a finished
    game's whole booking takes the database's one writer once, not once a line (on SQLite a
    table's thirty small transactions queued behind the game logs' writer, issue 16), and
    is booked whole or not at all."""
    checked = [(who, check_amount(amount), check_reason(reason)) for who, amount, reason in lines]
    if not checked:
        return []
    async with sessions.begin() as session:
        for who in {owner for owner, _, _ in checked}:
            await require_owner(session, who)
        rows = [
            book_karma(session, who, amount, reason, game_id=game_id, now=now)
            for who, amount, reason in checked
        ]
    return [_entry(row) for row in rows]


def book_karma(
    session: AsyncSession,
    who: OwnerLike,
    amount: int,
    reason: str,
    *,
    game_id: str | None = None,
    now: datetime | None = None,
) -> KarmaEntryRow:
    """One entry inside the caller's transaction (`karma_change` checks the arguments)."""
    row = KarmaEntryRow(
        **owner_columns(who),
        amount=amount,
        reason=reason,
        game_id=game_id,
        created_at=now or utcnow(),
    )
    session.add(row)
    return row


async def karma_total(sessions: Sessions, who: OwnerLike) -> int:
    """Sum of all karma changes (0 for an owner without any)."""
    async with sessions() as session:
        await require_owner(session, who)
        return await karma_sum(session, who)


async def karma_sum(session: AsyncSession, who: OwnerLike) -> int:
    """The balance inside the caller's transaction (linking merges it in the same one)."""
    total = await session.scalar(
        select(func.coalesce(func.sum(KarmaEntryRow.amount), 0)).where(owned_by(KarmaEntryRow, who))
    )
    return int(total or 0)


async def karma_totals(sessions: Sessions, owners: Collection[Owner]) -> dict[Owner, int]:
    """Each owner's balance, in one query (an owner without changes has none here: 0)."""
    async with sessions() as session:
        rows = await session.execute(
            select(
                KarmaEntryRow.account_id,
                KarmaEntryRow.phone_identity_id,
                func.sum(KarmaEntryRow.amount),
            )
            .where(owned_by_any(KarmaEntryRow, owners))
            .group_by(KarmaEntryRow.account_id, KarmaEntryRow.phone_identity_id)
        )
        return {row_owner(a, p): int(total or 0) for a, p, total in rows}


async def karma_history(
    sessions: Sessions, who: OwnerLike, *, limit: int = 100
) -> list[KarmaEntry]:
    """The newest `limit` karma changes, newest first."""
    async with sessions() as session:
        rows = await session.scalars(
            select(KarmaEntryRow)
            .where(owned_by(KarmaEntryRow, who))
            .order_by(KarmaEntryRow.id.desc())
            .limit(limit)
        )
        return [_entry(row) for row in rows]


async def karma_since_each(
    sessions: Sessions, owners: Collection[Owner], since: datetime, reasons: Collection[str]
) -> dict[Owner, list[int]]:
    """The amounts booked for `reasons` at or after `since` (what the daily cap counts), of
    each of `owners`, in one query (a table's players after a game)."""
    async with sessions() as session:
        rows = await session.execute(
            select(
                KarmaEntryRow.account_id, KarmaEntryRow.phone_identity_id, KarmaEntryRow.amount
            ).where(
                owned_by_any(KarmaEntryRow, owners),
                KarmaEntryRow.created_at >= since,
                KarmaEntryRow.reason.in_(list(reasons)),
            )
        )
        out: dict[Owner, list[int]] = {}
        for account_id, phone_id, amount in rows:
            out.setdefault(row_owner(account_id, phone_id), []).append(amount)
        return out


async def game_booked(sessions: Sessions, game_id: str, reasons: Collection[str]) -> bool:
    """Whether any of `reasons` was booked for this game already (a game is booked once)."""
    async with sessions() as session:
        found = await session.scalar(
            select(KarmaEntryRow.id)
            .where(KarmaEntryRow.game_id == game_id, KarmaEntryRow.reason.in_(list(reasons)))
            .limit(1)
        )
    return found is not None


def seat_owner(account_id: int | None, phone_identity_id: int | None) -> Owner | None:
    """Who a seat's karma belongs to: its account, else the phone identity it was taken with;
    None for a guest (and a bot), who has no ledger."""
    if account_id is not None:
        return Owner.account(account_id)
    if phone_identity_id is not None:
        return Owner.phone(phone_identity_id)
    return None


async def tables_shared(
    sessions: Sessions, owners: Collection[Owner], since: datetime, *, besides: str, at_least: int
) -> int:
    """How many finished games created since `since` (but `besides`) had at least `at_least`
    of `owners` at their table (a seat is its owner's as in `seat_owner`).

    Counted by the database from those owners' seats alone: a Python loop over every earlier
    table's people ran on the event loop for every finished game, and it grew with how much
    the group had played (issue 16: seconds at a time in a long benchmark)."""
    accounts = [o.account_id for o in owners if o.account_id is not None]
    phones = [o.phone_id for o in owners if o.phone_id is not None]
    if not accounts and not phones:
        return 0
    theirs = or_(
        SeatRow.account_id.in_(accounts),
        and_(SeatRow.account_id.is_(None), SeatRow.phone_identity_id.in_(phones)),
    )
    people = func.count(func.distinct(SeatRow.account_id)) + func.count(
        func.distinct(case((SeatRow.account_id.is_(None), SeatRow.phone_identity_id)))
    )
    tables = (
        select(SeatRow.game_id)
        .join(GameRow, GameRow.id == SeatRow.game_id)
        .where(
            theirs,
            SeatRow.game_id != besides,
            GameRow.status == GameStatus.FINISHED,
            GameRow.created_at >= since,
        )
        .group_by(SeatRow.game_id)
        .having(people >= at_least)
        .subquery()
    )
    async with sessions() as session:
        found = await session.scalar(select(func.count()).select_from(tables))
    return int(found or 0)
