"""The ledgers read for a whole table at once (karma after a game, issue 16): each owner's
figures from one query are the ones the per-owner functions give, for accounts and
phone-only identities alike, and owners outside the group are never counted."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from vollmond.store import (
    Sessions,
    active_grants,
    add_grant,
    create_account,
    karma_change,
    karma_since_each,
    karma_total,
    karma_totals,
)
from vollmond.store.entitlements import active_grants_each
from vollmond.store.owners import Owner
from vollmond.store.phone import create_phone_identity

NOW = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)


async def owners(sessions: Sessions) -> tuple[Owner, Owner, Owner, Owner]:
    anna = Owner.account((await create_account(sessions, "Anna", "mondschein-42")).id)
    bert = Owner.account((await create_account(sessions, "Bert", "mondschein-42")).id)
    caller = Owner.phone((await create_phone_identity(sessions)).id)
    outsider = Owner.account((await create_account(sessions, "Dora", "mondschein-42")).id)
    return anna, bert, caller, outsider


async def test_a_tables_balances_and_earnings_in_one_query_each(sessions: Sessions) -> None:
    anna, bert, caller, outsider = await owners(sessions)
    yesterday = NOW - timedelta(days=1)
    for who, amount, reason, when in [
        (anna, 5, "game_won", yesterday),
        (anna, 3, "game_won", NOW),
        (anna, -2, "moderation", NOW),
        (caller, 4, "game_played", NOW),
        (outsider, 9, "game_won", NOW),
    ]:
        await karma_change(sessions, who, amount, reason, now=when)
    group = [anna, bert, caller]

    totals = await karma_totals(sessions, group)
    assert totals == {anna: 6, caller: 4}  # Bert has no lines; Dora is not asked about
    for who in group:
        assert totals.get(who, 0) == await karma_total(sessions, who)

    since = await karma_since_each(sessions, group, NOW, ["game_won", "game_played"])
    assert {who: sorted(amounts) for who, amounts in since.items()} == {anna: [3], caller: [4]}
    assert await karma_totals(sessions, []) == {}


async def test_a_tables_running_grants_in_one_query(sessions: Sessions) -> None:
    anna, bert, caller, outsider = await owners(sessions)
    name = "karma_unlock"
    later = NOW + timedelta(days=7)
    await add_grant(sessions, anna, name, reason="r", expires_at=later, now=NOW)
    await add_grant(sessions, caller, name, reason="r", expires_at=later, now=NOW)
    await add_grant(sessions, bert, name, reason="r", expires_at=NOW - timedelta(hours=1),
                    now=NOW - timedelta(days=2))  # fmt: skip
    await add_grant(sessions, bert, "other", reason="r", expires_at=later, now=NOW)
    await add_grant(sessions, outsider, name, reason="r", expires_at=later, now=NOW)

    running = await active_grants_each(sessions, [anna, bert, caller], NOW, name)
    assert set(running) == {anna, caller}  # Bert's expired, his other grant is not asked for
    for who in (anna, bert, caller):
        expected = await active_grants(sessions, who, NOW, name)
        assert [g.id for g in running.get(who, [])] == [g.id for g in expected]
