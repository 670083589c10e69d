"""Ownership from the store's leases (issue 15): who owns a game, and how a game moves when its
owner stops renewing. Two `LeaseOwnership`s (nodes a and b) on one SQLite store, their clock
moved by hand; the hub's hooks are recorded instead of resuming games; then two sharded hubs
on the local bus hand a game over."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.store.support import POSTGRES_URL
from vollmond.bots.table import BotSeat
from vollmond.engine.core import Viewer
from vollmond.engine.kit.commands import Say
from vollmond.engine.standard import GameOptions
from vollmond.engine.standard.types import DeckId, Phase, RoleId
from vollmond.service.actor import Accepted, GameClosedError
from vollmond.service.shards.lease_ownership import LeaseOwnership
from vollmond.service.shards.localbus import Broker, LocalTransport
from vollmond.service.shards.mirror import MirrorActor
from vollmond.service.shards.sharded_hub import ShardedHub
from vollmond.service.web.app import HubMaker
from vollmond.store import (
    Fence,
    Sessions,
    create_game,
    open_store,
    read_commands,
    read_events,
)
from vollmond.store.leases import get_lease
from vollmond.workers import hub_maker

from .test_shards import STANDARD, Seat, _evil_seat

TTL_S = 3.0
NODES = ("a", "b")


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 12, 2, 6, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


class Node:
    """A node's ownership with the hub's hooks recorded."""

    def __init__(self, store: Sessions, name: str, clock: Clock) -> None:
        self.ownership = LeaseOwnership(store, name, ttl_s=TTL_S, clock=clock)
        self.acquired: list[str] = []
        self.lost: list[str] = []
        self.ownership.on_acquired = self._acquired
        self.ownership.on_lost = self._lost

    async def _acquired(self, game_id: str) -> None:
        self.acquired.append(game_id)

    async def _lost(self, game_id: str) -> None:
        self.lost.append(game_id)


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Sessions]:
    async with open_store(f"sqlite+aiosqlite:///{tmp_path / 'db'}") as sessions:
        yield sessions


async def lease_hubs(
    store: Sessions, broker: Broker, clock: Any, names: Sequence[str], ttl_s: float
) -> list[ShardedHub]:
    """One sharded hub per name with leases (on `clock`) on the broker's local bus, each
    answering the others' calls: the nodes of a takeover test. The test closes them."""
    hubs = [
        ShardedHub(
            store,
            node=name,
            ownership=LeaseOwnership(store, name, ttl_s=ttl_s, clock=clock),
            transport=await LocalTransport.connect(broker.path),
        )
        for name in names
    ]
    for hub in hubs:
        await hub.serve_calls()
    return hubs


def lease_node_a(broker: Broker, ttl_s: float) -> HubMaker:
    """The hub of node a of two ("a", "b") with leases on the broker's local bus, for
    `running_service(make_hub=...)`: a node's web service around its sharded hub."""
    return hub_maker(
        "a",
        NODES,
        lambda: LocalTransport.connect(broker.path),
        lambda sessions: LeaseOwnership(sessions, "a", ttl_s=ttl_s),
    )


async def _found_on_a_joined_through_b(a: ShardedHub, b: ShardedHub) -> str:
    """A four-seat game founded on node a (its owner); the other three join through node b,
    so the last join starts the game on a."""
    options = STANDARD.decode_options({"players": 4, "world": "werwolf"})
    founded = await a.found(options, private=False, host_account_id=None, host_name="A")
    for name in "BCD":
        await b.join(founded.game.id, account_id=None, name=name)
    return founded.game.id


async def _game(store: Sessions) -> str:
    return (await create_game(store, world="werwolf", options={"size": 4}, seed=1)).id


async def test_the_first_node_asked_acquires_and_the_other_reads_it(store: Sessions) -> None:
    clock = Clock()
    a, b = Node(store, "a", clock), Node(store, "b", clock)
    game = await _game(store)
    assert await a.ownership.resolve(game) == "a"
    assert a.acquired == [game] and a.ownership.owner_of(game) == "a"
    assert await b.ownership.resolve(game) == "a"
    assert b.acquired == [] and b.ownership.owner_of(game) == "a"
    with pytest.raises(LookupError):
        b.ownership.owner_of("unknown")
    # Renewing keeps the game a's: b reads the row again after the expiry it knew.
    clock.advance(TTL_S / 3)
    await a.ownership.keep()
    clock.advance(TTL_S * 2 / 3 + 0.1)
    assert await b.ownership.resolve(game) == "a"
    await b.ownership.take_over()
    assert b.acquired == [] and a.lost == []


async def test_a_node_that_stops_renewing_loses_its_games_to_the_other(store: Sessions) -> None:
    clock = Clock()
    a, b = Node(store, "a", clock), Node(store, "b", clock)
    game = await _game(store)
    await a.ownership.resolve(game)
    first = await get_lease(store, game)
    assert first is not None and first.owner == "a"

    clock.advance(TTL_S / 2)
    await b.ownership.take_over()  # not expired yet
    assert b.acquired == []
    clock.advance(TTL_S)  # a renewed nothing: its lease has expired
    await b.ownership.take_over()
    assert b.acquired == [game] and b.ownership.owner_of(game) == "b"
    taken = await get_lease(store, game)
    assert taken is not None and taken.owner == "b" and taken.epoch == first.epoch + 1

    await a.ownership.keep()  # a comes back: the game is no longer its own
    assert a.lost == [game]
    assert await a.ownership.resolve(game) == "b"


async def test_an_asker_acquires_an_expired_lease_itself(store: Sessions) -> None:
    clock = Clock()
    a, b = Node(store, "a", clock), Node(store, "b", clock)
    game = await _game(store)
    await a.ownership.resolve(game)
    await b.ownership.resolve(game)
    b.ownership.forget(game)  # a did not answer
    assert await b.ownership.resolve(game) == "a"  # its lease is still live
    clock.advance(TTL_S)
    b.ownership.forget(game)
    assert await b.ownership.resolve(game) == "b"
    assert b.acquired == [game]


async def test_a_released_game_is_not_taken_over(store: Sessions) -> None:
    clock = Clock()
    a, b = Node(store, "a", clock), Node(store, "b", clock)
    game = await _game(store)
    await a.ownership.resolve(game)
    await a.ownership.release(game)
    clock.advance(TTL_S * 2)
    await b.ownership.take_over()
    assert b.acquired == []
    await a.ownership.keep()
    assert a.lost == []  # given back, not lost


async def test_a_mirror_s_command_reaches_the_node_that_took_the_game_over(
    store: Sessions, tmp_path: Path
) -> None:
    """Two sharded hubs with leases on the local bus: a owns the game, b follows it; a goes
    away without giving its lease back; once it expired, b's mirror's command makes b acquire
    the lease, resume the game from the log and answer the command itself."""
    clock = Clock()
    broker = Broker(str(tmp_path / "bus.sock"))
    await broker.start()
    hubs = await lease_hubs(store, broker, clock, NODES, TTL_S)
    a, b = hubs
    try:
        game = await _found_on_a_joined_through_b(a, b)
        assert game in a.actors and game not in b.actors
        evil = _evil_seat(a.actors[game])
        mirror = await b.readable(game)
        assert isinstance(mirror, MirrorActor)
        seat = Seat(Viewer.player(evil))
        mirror.subscribe(seat)
        first = await get_lease(store, game)
        assert first is not None and first.owner == "a"

        await a.close()  # gone (cleanly: its lease expired at once, test_a_clean_stop_...)
        clock.advance(TTL_S)
        outcome = await mirror.submit(Say(evil, "noch da"))
        assert isinstance(outcome, Accepted)
        assert game in b.actors and b.owns(game)
        taken = await get_lease(store, game)
        assert taken is not None and (taken.owner, taken.epoch) == ("b", first.epoch + 1)
        assert seat.got[-1][0] == outcome.first_seq and seat.got[-1][1] == "chat"
    finally:
        await b.close()
        await broker.close()


async def test_a_command_during_the_takeover_waits_for_the_resume(
    store: Sessions, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Node b holds the lease it just took over while it still resumes the game from the log
    (held up here): a command sent then — by b's mirror, through the owner call b answers
    itself, and to b's hub directly — waits for the resume and is applied, instead of being
    told the game does not run (the end-to-end failover test met the second as
    `not_running`)."""
    clock = Clock()
    broker = Broker(str(tmp_path / "bus.sock"))
    await broker.start()
    a, b = await lease_hubs(store, broker, clock, NODES, TTL_S)
    try:
        game = await _found_on_a_joined_through_b(a, b)
        evil = _evil_seat(a.actors[game])
        mirror = await b.readable(game)
        assert isinstance(mirror, MirrorActor)
        resuming, go_on = asyncio.Event(), asyncio.Event()
        resume = b._resume

        async def held_up(game_row: Any) -> bool:
            resuming.set()
            await go_on.wait()
            return await resume(game_row)

        monkeypatch.setattr(b, "_resume", held_up)
        await a.close()  # its lease expires; b takes it over (told so, or its own round)
        clock.advance(TTL_S)
        assert b.leases is not None
        taking = asyncio.create_task(b.leases.take_over())
        await asyncio.wait_for(resuming.wait(), 5)
        assert b.owns(game) and game not in b.actors  # the lease is b's, the actor not yet
        sent = [
            asyncio.create_task(mirror.submit(Say(evil, "durch den Spiegel"))),
            asyncio.create_task(b.submit(game, Say(evil, "an den Hub"))),
        ]
        await asyncio.sleep(0.2)  # both have reached b's owner side and wait there
        assert not any(task.done() for task in sent), [t.result() for t in sent if t.done()]
        go_on.set()
        await taking
        outcomes = await asyncio.gather(*sent)
        assert all(isinstance(outcome, Accepted) for outcome in outcomes), outcomes
        said = [_said(c.command) for c in await read_commands(store, game)]
        assert sorted(map(str, said[-2:])) == ["an den Hub", "durch den Spiegel"], said
    finally:
        await b.close()
        await broker.close()


@pytest.fixture
async def shared_store(database: tuple[str, str | None], tmp_path: Path) -> AsyncIterator[Sessions]:
    """One store for two hubs: SQLite, and the real PostgreSQL (the nodes' database)."""
    backend, schema = database
    url = POSTGRES_URL if backend == "postgresql" else f"sqlite+aiosqlite:///{tmp_path / 'db'}"
    async with open_store(url, schema=schema) as sessions:
        yield sessions


async def test_a_paused_owner_is_refused_by_the_store_and_the_new_owner_goes_on(
    shared_store: Sessions, tmp_path: Path
) -> None:
    """Node a owns a game and is paused (not dead) past its lease's ttl; node b takes the lease
    over and resumes the game from the log. Then a wakes up with its actor still running and a
    command to apply: the store refuses a's append under its old epoch, a's actor stops, and the
    command goes to b. Nothing b wrote is lost: b's next command continues the log, whose every
    entry was written under b's lease after the takeover."""
    store = shared_store
    clock = Clock()
    broker = Broker(str(tmp_path / "bus.sock"))
    await broker.start()
    hubs = await lease_hubs(store, broker, clock, NODES, TTL_S)
    a, b = hubs
    try:
        game = await _found_on_a_joined_through_b(a, b)
        stale = a.actors[game]
        evil = _evil_seat(stale)
        assert stale.fence == Fence("a", 1)
        assert isinstance(await a.submit(game, Say(evil, "vor der Pause")), Accepted)

        clock.advance(TTL_S)  # a, paused, renewed nothing
        assert b.leases is not None
        await b.leases.take_over()
        assert game in b.actors and b.actors[game].fence == Fence("b", 2)
        entries = len(await read_commands(store, game))

        # a wakes up: its actor still runs the game and applies a command.
        outcome = await a.submit(game, Say(evil, "nach der Pause"))
        assert isinstance(outcome, Accepted)  # answered by b, the owner now
        await asyncio.sleep(0)  # a's hub stops the refused actor
        assert game not in a.actors and not a.owns(game)
        assert a.leases is not None and a.leases.counters.fenced == 1  # in a's /metrics
        with pytest.raises(GameClosedError):
            await stale.submit(Say(evil, "noch einmal"))

        after = await b.submit(game, Say(evil, "weiter"))
        assert isinstance(after, Accepted)
        commands = await read_commands(store, game)
        assert len(commands) == entries + 2
        texts = [_said(c.command) for c in commands if _said(c.command)]
        assert texts == ["vor der Pause", "nach der Pause", "weiter"]
        events = await read_events(store, game)
        assert [e.seq for e in events] == list(range(1, len(events) + 1))
    finally:
        for hub in hubs:
            await hub.close()
        await broker.close()


def _said(entry: Any) -> str | None:
    """The text of a logged Say command, None for any other entry."""
    command = entry.get("command")
    if isinstance(command, dict) and command.get("type") == "Say":
        return str(command["text"])
    return None


async def test_a_clean_stop_hands_the_games_on_without_waiting_for_the_ttl(
    store: Sessions, tmp_path: Path
) -> None:
    """Node a owns a running game and stops cleanly (close: actors stopped, log writer closed):
    it expires its lease and says so on the bus, and node b takes the game over and resumes it
    at once — the clock has not moved, so no time-to-live passed. A crash would leave the
    lease to expire after the ttl (test_a_mirror_s_command_...)."""
    clock = Clock()
    broker = Broker(str(tmp_path / "bus.sock"))
    await broker.start()
    hubs = await lease_hubs(store, broker, clock, NODES, TTL_S)
    a, b = hubs
    try:
        game = await _found_on_a_joined_through_b(a, b)
        evil = _evil_seat(a.actors[game])
        assert isinstance(await a.submit(game, Say(evil, "bis gleich")), Accepted)
        first = await get_lease(store, game)
        assert first is not None and first.owner == "a"

        await a.close()
        assert a.leases is not None and a.leases.counters.handed_on == 1
        for _ in range(100):
            if game in b.actors:
                break
            await asyncio.sleep(0.02)
        assert game in b.actors and b.owns(game)
        taken = await get_lease(store, game)
        assert taken is not None and (taken.owner, taken.epoch) == ("b", first.epoch + 1)
        assert taken.acquired_at == clock.now  # no time-to-live waited for
        after = await b.submit(game, Say(evil, "wieder da"))
        assert isinstance(after, Accepted)
        texts = [_said(c.command) for c in await read_commands(store, game)]
        assert [t for t in texts if t] == ["bis gleich", "wieder da"]
    finally:
        await b.close()
        await broker.close()


async def test_a_bot_table_taken_over_is_played_on_by_the_new_owner_s_bots_only(
    shared_store: Sessions, tmp_path: Path
) -> None:
    """Node a runs a table of six bots and is paused past its lease's ttl right after the
    deal; node b takes the game over, resumes it and seats its own bots, which play the night:
    the night room's votes fix the victim long before the 120-s night is up. a's bots, woken
    by their timers before b's (a: 0.6-1.2 s into the night, b: 2.4-3.6 s), try their seats on
    a's actor, which the store refuses: they stop there instead of being sent on to b, so no
    seat is played by two bots."""
    store = shared_store
    clock = Clock()
    broker = Broker(str(tmp_path / "bus.sock"))
    await broker.start()
    hubs = await lease_hubs(store, broker, clock, NODES, TTL_S)
    a, b = hubs
    a.bot_patience, b.bot_patience = (0.005, 0.01), (0.02, 0.03)
    try:
        deck = ((RoleId.EVIL, 2), (RoleId.SEER, 1), (RoleId.FILLER, 3))
        options = GameOptions(players=6, deck=DeckId.CUSTOM, custom_roles=deck)
        founded = await a.found(options, private=False, host_account_id=None)
        game = founded.game.id
        assert await a.fill_with_bots(game, by_account_id=None) == 6
        stale = a.actors[game]
        a_bots = [s for s in stale.subscribers if isinstance(s, BotSeat)]
        assert len(a_bots) == 6

        clock.advance(TTL_S)  # a, paused, renewed nothing
        assert b.leases is not None
        await b.leases.take_over()
        moved = b.actors[game]
        b_bots = [s for s in moved.subscribers if isinstance(s, BotSeat)]
        assert sorted(bot.seat for bot in b_bots) == [1, 2, 3, 4, 5, 6]
        before = [len(bot.commands) for bot in a_bots]  # none, unless a's bots were quicker

        async with asyncio.timeout(30):
            while moved.state is None or not (
                moved.state.night and moved.state.night.victim_locked
            ):
                await asyncio.sleep(0.05)
        assert moved.state.phase is Phase.NIGHT
        assert any(bot.commands for bot in b_bots)
        assert [len(bot.commands) for bot in a_bots] == before
        assert not any(isinstance(s, BotSeat) for s in stale.subscribers)
        assert game not in a.actors
    finally:
        for hub in hubs:
            await hub.close()
        await broker.close()
