"""Credit and karma ledgers, premium and grants."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy import delete, func, select, update
from sqlalchemy.exc import DBAPIError

from vollmond.store import (
    AccountNotFoundError,
    GameNotFoundError,
    GrantNotFoundError,
    InsufficientCreditError,
    Sessions,
    active_grants,
    add_grant,
    create_account,
    credit_balance,
    credit_change,
    credit_history,
    get_account,
    grant_premium,
    has_premium,
    karma_change,
    karma_changes,
    karma_history,
    karma_total,
    premium_until,
    revoke_grant,
)
from vollmond.store.models import CreditEntryRow, KarmaEntryRow

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


async def _account_id(sessions: Sessions, name: str = "Anna") -> int:
    return (await create_account(sessions, name, "mondschein-42")).id


async def _ledger_sum(sessions: Sessions, account_id: int) -> int:
    async with sessions() as session:
        total = await session.scalar(
            select(func.coalesce(func.sum(CreditEntryRow.amount), 0)).where(
                CreditEntryRow.account_id == account_id
            )
        )
    return int(total or 0)


async def test_credit_changes_are_booked_with_reason(sessions: Sessions) -> None:
    account_id = await _account_id(sessions)
    assert await credit_balance(sessions, account_id) == 0
    top_up = await credit_change(sessions, account_id, 50, "Aufladung")
    spend = await credit_change(sessions, account_id, -20, "private round, 12 seats")
    assert (top_up.balance_after, spend.balance_after) == (50, 30)
    assert await credit_balance(sessions, account_id) == 30
    assert (await get_account(sessions, account_id)).credit_balance == 30
    history = await credit_history(sessions, account_id)
    assert [(e.amount, e.reason) for e in history] == [
        (-20, "private round, 12 seats"),
        (50, "Aufladung"),
    ]


async def test_credit_never_goes_negative(sessions: Sessions) -> None:
    account_id = await _account_id(sessions)
    await credit_change(sessions, account_id, 10, "top up")
    with pytest.raises(InsufficientCreditError) as raised:
        await credit_change(sessions, account_id, -11, "too much")
    assert (raised.value.balance, raised.value.amount) == (10, -11)
    assert await credit_balance(sessions, account_id) == 10
    assert len(await credit_history(sessions, account_id)) == 1
    await credit_change(sessions, account_id, -10, "exactly all")
    assert await credit_balance(sessions, account_id) == 0


async def test_concurrent_spends_never_overdraw(sessions: Sessions) -> None:
    """Ten spends of 30 race for 100 credit: exactly three succeed, on either backend."""
    account_id = await _account_id(sessions)
    await credit_change(sessions, account_id, 100, "top up")
    results = await asyncio.gather(
        *(credit_change(sessions, account_id, -30, f"spend {i}") for i in range(10)),
        return_exceptions=True,
    )
    failures = [r for r in results if isinstance(r, BaseException)]
    assert all(isinstance(f, InsufficientCreditError) for f in failures), failures
    assert len(results) - len(failures) == 3
    assert await credit_balance(sessions, account_id) == 10
    assert await _ledger_sum(sessions, account_id) == 10
    balances = sorted(e.balance_after for e in await credit_history(sessions, account_id))
    assert balances == [10, 40, 70, 100]


async def test_concurrent_mixed_changes_keep_ledger_and_balance_equal(sessions: Sessions) -> None:
    account_id = await _account_id(sessions)
    changes = [5, -3, 7, -10, 2, -1, 8, -6, 4, -9] * 2
    results = await asyncio.gather(
        *(credit_change(sessions, account_id, c, "mixed") for c in changes),
        return_exceptions=True,
    )
    assert all(
        not isinstance(r, BaseException) or isinstance(r, InsufficientCreditError) for r in results
    )
    balance = await credit_balance(sessions, account_id)
    assert balance >= 0
    assert balance == await _ledger_sum(sessions, account_id)


async def test_credit_arguments_are_checked(sessions: Sessions) -> None:
    account_id = await _account_id(sessions)
    with pytest.raises(ValueError, match="zero"):
        await credit_change(sessions, account_id, 0, "nothing")
    with pytest.raises(ValueError, match="reason"):
        await credit_change(sessions, account_id, 5, "  ")
    with pytest.raises(AccountNotFoundError):
        await credit_change(sessions, account_id + 1000, 5, "ghost")
    with pytest.raises(AccountNotFoundError):
        await credit_balance(sessions, account_id + 1000)
    with pytest.raises(GameNotFoundError):
        await credit_change(sessions, account_id, 5, "refund", game_id="no-such-game")
    assert await credit_balance(sessions, account_id) == 0


async def test_ledgers_are_append_only_in_the_database(sessions: Sessions) -> None:
    account_id = await _account_id(sessions)
    await credit_change(sessions, account_id, 10, "top up")
    await karma_change(sessions, account_id, 1, "fair play")
    for statement in (
        update(CreditEntryRow).values(amount=1000),
        delete(CreditEntryRow),
        update(KarmaEntryRow).values(amount=1000),
        delete(KarmaEntryRow),
    ):
        with pytest.raises(DBAPIError, match="append-only"):
            async with sessions.begin() as session:
                await session.execute(statement)
    assert await credit_balance(sessions, account_id) == 10
    assert await _ledger_sum(sessions, account_id) == 10


async def test_karma_ledger(sessions: Sessions) -> None:
    account_id = await _account_id(sessions)
    assert await karma_total(sessions, account_id) == 0
    await karma_change(sessions, account_id, 3, "played to the end")
    await karma_change(sessions, account_id, -5, "left during the night")
    assert await karma_total(sessions, account_id) == -2
    history = await karma_history(sessions, account_id)
    assert [(e.amount, e.reason) for e in history] == [
        (-5, "left during the night"),
        (3, "played to the end"),
    ]
    with pytest.raises(AccountNotFoundError):
        await karma_change(sessions, account_id + 1000, 1, "ghost")
    with pytest.raises(TypeError):
        await karma_change(sessions, account_id, True, "bool is not an amount")


async def test_premium_is_active_only_within_its_period(sessions: Sessions) -> None:
    account_id = await _account_id(sessions)
    assert not await has_premium(sessions, account_id, NOW)
    until = NOW + timedelta(days=30)
    period = await grant_premium(sessions, account_id, until=until, reason="bought", now=NOW)
    assert period.expires_at == until
    assert not await has_premium(sessions, account_id, NOW - timedelta(seconds=1))
    assert await has_premium(sessions, account_id, NOW)
    assert await has_premium(sessions, account_id, until - timedelta(seconds=1))
    assert not await has_premium(sessions, account_id, until)
    assert await premium_until(sessions, account_id, NOW) == until
    with pytest.raises(ValueError, match="end after"):
        await grant_premium(sessions, account_id, until=NOW, reason="empty", now=NOW)
    with pytest.raises(AccountNotFoundError):
        await grant_premium(sessions, account_id + 1000, until=until, reason="x", now=NOW)


async def test_premium_compares_correctly_across_timezones(sessions: Sessions) -> None:
    account_id = await _account_id(sessions)
    berlin = datetime(2026, 12, 1, 2, 0, tzinfo=timezone(timedelta(hours=1)))
    await grant_premium(sessions, account_id, until=berlin, reason="gift", now=NOW)
    until = await premium_until(sessions, account_id, NOW)
    assert until == berlin
    assert until is not None
    assert until.tzinfo is UTC
    assert until.hour == 1
    with pytest.raises(ValueError, match="naive"):
        await has_premium(sessions, account_id, NOW.replace(tzinfo=None))


async def test_grants_expire_and_can_be_revoked(sessions: Sessions) -> None:
    account_id = await _account_id(sessions)
    admin_id = await _account_id(sessions, "Admin")
    seats = await add_grant(
        sessions,
        account_id,
        "private_seats",
        value=16,
        reason="club evening",
        granted_by=admin_id,
        now=NOW,
    )
    await add_grant(
        sessions,
        account_id,
        "spectate_all",
        reason="trial",
        expires_at=NOW + timedelta(hours=1),
        now=NOW,
    )
    assert {g.name for g in await active_grants(sessions, account_id, NOW)} == {
        "private_seats",
        "spectate_all",
    }
    later = NOW + timedelta(hours=2)
    assert [g.name for g in await active_grants(sessions, account_id, later)] == ["private_seats"]
    only = await active_grants(sessions, account_id, NOW, name="private_seats")
    assert [(g.value, g.granted_by) for g in only] == [(16, admin_id)]
    await revoke_grant(sessions, seats.id, now=later)
    assert await active_grants(sessions, account_id, later + timedelta(seconds=1)) == []
    assert len(await active_grants(sessions, account_id, NOW, name="private_seats")) == 1
    with pytest.raises(GrantNotFoundError):
        await revoke_grant(sessions, seats.id + 1000)


async def test_a_games_karma_is_booked_whole_or_not_at_all(sessions: Sessions) -> None:
    """`karma_changes` books a finished game's lines in one transaction: an unknown owner or
    a bad line refuses all of them, and nothing is half booked."""
    anna = await _account_id(sessions, "Anna")
    bert = await _account_id(sessions, "Bert")
    booked = await karma_changes(
        sessions, [(anna, 10, " game_won "), (bert, 4, "game_stayed"), (anna, 2, "game_stayed")]
    )
    assert [(e.account_id, e.amount, e.reason) for e in booked] == [
        (anna, 10, "game_won"),
        (bert, 4, "game_stayed"),
        (anna, 2, "game_stayed"),
    ]
    with pytest.raises(AccountNotFoundError):
        await karma_changes(sessions, [(bert, 5, "game_won"), (anna + bert + 99, 5, "game_won")])
    with pytest.raises(ValueError, match="zero"):
        await karma_changes(sessions, [(bert, 5, "game_won"), (anna, 0, "game_won")])
    assert await karma_total(sessions, anna) == 12
    assert await karma_total(sessions, bert) == 4
    assert await karma_changes(sessions, []) == []
