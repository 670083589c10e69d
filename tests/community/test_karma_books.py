"""Booking a finished game's karma (P3, P4) and the unlock above the threshold (P5), on SQLite
and PostgreSQL: a real bot game's log in the store, the booking read back from the ledger."""

from __future__ import annotations

import functools
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import update

from vollmond.community.karma import KarmaReason
from vollmond.engine.ruleset import get_ruleset
from vollmond.engine.standard import GameOptions
from vollmond.engine.standard.commands import Leave
from vollmond.engine.standard.sim import PlayedGame, play_game
from vollmond.service.hub import Hub, LobbyError
from vollmond.service.karma import KARMA_UNLOCK_GRANT, KarmaBooks
from vollmond.service.policy import KarmaPath, Policy, Standing, unlock_private_size
from vollmond.settings.karma import KarmaSettings
from vollmond.store import (
    InsufficientCreditError,
    Sessions,
    active_grants,
    append_commands,
    create_game,
    create_phone_identity,
    credit_balance,
    credit_change,
    grant_premium,
    karma_change,
    karma_history,
    karma_total,
    set_game_status,
    tables_shared,
)
from vollmond.store.models import AccountRow, GameStatus, SeatRow
from vollmond.store.owners import Owner
from vollmond.store.seats import add_seat, number_houses

RULES = KarmaSettings(min_humans=3)
POLICY = Policy(karma=KarmaPath(enabled=True, max_size=15, threshold=40))
DAY = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


@functools.cache
def bot_game(players: int, seed: int) -> PlayedGame:
    """Deterministic per (players, seed): played once for the whole module."""
    return play_game(GameOptions(players=players), seed)


async def quick_account(sessions: Sessions, name: str) -> int:
    """An account without a usable password: these tests never sign in, and hashing a
    password (argon2) for each of dozens of accounts cost seconds on a loaded machine."""
    row = AccountRow(name=name, name_key=name.lower(), password_hash="-")
    async with sessions.begin() as session:
        session.add(row)
    return row.id


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


async def finished_game(
    sessions: Sessions,
    names: list[str | None],
    *,
    seed: int = 3,
    private: bool = False,
    leaver: int | None = None,
) -> tuple[str, object, dict[int, int]]:
    """A whole bot game stored as the service stores it; `names` are the accounts in seat
    order (None: a bot's seat). Returns (game id, final state, seat -> account id)."""
    rules = get_ruleset("standard")
    played = bot_game(len(names), seed)
    final = played.state
    commands = list(played.commands)
    if leaver is not None:
        # The log says the seat left (the booking reads the log, it does not replay it).
        commands.insert(0, Leave(leaver))
    game = await create_game(
        sessions,
        world="werwolf",
        options={"engine": {}},
        seed=seed,
        invitation_code="12345" if private else None,
        invitation_key=b"k" * 32 if private else None,
        status=GameStatus.RUNNING,
    )
    accounts: dict[int, int] = {}
    for index, name in enumerate(names, start=1):
        account_id = None
        if name is not None:
            account_id = await quick_account(sessions, f"{name}{game.id[:6]}")
            accounts[index] = account_id
        await add_seat(
            sessions,
            game.id,
            account_id=account_id,
            name=name or f"Bot {index}",
            channel="web" if name else "bot",
            token=f"t{index}{game.id}",
        )
    await number_houses(sessions, game.id)
    entries = [{"command": None}] + [{"command": rules.encode_command(c)} for c in commands]
    await append_commands(sessions, game.id, 1, entries)
    return game.id, final, accounts


@pytest.mark.rule("P3")
async def test_a_finished_game_books_each_human_once(sessions: Sessions) -> None:
    game_id, state, accounts = await finished_game(
        sessions, ["Ada", "Bert", "Cleo", "Dora", None, None, None, None]
    )
    karma = KarmaBooks(sessions, RULES, POLICY, Clock(DAY))
    booked = await karma.book_game(game_id, get_ruleset("standard"), state)
    assert set(booked.awards) == {Owner.account(a) for a in accounts.values()}
    results = get_ruleset("standard").seat_results(state, [])  # type: ignore[attr-defined]
    for seat, account_id in accounts.items():
        history = await karma_history(sessions, account_id)
        reasons = {entry.reason for entry in history}
        assert KarmaReason.STAY.value in reasons
        assert (KarmaReason.WIN.value in reasons) == results[seat].won
        assert (KarmaReason.SURVIVE.value in reasons) == results[seat].survived
        assert all(entry.game_id == game_id for entry in history)
        assert (
            await karma_total(sessions, account_id)
            == booked.awards[Owner.account(account_id)].total
        )
    again = await karma.book_game(game_id, get_ruleset("standard"), state)
    assert again.awards == {}  # a resumed game is not booked twice
    for account_id in accounts.values():
        assert (
            await karma_total(sessions, account_id)
            == booked.awards[Owner.account(account_id)].total
        )


@pytest.mark.rule("P3")
async def test_a_leaver_loses_karma(sessions: Sessions) -> None:
    game_id, state, accounts = await finished_game(
        sessions, ["Ada", "Bert", "Cleo", "Dora", None, None, None, None], leaver=2
    )
    karma = KarmaBooks(sessions, RULES, POLICY, Clock(DAY))
    await karma.book_game(game_id, get_ruleset("standard"), state)
    history = await karma_history(sessions, accounts[2])
    assert [(e.reason, e.amount) for e in history] == [(KarmaReason.LEAVE.value, -RULES.leave)]
    assert await karma_total(sessions, accounts[1]) > 0


@pytest.mark.rule("P4")
async def test_too_few_humans_and_bots_earn_nothing(sessions: Sessions) -> None:
    game_id, state, accounts = await finished_game(
        sessions, ["Ada", "Bert", None, None, None, None, None, None]
    )
    booked = await KarmaBooks(sessions, RULES, POLICY, Clock(DAY)).book_game(
        game_id, get_ruleset("standard"), state
    )
    assert all(award.total == 0 for award in booked.awards.values())
    for account_id in accounts.values():
        assert await karma_history(sessions, account_id) == []


@pytest.mark.rule("P4")
async def test_the_same_group_again_earns_less_and_the_cap_holds(sessions: Sessions) -> None:
    rules = KarmaSettings(min_humans=3, daily_cap=1_000)
    clock = Clock(DAY)
    karma = KarmaBooks(sessions, rules, POLICY, clock)
    first_id, first_state, accounts = await finished_game(
        sessions, ["Ada", "Bert", "Cleo", "Dora", None, None, None, None]
    )
    first = await karma.book_game(first_id, get_ruleset("standard"), first_state)
    await set_game_status(sessions, first_id, GameStatus.FINISHED)
    # The same four people sit down again: the same accounts, a new game.
    second_id, _, _ = await finished_game(
        sessions, ["Eve", "Finn", "Gus", "Hal", None, None, None, None]
    )
    async with sessions.begin() as session:
        for seat, account_id in accounts.items():
            await session.execute(
                update(SeatRow)
                .where(SeatRow.game_id == second_id, SeatRow.house == seat)
                .values(account_id=account_id)
            )
    clock.now = DAY + timedelta(hours=1)
    second = await karma.book_game(second_id, get_ruleset("standard"), first_state)
    for account_id in accounts.values():
        assert (
            second.awards[Owner.account(account_id)].total
            < first.awards[Owner.account(account_id)].total
        )
    # The daily cap: a tight cap books at most that much today, whatever is played.
    tight = KarmaBooks(sessions, KarmaSettings(min_humans=3, daily_cap=12), POLICY, clock)
    third_id, third_state, third_accounts = await finished_game(
        sessions, ["Ida", "Jan", "Kai", "Lea", None, None, None, None], seed=5
    )
    await tight.book_game(third_id, get_ruleset("standard"), third_state)
    for account_id in third_accounts.values():
        assert await karma_total(sessions, account_id) <= 12


async def table(
    sessions: Sessions,
    owners: list[tuple[int | None, int | None]],
    *,
    status: GameStatus = GameStatus.FINISHED,
    created: datetime | None = None,
) -> str:
    """A game whose seats are (account id, phone identity id) pairs, with the given status."""
    game = await create_game(
        sessions, world="werwolf", options={}, seed=1, status=status, now=created
    )
    for index, (account_id, phone_id) in enumerate(owners, start=1):
        await add_seat(
            sessions,
            game.id,
            account_id=account_id,
            phone_identity_id=phone_id,
            name=f"p{index}",
            channel="web",
            token=f"t{index}{game.id}",
        )
    return game.id


@pytest.mark.rule("P4")
async def test_the_store_counts_the_tables_a_group_shared(sessions: Sessions) -> None:
    """`tables_shared` counts, in the database, the earlier finished tables where enough of
    a group sat: by account, or by phone identity for a seat taken without an account."""
    a, b, c, d = [await quick_account(sessions, f"Shared{i}") for i in range(4)]
    p = (await create_phone_identity(sessions)).id
    linked = (await create_phone_identity(sessions)).id
    group = {Owner.account(a), Owner.account(b), Owner.account(c), Owner.phone(p)}
    since = datetime.now(UTC) - timedelta(days=7)
    now_table = await table(sessions, [(a, None), (b, None), (c, None), (None, p)])
    await table(sessions, [(a, None), (b, None), (c, None), (None, p), (None, None)])  # all 4
    await table(sessions, [(a, None), (b, None), (None, p), (d, None)])  # 3 of them
    await table(sessions, [(a, None), (d, None), (None, None)])  # 1 of them
    await table(sessions, [(a, linked), (b, None), (c, None)])  # 3: the seat is a's account
    await table(sessions, [(None, None), (d, p)])  # p sat with an account: d's seat, 0
    await table(sessions, [(a, None), (a, None), (b, None)])  # a twice is one person: 2
    await table(sessions, [(a, None), (b, None), (c, None)], status=GameStatus.RUNNING)
    await table(sessions, [(a, None), (b, None), (c, None)], created=since - timedelta(days=1))

    async def shared(at_least: int) -> int:
        return await tables_shared(sessions, group, since, besides=now_table, at_least=at_least)

    assert await shared(4) == 1
    assert await shared(3) == 3
    assert await shared(2) == 4
    assert await tables_shared(sessions, [], since, besides=now_table, at_least=2) == 0


@pytest.mark.rule("P5")
async def test_karma_above_the_threshold_unlocks_for_a_limited_time(sessions: Sessions) -> None:
    account_id = await quick_account(sessions, "Unlock")
    clock = Clock(DAY)
    karma = KarmaBooks(sessions, RULES, POLICY, clock)
    assert await karma.unlock_if_due(account_id) is None
    await karma_change(sessions, account_id, POLICY.karma.threshold, "games")
    until = await karma.unlock_if_due(account_id)
    assert until == DAY + timedelta(days=RULES.unlock_days)
    standing = Standing(premium=False, karma=0, credit=0, karma_unlock_until=until)
    assert unlock_private_size(POLICY, POLICY.karma.max_size, standing).path == "karma"
    # Karma falls below the threshold: the running unlock holds until its day...
    await karma_change(sessions, account_id, -30, "kicked")
    clock.now = DAY + timedelta(days=RULES.unlock_days - 1)
    assert await karma.unlock_if_due(account_id) == until
    # ...and then ends, and is not renewed while karma stays below.
    clock.now = DAY + timedelta(days=RULES.unlock_days, seconds=1)
    assert await karma.unlock_if_due(account_id) is None
    assert await active_grants(sessions, account_id, clock.now, KARMA_UNLOCK_GRANT) == []
    locked = Standing(premium=False, karma=10, credit=0)
    with pytest.raises(ValueError):
        unlock_private_size(POLICY, POLICY.karma.max_size, locked)


async def phone_only(sessions: Sessions, game_id: str, seats: list[int]) -> dict[int, Owner]:
    """Those seats were taken by callers signed in with a phone ID and PIN, without an
    account (what `Hub.join` stores for them): seat -> their phone identity."""
    owners = {}
    for house in seats:
        identity = await create_phone_identity(sessions)
        async with sessions.begin() as session:
            await session.execute(
                update(SeatRow)
                .where(SeatRow.game_id == game_id, SeatRow.house == house)
                .values(account_id=None, phone_identity_id=identity.id, channel="phone")
            )
        owners[house] = Owner.phone(identity.id)
    return owners


@pytest.mark.rule("P3")
async def test_a_phone_only_seat_earns_karma_like_an_account(sessions: Sessions) -> None:
    game_id, state, accounts = await finished_game(
        sessions, ["Ada", "Bert", "Cleo", "Dora", None, None, None, None]
    )
    phones = await phone_only(sessions, game_id, [3, 4])
    karma = KarmaBooks(sessions, RULES, POLICY, Clock(DAY))
    booked = await karma.book_game(game_id, get_ruleset("standard"), state)
    assert set(booked.awards) == {
        Owner.account(accounts[1]),
        Owner.account(accounts[2]),
        *phones.values(),
    }
    results = get_ruleset("standard").seat_results(state, [])  # type: ignore[attr-defined]
    for seat, phone in phones.items():
        history = await karma_history(sessions, phone)
        reasons = {entry.reason for entry in history}
        assert KarmaReason.STAY.value in reasons
        assert (KarmaReason.WIN.value in reasons) == results[seat].won
        assert all(e.phone_identity_id == phone.phone_id and e.account_id is None for e in history)
        assert await karma_total(sessions, phone) == booked.awards[phone].total > 0
        # The account the seat was first made with got nothing: the seat is the phone's.
        assert await karma_history(sessions, accounts[seat]) == []
    assert (await karma.book_game(game_id, get_ruleset("standard"), state)).awards == {}


@pytest.mark.rule("P4")
async def test_phone_only_players_obey_the_cap_and_the_same_group_rule(sessions: Sessions) -> None:
    rules = KarmaSettings(min_humans=3, daily_cap=1_000)
    clock = Clock(DAY)
    karma = KarmaBooks(sessions, rules, POLICY, clock)
    first_id, first_state, _ = await finished_game(
        sessions, ["Ada", "Bert", "Cleo", "Dora", None, None, None, None]
    )
    phones = await phone_only(sessions, first_id, [1, 2, 3, 4])
    first = await karma.book_game(first_id, get_ruleset("standard"), first_state)
    await set_game_status(sessions, first_id, GameStatus.FINISHED)
    # The same four phone-only callers sit down again.
    second_id, _, _ = await finished_game(
        sessions, ["Eve", "Finn", "Gus", "Hal", None, None, None, None]
    )
    async with sessions.begin() as session:
        for seat, phone in phones.items():
            await session.execute(
                update(SeatRow)
                .where(SeatRow.game_id == second_id, SeatRow.house == seat)
                .values(account_id=None, phone_identity_id=phone.phone_id, channel="phone")
            )
    clock.now = DAY + timedelta(hours=1)
    second = await karma.book_game(second_id, get_ruleset("standard"), first_state)
    for phone in phones.values():
        assert 0 < second.awards[phone].total < first.awards[phone].total
    tight = KarmaBooks(sessions, KarmaSettings(min_humans=3, daily_cap=12), POLICY, clock)
    third_id, third_state, _ = await finished_game(
        sessions, ["Ida", "Jan", "Kai", "Lea", None, None, None, None], seed=5
    )
    for phone in (await phone_only(sessions, third_id, [1, 2, 3, 4])).values():
        await tight.book_game(third_id, get_ruleset("standard"), third_state)
        assert 0 < await karma_total(sessions, phone) <= 12


@pytest.mark.rule("P4")
async def test_bots_and_guests_earn_nothing_beside_phone_players(sessions: Sessions) -> None:
    game_id, state, accounts = await finished_game(
        sessions, ["Ada", "Bert", "Cleo", "Gast", None, None, None, None]
    )
    phones = await phone_only(sessions, game_id, [1, 2, 3])
    async with sessions.begin() as session:  # seat 4: a phone guest, no identity
        await session.execute(
            update(SeatRow)
            .where(SeatRow.game_id == game_id, SeatRow.house == 4)
            .values(account_id=None, channel="phone")
        )
    booked = await KarmaBooks(sessions, RULES, POLICY, Clock(DAY)).book_game(
        game_id, get_ruleset("standard"), state
    )
    assert set(booked.awards) == set(phones.values())
    assert await karma_history(sessions, accounts[4]) == []


@pytest.mark.rule("P5")
async def test_a_phone_only_standing_unlocks_from_its_own_ledgers(sessions: Sessions) -> None:
    phone = Owner.phone((await create_phone_identity(sessions)).id)
    hub = Hub(sessions, POLICY, karma=RULES)
    try:
        assert (await hub.standing(phone)).karma == 0
        await karma_change(sessions, phone, POLICY.karma.threshold, "games")
        standing = await hub.standing(phone)
        assert standing.karma == POLICY.karma.threshold and standing.karma_unlocked
        assert unlock_private_size(POLICY, POLICY.karma.max_size, standing).path == "karma"
        grants = await active_grants(sessions, phone, datetime.now(UTC), KARMA_UNLOCK_GRANT)
        assert [g.phone_identity_id for g in grants] == [phone.phone_id]
        await credit_change(sessions, phone, 70, "Gutschrift")
        await grant_premium(
            sessions, phone, until=datetime.now(UTC) + timedelta(days=3), reason="Test"
        )
        standing = await hub.standing(phone)
        assert standing.credit == 70 and standing.premium
        with pytest.raises(InsufficientCreditError):
            await credit_change(sessions, phone, -71, "zu viel")
    finally:
        await hub.close()


@pytest.mark.rule("P2")
async def test_a_phone_only_founder_pays_from_and_is_refunded_to_their_own_credit(
    sessions: Sessions,
) -> None:
    phone = Owner.phone((await create_phone_identity(sessions)).id)
    await credit_change(sessions, phone, 60, "Gutschrift")
    hub = Hub(sessions, POLICY, karma=RULES)
    try:
        founded = await hub.found(
            GameOptions(players=12),
            private=True,
            host_account_id=None,
            host_phone_id=phone.phone_id,
        )
        assert await credit_balance(sessions, phone) == 60 - POLICY.credit.cost
        await hub.abort(founded.game.id)
        assert await credit_balance(sessions, phone) == 60
        with pytest.raises(LobbyError):  # a guest (no ledger) may not found it at all
            await hub.found(GameOptions(players=12), private=True, host_account_id=None)
    finally:
        await hub.close()
