"""Game ownership leases (issue 15): one owner per game, renewed by it, taken over when it dies.

Time is passed in (`now`); these tests move a fixed clock by hand. The races run on separate
connections (several engines) against the real PostgreSQL and the SQLite file.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncEngine

from vollmond.store import (
    GameNotFoundError,
    LeaseLostError,
    NewEvent,
    SeqConflictError,
    Sessions,
    append_commands,
    append_events,
    create_engine,
    create_game,
    make_sessionmaker,
    read_commands,
    read_events,
)
from vollmond.store.leases import (
    Fence,
    Lease,
    NodeLeases,
    acquire_lease,
    check_fences,
    expire_leases,
    get_lease,
    lease_overview,
    node_leases,
    release_lease,
    renew_lease,
    renew_node_leases,
    take_over_expired_leases,
)
from vollmond.store.models import GameCommandRow

from .support import Target

T0 = datetime(2026, 12, 2, 4, 0, tzinfo=UTC)
TTL = timedelta(seconds=10)
OPTIONS: dict[str, Any] = {"size": 5}


async def new_game(sessions: Sessions) -> str:
    return (await create_game(sessions, world="werwolf", options=OPTIONS, seed=1)).id


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


async def test_a_free_game_is_acquired_for_the_time_to_live(sessions: Sessions) -> None:
    game = await new_game(sessions)
    assert await get_lease(sessions, game) is None
    lease = await acquire_lease(sessions, game, "node-a", now=T0, ttl=TTL)
    assert lease == Lease(game, "node-a", 1, T0, T0, T0 + TTL)
    assert await get_lease(sessions, game) == lease
    assert lease.live(at(9.9)) and not lease.live(at(10))


async def test_a_live_lease_is_not_acquired_by_another_node(sessions: Sessions) -> None:
    game = await new_game(sessions)
    await acquire_lease(sessions, game, "node-a", now=T0, ttl=TTL)
    assert await acquire_lease(sessions, game, "node-b", now=at(9.999), ttl=TTL) is None
    held = await get_lease(sessions, game)
    assert held is not None and held.owner == "node-a"


async def test_acquiring_ones_own_live_lease_renews_it_in_the_same_epoch(
    sessions: Sessions,
) -> None:
    game = await new_game(sessions)
    await acquire_lease(sessions, game, "node-a", now=T0, ttl=TTL)
    again = await acquire_lease(sessions, game, "node-a", now=at(5), ttl=TTL)
    assert again == Lease(game, "node-a", 1, T0, at(5), at(15))


async def test_an_expired_lease_is_acquired_by_another_node_in_a_new_epoch(
    sessions: Sessions,
) -> None:
    game = await new_game(sessions)
    await acquire_lease(sessions, game, "node-a", now=T0, ttl=TTL)
    lease = await acquire_lease(sessions, game, "node-b", now=at(10), ttl=TTL)
    assert lease == Lease(game, "node-b", 2, at(10), at(10), at(20))


async def test_only_the_owner_renews_and_only_while_the_lease_is_live(
    sessions: Sessions,
) -> None:
    game = await new_game(sessions)
    await acquire_lease(sessions, game, "node-a", now=T0, ttl=TTL)
    assert await renew_lease(sessions, game, "node-b", now=at(1), ttl=TTL) is None
    renewed = await renew_lease(sessions, game, "node-a", now=at(8), ttl=TTL)
    assert renewed == Lease(game, "node-a", 1, T0, at(8), at(18))
    # Too late: once expired the owner must acquire again (and may find it taken).
    assert await renew_lease(sessions, game, "node-a", now=at(18), ttl=TTL) is None
    assert await renew_lease(sessions, "no-such-game", "node-a", now=at(1), ttl=TTL) is None
    lease = await get_lease(sessions, game)
    assert lease is not None and lease.expires_at == at(18)


async def test_release_frees_the_lease_for_anyone_and_keeps_the_epoch_growing(
    sessions: Sessions,
) -> None:
    game = await new_game(sessions)
    await acquire_lease(sessions, game, "node-a", now=T0, ttl=TTL)
    assert not await release_lease(sessions, game, "node-b")
    assert await release_lease(sessions, game, "node-a")
    assert not await release_lease(sessions, game, "node-a")
    released = await get_lease(sessions, game)
    assert released is not None and released.owner is None and not released.live(at(1))
    assert await renew_lease(sessions, game, "node-a", now=at(1), ttl=TTL) is None
    lease = await acquire_lease(sessions, game, "node-b", now=at(1), ttl=TTL)
    assert lease == Lease(game, "node-b", 2, at(1), at(1), at(11))


async def test_a_released_lease_is_not_taken_over(sessions: Sessions) -> None:
    game = await new_game(sessions)
    await acquire_lease(sessions, game, "node-a", now=T0, ttl=TTL)
    await release_lease(sessions, game, "node-a")
    assert await take_over_expired_leases(sessions, "node-b", now=at(60), ttl=TTL) == []


async def test_a_nodes_heartbeat_renews_its_live_leases_only(sessions: Sessions) -> None:
    early, late, other = [await new_game(sessions) for _ in range(3)]
    await acquire_lease(sessions, early, "node-a", now=T0, ttl=TTL)
    await acquire_lease(sessions, late, "node-a", now=at(5), ttl=TTL)
    await acquire_lease(sessions, other, "node-b", now=at(5), ttl=TTL)
    renewed = await renew_node_leases(sessions, "node-a", now=at(12), ttl=TTL)
    assert [lease.game_id for lease in renewed] == [late]
    assert renewed[0].expires_at == at(22)
    mine = await node_leases(sessions, "node-a")
    assert sorted(lease.game_id for lease in mine) == sorted([early, late])
    assert {lease.game_id: lease.live(at(12)) for lease in mine} == {early: False, late: True}
    assert [lease.game_id for lease in await node_leases(sessions, "node-b")] == [other]


async def test_a_dead_nodes_leases_are_taken_over_after_they_expire(sessions: Sessions) -> None:
    games = sorted([await new_game(sessions) for _ in range(3)])
    for second, game in enumerate(games):
        await acquire_lease(sessions, game, "node-a", now=at(second), ttl=TTL)
    live = await new_game(sessions)
    await acquire_lease(sessions, live, "node-c", now=at(5), ttl=TTL)
    assert await take_over_expired_leases(sessions, "node-b", now=at(9), ttl=TTL) == []
    # At 11 s the first two expired (at 10 and 11 s); the third expires at 12 s.
    taken = await take_over_expired_leases(sessions, "node-b", now=at(11), ttl=TTL)
    assert taken == [Lease(game, "node-b", 2, at(11), at(11), at(21)) for game in games[:2]]
    later = await take_over_expired_leases(sessions, "node-b", now=at(12), ttl=TTL, limit=5)
    assert [lease.game_id for lease in later] == games[2:]
    assert await node_leases(sessions, "node-a") == []
    assert await renew_lease(sessions, games[0], "node-a", now=at(12), ttl=TTL) is None
    held = await get_lease(sessions, live)
    assert held is not None and held.owner == "node-c"


async def test_take_over_takes_at_most_the_limit_oldest_first(sessions: Sessions) -> None:
    games = [await new_game(sessions) for _ in range(4)]
    for second, game in enumerate(games):
        await acquire_lease(sessions, game, "node-a", now=at(second), ttl=TTL)
    taken = await take_over_expired_leases(sessions, "node-b", now=at(60), ttl=TTL, limit=2)
    assert sorted(lease.game_id for lease in taken) == sorted(games[:2])


async def test_a_lease_is_only_for_a_game_the_store_knows(sessions: Sessions) -> None:
    with pytest.raises(GameNotFoundError):
        await acquire_lease(sessions, "no-such-game", "node-a", now=T0, ttl=TTL)
    assert await get_lease(sessions, "no-such-game") is None


@pytest.mark.parametrize(
    ("node", "problem"), [("", "characters"), ("x" * 65, "characters"), ("a b", "spaces")]
)
async def test_a_node_id_must_name_a_node(sessions: Sessions, node: str, problem: str) -> None:
    game = await new_game(sessions)
    with pytest.raises(ValueError, match=problem):
        await acquire_lease(sessions, game, node, now=T0, ttl=TTL)


async def test_time_must_be_aware_and_the_ttl_positive(sessions: Sessions) -> None:
    game = await new_game(sessions)
    with pytest.raises(ValueError, match="naive"):
        await acquire_lease(sessions, game, "node-a", now=T0.replace(tzinfo=None), ttl=TTL)
    with pytest.raises(ValueError, match="positive"):
        await renew_lease(sessions, game, "node-a", now=T0, ttl=timedelta(0))
    with pytest.raises(ValueError, match="limit"):
        await take_over_expired_leases(sessions, "node-a", now=T0, ttl=TTL, limit=0)


# -- races ---------------------------------------------------------------------------------------
ENGINES = 4
PER_ENGINE = 5


async def racing_sessions(target: Target) -> list[AsyncEngine]:
    """Separate engines (pools) so the racers really run on different connections, each
    connection opened before the race starts."""
    engines = [create_engine(target.url, schema=target.schema) for _ in range(ENGINES)]
    for engine in engines:
        connections = [await engine.connect() for _ in range(PER_ENGINE)]
        for connection in connections:
            await connection.close()
    return engines


async def test_many_concurrent_acquirers_have_exactly_one_winner(
    target: Target, sessions: Sessions
) -> None:
    engines = await racing_sessions(target)
    try:
        racers = [make_sessionmaker(engine) for engine in engines for _ in range(PER_ENGINE)]
        for round_ in range(3):
            game = await new_game(sessions)
            if round_ == 2:  # the last round races for an expired lease
                await acquire_lease(sessions, game, "dead", now=T0, ttl=TTL)
            now = at(10 * round_ + 10)
            results = await asyncio.gather(
                *(
                    acquire_lease(racer, game, f"node-{i}", now=now, ttl=TTL)
                    for i, racer in enumerate(racers)
                )
            )
            winners = [lease for lease in results if lease is not None]
            assert len(winners) == 1, results
            assert await get_lease(sessions, game) == winners[0]
            assert winners[0].epoch == (2 if round_ == 2 else 1)
    finally:
        for engine in engines:
            await engine.dispose()


async def test_concurrent_takers_never_take_the_same_lease(
    target: Target, sessions: Sessions
) -> None:
    games = [await new_game(sessions) for _ in range(12)]
    for game in games:
        await acquire_lease(sessions, game, "dead", now=T0, ttl=TTL)
    engines = await racing_sessions(target)
    try:
        racers = [make_sessionmaker(engine) for engine in engines for _ in range(PER_ENGINE)]
        results = await asyncio.gather(
            *(
                take_over_expired_leases(racer, f"node-{i}", now=at(30), ttl=TTL, limit=3)
                for i, racer in enumerate(racers)
            )
        )
    finally:
        for engine in engines:
            await engine.dispose()
    taken = [lease for leases in results for lease in leases]
    assert sorted(lease.game_id for lease in taken) == sorted(games)
    for lease in taken:
        assert lease.epoch == 2
        assert await get_lease(sessions, lease.game_id) == lease


# -- fencing: an append carries the lease it was made under ----------------------------------------
def command(n: int) -> dict[str, Any]:
    return {"command": {"type": "Say", "n": n}, "timers": []}


async def test_an_append_under_a_lease_taken_over_is_refused_and_writes_nothing(
    sessions: Sessions,
) -> None:
    """Node a was paused past its ttl and node b took the game over: a's next append, under
    a's epoch, is refused (nothing of it written), while b appends at that very seq."""
    game = await new_game(sessions)
    held = await acquire_lease(sessions, game, "node-a", now=T0, ttl=TTL)
    assert held is not None
    mine = Fence("node-a", held.epoch)
    await append_commands(sessions, game, 1, [command(1)], fence=mine)
    await append_events(sessions, game, 1, [NewEvent("x", {}, "public")], fence=mine)

    [taken] = await take_over_expired_leases(sessions, "node-b", now=at(11), ttl=TTL)
    with pytest.raises(LeaseLostError) as refused:
        await append_commands(sessions, game, 2, [command(2)], fence=mine)
    assert (refused.value.game_id, refused.value.owner, refused.value.epoch) == (game, "node-a", 1)
    with pytest.raises(LeaseLostError):
        await append_events(sessions, game, 2, [NewEvent("y", {}, "public")], fence=mine)
    assert [c.seq for c in await read_commands(sessions, game)] == [1]
    assert [e.seq for e in await read_events(sessions, game)] == [1]

    theirs = Fence("node-b", taken.epoch)
    await append_commands(sessions, game, 2, [command(20)], fence=theirs)
    await append_events(sessions, game, 2, [NewEvent("z", {}, "public")], fence=theirs)
    assert [c.command for c in await read_commands(sessions, game)] == [command(1), command(20)]
    # An append without a fence (a game not run under leases) is not checked.
    await append_commands(sessions, game, 3, [command(3)])


async def test_a_stale_append_that_collides_with_the_new_owners_entry_is_told_it_is_stale(
    sessions: Sessions,
) -> None:
    game = await new_game(sessions)
    await acquire_lease(sessions, game, "node-a", now=T0, ttl=TTL)
    await append_commands(sessions, game, 1, [command(1)], fence=Fence("node-a", 1))
    await take_over_expired_leases(sessions, "node-b", now=at(11), ttl=TTL)
    await append_commands(sessions, game, 2, [command(20)], fence=Fence("node-b", 2))
    with pytest.raises(LeaseLostError):  # not SeqConflictError: the writer must stop, not retry
        await append_commands(sessions, game, 2, [command(2)], fence=Fence("node-a", 1))
    with pytest.raises(SeqConflictError):  # the current owner that lost track: a seq conflict
        await append_commands(sessions, game, 2, [command(2)], fence=Fence("node-b", 2))


async def test_an_append_after_the_lease_was_released_or_reacquired_is_refused(
    sessions: Sessions,
) -> None:
    game = await new_game(sessions)
    await acquire_lease(sessions, game, "node-a", now=T0, ttl=TTL)
    await release_lease(sessions, game, "node-a")
    with pytest.raises(LeaseLostError):
        await append_commands(sessions, game, 1, [command(1)], fence=Fence("node-a", 1))
    # Acquired again by the same node: a new epoch, and the old one stays refused.
    again = await acquire_lease(sessions, game, "node-a", now=at(1), ttl=TTL)
    assert again is not None and again.epoch == 2
    with pytest.raises(LeaseLostError):
        await append_commands(sessions, game, 1, [command(1)], fence=Fence("node-a", 1))
    with pytest.raises(LeaseLostError):  # never leased at all
        await append_commands(
            sessions, await new_game(sessions), 1, [command(1)], fence=Fence("node-a", 2)
        )
    await append_commands(sessions, game, 1, [command(1)], fence=Fence("node-a", 2))


async def test_a_takeover_waits_for_an_append_in_flight_so_the_new_owner_reads_it(
    target: Target, sessions: Sessions
) -> None:
    """The check and the append are one transaction: a node that comes for the expired lease
    while a fenced append is between its check and its commit gets it only after the commit
    (PostgreSQL: the lease row is locked for share, an acquirer waits and a taker skips the row
    until the next round; SQLite: the append holds the write lock), so the new owner's read of
    the log includes the entry and its own next append does not collide with it."""
    game = await new_game(sessions)
    await acquire_lease(sessions, game, "node-a", now=T0, ttl=TTL)
    other = create_engine(target.url, schema=target.schema)  # connections of its own
    try:
        rival = make_sessionmaker(other)
        async with sessions.begin() as session:
            row = {"game_id": game, "seq": 1, "command": command(1), "created_at": T0, "cid": None}
            await session.execute(insert(GameCommandRow), [row])
            await check_fences(session, [(game, Fence("node-a", 1))])
            taker = asyncio.create_task(
                take_over_expired_leases(rival, "node-c", now=at(11), ttl=TTL)
            )
            acquirer = asyncio.create_task(
                acquire_lease(rival, game, "node-b", now=at(11), ttl=TTL)
            )
            await asyncio.sleep(0.5)
            assert not acquirer.done()  # it waits for this transaction
            assert not taker.done() or taker.result() == []  # waits, or leaves the row be
        results = [await acquirer, *await taker]
        [taken] = [lease for lease in results if lease is not None]
        assert taken.epoch == 2
        assert [c.seq for c in await read_commands(rival, game)] == [1]
        await append_commands(rival, game, 2, [command(2)], fence=Fence(taken.owner or "", 2))
    finally:
        await other.dispose()


async def test_a_clean_stop_expires_its_leases_for_another_node_to_take_at_once(
    sessions: Sessions,
) -> None:
    mine, kept, other = [await new_game(sessions) for _ in range(3)]
    for game in (mine, kept):
        await acquire_lease(sessions, game, "node-a", now=T0, ttl=TTL)
    await acquire_lease(sessions, other, "node-c", now=T0, ttl=TTL)
    expired = await expire_leases(sessions, "node-a", [mine, other, "no-such-game"], now=at(1))
    assert expired == [Lease(mine, "node-a", 1, T0, T0, at(1))]
    assert await expire_leases(sessions, "node-a", [], now=at(1)) == []
    # Taken over at once, not a time-to-live later; the others stay where they were.
    taken = await take_over_expired_leases(sessions, "node-b", now=at(1), ttl=TTL)
    assert taken == [Lease(mine, "node-b", 2, at(1), at(1), at(11))]
    assert [lease.game_id for lease in await node_leases(sessions, "node-a")] == [kept]
    held = await get_lease(sessions, other)
    assert held is not None and held.owner == "node-c" and held.live(at(1))
    # Expired twice (a second stop) changes nothing; an expired lease is not the node's to end.
    assert await expire_leases(sessions, "node-a", [mine], now=at(2)) == []


async def test_the_overview_counts_each_nodes_live_and_expired_leases(sessions: Sessions) -> None:
    games = sorted([await new_game(sessions) for _ in range(5)])
    await acquire_lease(sessions, games[0], "node-a", now=T0, ttl=TTL)
    await acquire_lease(sessions, games[1], "node-a", now=at(4), ttl=TTL)
    await renew_lease(sessions, games[1], "node-a", now=at(8), ttl=TTL)
    await acquire_lease(sessions, games[2], "node-b", now=at(6), ttl=TTL)
    await acquire_lease(sessions, games[3], "node-c", now=at(1), ttl=TTL)
    await acquire_lease(sessions, games[4], "node-c", now=at(1), ttl=TTL)
    await release_lease(sessions, games[4], "node-c")  # free: nobody's
    nodes, leases = await lease_overview(sessions, now=at(12))
    assert nodes == [
        NodeLeases("node-a", live=1, expired=1, next_expiry=at(10), last_renewal=at(8)),
        NodeLeases("node-b", live=1, expired=0, next_expiry=at(16), last_renewal=at(6)),
        NodeLeases("node-c", live=0, expired=1, next_expiry=at(11), last_renewal=at(1)),
    ]
    assert [(lease.game_id, lease.owner) for lease in leases] == [
        (games[0], "node-a"),
        (games[3], "node-c"),
        (games[2], "node-b"),
        (games[1], "node-a"),
    ]
    assert len((await lease_overview(sessions, now=at(12), limit=2))[1]) == 2
