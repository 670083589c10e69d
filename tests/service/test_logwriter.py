"""LogWriter: appends of many games in one transaction, with the store's guarantees kept.

Run on SQLite and on the real PostgreSQL.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from tests.store.support import POSTGRES_URL
from vollmond.service.logwriter import KnownEnds, LogAppend, LogWriter
from vollmond.store import (
    Fence,
    LeaseLostError,
    NewEvent,
    SeqConflictError,
    Sessions,
    append_commands,
    append_events,
    create_game,
    open_store,
    read_commands,
    read_events,
)
from vollmond.store.leases import acquire_lease, take_over_expired_leases
from vollmond.store.models import GameStatus


@pytest.fixture
async def store(database: tuple[str, str | None], tmp_path: Path) -> AsyncIterator[Sessions]:
    backend, schema = database
    url = POSTGRES_URL if backend == "postgresql" else f"sqlite+aiosqlite:///{tmp_path / 'db'}"
    async with open_store(url, schema=schema) as sessions:
        yield sessions


async def _game(store: Sessions) -> str:
    game = await create_game(store, world="werwolf", options={}, seed=1, status=GameStatus.RUNNING)
    return game.id


def _append(
    game: str, command_seq: int, event_seq: int, events: int, fence: Fence | None = None
) -> LogAppend:
    return LogAppend(
        game,
        command_seq,
        {"n": command_seq},
        event_seq,
        [NewEvent(f"e{event_seq + i}", {"i": i}, {"kind": "all"}) for i in range(events)],
        fence=fence,
    )


async def test_appends_of_many_games_land_in_order(store: Sessions) -> None:
    writer = LogWriter(store)
    games = [await _game(store) for _ in range(3)]
    try:
        for game in games:  # each log starts with its first entry, as GameActor.start does
            await writer.append(_append(game, 1, 1, 2))
        # Concurrent appends (one in flight per game, as the actors do) share transactions.
        for step in range(3):
            await asyncio.gather(
                *(writer.append(_append(g, 2 + step, 3 + 2 * step, 2)) for g in games)
            )
    finally:
        await writer.close()
    assert writer.batches < writer.appends
    for game in games:
        assert [c.seq for c in await read_commands(store, game)] == [1, 2, 3, 4]
        events = await read_events(store, game)
        assert [e.seq for e in events] == list(range(1, 9))
        assert [e.kind for e in events] == [f"e{i}" for i in range(1, 9)]
        assert [e.payload for e in events] == [{"i": i % 2} for i in range(8)]
        assert all(e.audience == {"kind": "all"} for e in events)
        assert [c.command for c in await read_commands(store, game)] == [
            {"n": n} for n in range(1, 5)
        ]


async def test_each_append_reports_how_long_it_waited_for_its_commit(
    store: Sessions, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`/metrics` shows how long commands wait for the disk (vollmond_log_append_wait_seconds):
    the writer tells each append's wait, its batch's commit included."""
    writer = LogWriter(store)
    waits: list[float] = []
    writer.on_waited = waits.append
    write = writer._write

    async def slow_disk(items: list[LogAppend]) -> None:
        await asyncio.sleep(0.2)
        await write(items)

    monkeypatch.setattr(writer, "_write", slow_disk)
    games = [await _game(store) for _ in range(3)]
    try:
        await asyncio.gather(*(writer.append(_append(g, 1, 1, 1)) for g in games))
    finally:
        await writer.close()
    assert len(waits) == 3
    assert all(0.2 <= wait < 5 for wait in waits)


async def test_the_writer_stores_every_column_as_the_store_itself_does(
    store: Sessions, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SQLite writer builds its own multi-row INSERTs (`RowsInsert`); what lands must be
    byte for byte what the store's append functions write: JSON as the same text, the same
    timestamp format, NULL where they put NULL."""
    at = datetime(2026, 12, 6, 9, 30, 15, 123456, tzinfo=UTC)
    monkeypatch.setattr("vollmond.service.logwriter.utcnow", lambda: at)
    by_store, by_writer = await _game(store), await _game(store)
    command = {"type": "Vote", "actor": 3, "target": None, "text": 'Grüße, "du"'}
    events = [
        NewEvent("vote", {"seat": 3, "nested": {"a": [1, 2.5, None]}}, {"kind": "all"}),
        NewEvent("whisper", {}, {"kind": "seats", "seats": [1, 4]}),
    ]
    await append_commands(store, by_store, 1, [command], cids=["3:k2f9"], now=at)
    await append_events(store, by_store, 1, events, now=at)
    await append_commands(store, by_store, 2, [command], cids=[None], now=at)
    writer = LogWriter(store)
    try:
        await writer.append(LogAppend(by_writer, 1, command, 1, events, cid="3:k2f9"))
        await writer.append(LogAppend(by_writer, 2, command, 3, []))
    finally:
        await writer.close()
    assert writer.batches == 2  # both through the batch path (a failed batch is retried alone)

    async def raw(table: str, game: str) -> list[tuple[Any, ...]]:
        async with store() as session:
            rows = await session.execute(
                text(f"SELECT * FROM {table} WHERE game_id = :g ORDER BY seq"), {"g": game}
            )
            return [tuple(v for k, v in row._mapping.items() if k != "game_id") for row in rows]

    for table in ("game_commands", "game_events"):
        assert await raw(table, by_writer) == await raw(table, by_store), table
    assert len(await raw("game_commands", by_writer)) == 2


async def test_a_conflicting_append_fails_alone(store: Sessions) -> None:
    writer = LogWriter(store)
    good, bad, gap = await _game(store), await _game(store), await _game(store)
    try:
        for game in (good, bad, gap):
            await writer.append(_append(game, 1, 1, 1))
        results = await asyncio.gather(
            writer.append(_append(good, 2, 2, 1)),
            writer.append(_append(bad, 1, 2, 1)),  # a second writer at command seq 1
            writer.append(_append(gap, 3, 2, 1)),  # skipped command seq 2
            return_exceptions=True,
        )
    finally:
        await writer.close()
    assert results[0] is None
    assert isinstance(results[1], SeqConflictError)
    assert isinstance(results[2], SeqConflictError)
    assert [c.seq for c in await read_commands(store, good)] == [1, 2]
    assert [c.seq for c in await read_commands(store, bad)] == [1]
    assert [c.seq for c in await read_commands(store, gap)] == [1]
    assert [e.seq for e in await read_events(store, bad)] == [1]


async def test_an_append_after_its_own_reads_no_predecessor(store: Sessions) -> None:
    """The check costs no read when the writer committed the predecessor itself (flat cost)."""
    writer = LogWriter(store)
    games = [await _game(store) for _ in range(3)]
    try:
        for game in games:
            await writer.append(_append(game, 1, 1, 2))
        for step in range(3):
            await asyncio.gather(
                *(writer.append(_append(g, 2 + step, 3 + 2 * step, 2)) for g in games)
            )
    finally:
        await writer.close()
    assert writer.predecessor_reads == 0
    for game in games:
        assert [c.seq for c in await read_commands(store, game)] == [1, 2, 3, 4]


async def test_a_second_writer_is_refused_by_the_key_and_its_entries_are_read(
    store: Sessions,
) -> None:
    """Two writers on one log (a restarted or duplicated actor): what one writer remembers
    never lets the other's entries be overwritten, and a continuation of them is read back."""
    first, second = LogWriter(store), LogWriter(store)
    game = await _game(store)
    try:
        await first.append(_append(game, 1, 1, 1))
        await second.append(_append(game, 2, 2, 1))  # the second writer reads command 1 back
        assert second.predecessor_reads == 2
        with pytest.raises(SeqConflictError):  # the first writer's stale end: seq 2 is taken
            await first.append(_append(game, 2, 2, 1))
        await first.append(_append(game, 3, 3, 1))  # continues the second writer's entry
    finally:
        await first.close()
        await second.close()
    assert [c.command for c in await read_commands(store, game)] == [{"n": 1}, {"n": 2}, {"n": 3}]
    assert [e.seq for e in await read_events(store, game)] == [1, 2, 3]


async def test_a_gap_inside_one_batch_is_refused(store: Sessions) -> None:
    """Two appends of one game in the same batch: the later one must continue the earlier."""
    writer = LogWriter(store)
    game = await _game(store)
    try:
        await writer.append(_append(game, 1, 1, 1))
        results = await asyncio.gather(
            writer.append(_append(game, 2, 2, 1)),
            writer.append(_append(game, 4, 4, 1)),  # skipped command seq 3 and event seq 3
            return_exceptions=True,
        )
    finally:
        await writer.close()
    assert results[0] is None
    assert isinstance(results[1], SeqConflictError)
    assert [c.seq for c in await read_commands(store, game)] == [1, 2]
    assert [e.seq for e in await read_events(store, game)] == [1, 2]


async def test_a_forgotten_game_is_read_back_and_still_checked(store: Sessions) -> None:
    """The remembered ends are bounded: a forgotten game costs a read, never the check."""
    writer = LogWriter(store)
    writer.known = KnownEnds(capacity=1)
    first, second = await _game(store), await _game(store)
    try:
        await writer.append(_append(first, 1, 1, 1))
        await writer.append(_append(second, 1, 1, 1))  # `first` is forgotten
        reads = writer.predecessor_reads
        await writer.append(_append(first, 2, 2, 1))
        assert writer.predecessor_reads == reads + 2  # its command and its event predecessor
        await writer.append(_append(first, 3, 3, 1))  # remembered again: no read
        assert writer.predecessor_reads == reads + 2
        with pytest.raises(SeqConflictError):  # forgotten again, and a gap is still refused
            await writer.append(_append(second, 3, 2, 1))
    finally:
        await writer.close()
    assert [c.seq for c in await read_commands(store, first)] == [1, 2, 3]
    assert [c.seq for c in await read_commands(store, second)] == [1]


async def test_a_batch_refuses_the_appends_of_a_lease_taken_over_and_writes_the_rest(
    store: Sessions,
) -> None:
    """Node a's writer batches the appends of its games, each under a's lease; the lease of one
    was taken over by node b (a was paused past the ttl). That append is refused with
    LeaseLostError and nothing of it is written; the others of the batch are; b continues the
    game at that very seq. The lease rows are read once per batch (a flat cost)."""
    t0 = datetime(2026, 12, 2, 6, 0, tzinfo=UTC)
    ttl = timedelta(seconds=3)
    games = [await _game(store) for _ in range(4)]
    fences = {}
    for game in games:
        lease = await acquire_lease(store, game, "a", now=t0, ttl=ttl)
        assert lease is not None
        fences[game] = Fence("a", lease.epoch)
    writer = LogWriter(store)
    try:
        await asyncio.gather(*(writer.append(_append(g, 1, 1, 2, fences[g])) for g in games))
        assert (writer.appends, writer.batches, writer.fence_reads) == (4, 1, 1)
        # a is paused past the ttl; b takes one of its games over (a new epoch).
        [taken] = await take_over_expired_leases(store, "b", now=t0 + ttl, ttl=ttl, limit=1)
        lost = taken.game_id
        results = await asyncio.gather(
            *(writer.append(_append(g, 2, 3, 2, fences[g])) for g in games),
            return_exceptions=True,
        )
        assert writer.fence_reads == 2  # the batch read the four leases at once, and failed
    finally:
        await writer.close()
    for game, result in zip(games, results, strict=True):
        if game == lost:
            assert isinstance(result, LeaseLostError)
            assert [c.seq for c in await read_commands(store, game)] == [1]
            assert [e.seq for e in await read_events(store, game)] == [1, 2]
        else:
            assert result is None
            assert [c.seq for c in await read_commands(store, game)] == [1, 2]
    other = LogWriter(store)  # node b's
    try:
        await other.append(_append(lost, 2, 3, 1, Fence("b", taken.epoch)))
    finally:
        await other.close()
    assert [e.seq for e in await read_events(store, lost)] == [1, 2, 3]
