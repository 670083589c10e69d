"""Log writer: the cost of one group-commit batch as the game logs grow, old check vs new.

    .venv/bin/python -m benchmarks.logwriter [--sizes 10000,100000,1000000] [--games 100]
        [--backends sqlite,postgresql] [--postgres-url postgresql+asyncpg://...] [--json-out F]

The log is pre-filled (one INSERT ... SELECT per step, no Python per row) to each size: that
many event rows, plus a quarter as many command rows, spread over 1,000 finished games. At each
size, a batch is `--games` appends (one command and three events per game, the shape of a real
command) committed through `LogWriter` in one transaction, in three variants taking turns:

- old: the check this writer used before, kept here as the BASELINE (not in the product): one
  `(game_id, seq) IN (...)` query over the whole batch;
- new: the writer as it is, in its steady state (it committed each game's predecessor itself,
  so it reads nothing back);
- new, cold: the writer as it is with nothing remembered (its first batch after a start): one
  primary-key read per game and log;
- new, fenced: the steady state with every append carrying its game's lease (node, epoch), as
  on a node with `--ownership leases`: one more query per batch reading (PostgreSQL: locking
  for share) the batch's lease rows.

SQLite uses a file in a temporary directory; PostgreSQL a fresh schema that is dropped at the
end. Figures are medians over `--repeats` batches per variant and size.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Insert, Select, bindparam, select, text, tuple_

from benchmarks.jsonline import append_json_line
from vollmond.service.logwriter import (
    COMMANDS,
    EVENTS,
    KnownEnds,
    LogAppend,
    LogWriter,
    _statements,
    predecessor_reads,
)
from vollmond.store import Fence, NewEvent, Sessions, create_game, open_store
from vollmond.store.db import create_engine
from vollmond.store.leases import acquire_lease
from vollmond.store.models import GameStatus
from vollmond.store.types import utcnow

POSTGRES_URL = "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
FILL_GAMES = 1000
EVENTS_PER_COMMAND = 4  # the fill's ratio of event rows to command rows
BATCH_EVENTS = 3
LEASE_NODE = "bench"


def old_checks(items: list[LogAppend]) -> list[tuple[Select[Any], int]]:
    """The baseline: the previous writer's predecessor check, one tuple-IN query per log."""
    first_command = {i.game_id: i.command_seq for i in reversed(items)}
    first_event = {i.game_id: i.event_seq for i in reversed(items) if i.events}
    checks: list[tuple[Select[Any], int]] = []
    for table, firsts in ((COMMANDS, first_command), (EVENTS, first_event)):
        wanted = {(game, seq - 1) for game, seq in firsts.items() if seq > 1}
        if wanted:
            game_id, seq = table.c.game_id, table.c.seq
            query = select(game_id, seq).where(tuple_(game_id, seq).in_(sorted(wanted)))
            checks.append((query, len(wanted)))
    return checks


Inserts = list[tuple[Insert, list[dict[str, Any]]]]


class OldCheckWriter(LogWriter):
    """The same writer, inserts and transaction, with the old whole-batch check."""

    async def _write(self, items: list[LogAppend]) -> None:
        inserts = _statements(items, KnownEnds()).inserts
        checks = old_checks(items)
        if self._sync_engine is not None:
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(self._executor, self._old_sync, inserts, checks)
            return
        async with self.sessions.begin() as session:
            connection = await session.connection()
            for statement, rows in inserts:
                await connection.execute(statement, rows)
            for check, expected in checks:
                if len((await connection.execute(check)).all()) != expected:
                    raise LookupError("a log would have a gap")

    def _old_sync(self, inserts: Inserts, checks: list[tuple[Select[Any], int]]) -> None:
        assert self._sync_engine is not None
        with self._sync_engine.begin() as connection:
            for statement, rows in inserts:
                connection.execute(statement, rows)
            for check, expected in checks:
                if len(connection.execute(check).all()) != expected:
                    raise LookupError("a log would have a gap")


@asynccontextmanager
async def scratch_store(backend: str, postgres_url: str) -> AsyncIterator[Sessions]:
    if backend == "sqlite":
        with tempfile.TemporaryDirectory(prefix="vollmond-logbench-") as directory:
            async with open_store(f"sqlite+aiosqlite:///{Path(directory) / 'log.db'}") as s:
                yield s
        return
    schema = f"vollmond_logbench_{uuid.uuid4().hex[:12]}"
    admin = create_engine(postgres_url)
    async with admin.begin() as connection:
        await connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    try:
        async with open_store(postgres_url, schema=schema) as sessions:
            yield sessions
    finally:
        async with admin.begin() as connection:
            await connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        await admin.dispose()


async def fill(sessions: Sessions, backend: str, per_game_from: int, per_game_to: int) -> None:
    """Events per_game_from..per_game_to (and their commands) for every fill game, in SQL."""
    if per_game_to < per_game_from:
        return
    series = (
        "WITH RECURSIVE s(n) AS (SELECT :lo UNION ALL SELECT n + 1 FROM s WHERE n < :hi) "
        if backend == "sqlite"
        else ""
    )
    source = (
        "s"
        if backend == "sqlite"
        else "generate_series(CAST(:lo AS INTEGER), CAST(:hi AS INTEGER)) AS s(n)"
    )
    created = bindparam("created", utcnow(), type_=EVENTS.c.created_at.type)
    payload = bindparam("payload", {"fill": True}, type_=EVENTS.c.payload.type)
    audience = bindparam("audience", {"kind": "all"}, type_=EVENTS.c.audience.type)
    events = text(
        f"{series}INSERT INTO game_events (game_id, seq, kind, payload, audience, created_at) "
        f"SELECT g.id, s.n, 'fill', :payload, :audience, :created FROM games g, {source} "
        "WHERE g.id LIKE 'fill%'"
    ).bindparams(created, payload, audience)
    commands = text(
        f"{series}INSERT INTO game_commands (game_id, seq, command, created_at) "
        f"SELECT g.id, s.n, :payload, :created FROM games g, {source} WHERE g.id LIKE 'fill%'"
    ).bindparams(created, payload)
    command_from = (per_game_from - 1) // EVENTS_PER_COMMAND + 1
    command_to = per_game_to // EVENTS_PER_COMMAND
    async with sessions.begin() as session:
        await session.execute(events, {"lo": per_game_from, "hi": per_game_to})
        if command_to >= command_from:
            await session.execute(commands, {"lo": command_from, "hi": command_to})
    if backend == "postgresql":
        async with sessions.begin() as session:
            await session.execute(text("ANALYZE game_events"))
            await session.execute(text("ANALYZE game_commands"))


class Games:
    """The games of the measured batches and where each one's logs end."""

    def __init__(self, ids: list[str]) -> None:
        self.ids = ids
        self.next_command = dict.fromkeys(ids, 1)
        self.next_event = dict.fromkeys(ids, 1)

    def batch(self, fence: Fence | None = None) -> list[LogAppend]:
        items = []
        for game in self.ids:
            command, event = self.next_command[game], self.next_event[game]
            events = [NewEvent("bench", {"i": i}, {"kind": "all"}) for i in range(BATCH_EVENTS)]
            item = LogAppend(game, command, {"n": command}, event, events, cid=None, fence=fence)
            items.append(item)
            self.next_command[game] = command + 1
            self.next_event[game] = event + BATCH_EVENTS
        return items


async def time_checks(sessions: Sessions, games: Games, repeats: int) -> dict[str, list[float]]:
    """The predecessor checks alone, in a read transaction: the old tuple-IN queries against
    the new writer's reads with nothing remembered (with something remembered it reads nothing).
    """
    items = [
        LogAppend(g, games.next_command[g], None, games.next_event[g], [NewEvent("x", 0, 0)])
        for g in games.ids
    ]  # what the next batch would check: every game's last entries exist
    cold = _statements(items, KnownEnds()).checks
    times: dict[str, list[float]] = {"check_old": [], "check_cold": []}
    async with sessions() as session:
        connection = await session.connection()
        for _ in range(repeats):
            started = time.perf_counter()
            for query, expected in old_checks(items):
                assert len((await connection.execute(query)).all()) == expected
            times["check_old"].append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            for read, params, expected in predecessor_reads(cold):
                assert len((await connection.execute(read, params)).all()) == expected
            times["check_cold"].append((time.perf_counter() - started) * 1000)
    return times


async def timed_batch(writer: LogWriter, items: list[LogAppend]) -> float:
    batches = writer.batches
    started = time.perf_counter()
    await asyncio.gather(*(writer.append(item) for item in items))
    elapsed = time.perf_counter() - started
    if writer.batches != batches + 1:
        raise RuntimeError("the appends did not share one batch; the figure would be wrong")
    return elapsed * 1000


async def measure_backend(
    backend: str, sizes: list[int], games: int, repeats: int, postgres_url: str
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    async with scratch_store(backend, postgres_url) as sessions:
        for index in range(FILL_GAMES):
            await create_game(
                sessions,
                world="werwolf",
                options={},
                seed=index,
                game_id=f"fill{index:05d}",
                status=GameStatus.FINISHED,
            )
        batch_games = Games([f"bench{index:04d}" for index in range(games)])
        for index, game_id in enumerate(batch_games.ids):
            await create_game(
                sessions,
                world="werwolf",
                options={},
                seed=index,
                game_id=game_id,
                status=GameStatus.RUNNING,
            )
        day = timedelta(days=1)
        for game_id in [f"fill{index:05d}" for index in range(FILL_GAMES)] + batch_games.ids:
            await acquire_lease(sessions, game_id, LEASE_NODE, now=utcnow(), ttl=day)
        fence = Fence(LEASE_NODE, 1)
        new, old = LogWriter(sessions), OldCheckWriter(sessions)
        try:
            await timed_batch(new, batch_games.batch())  # each log's first entry; warms up
            filled = 0
            for size in sizes:
                per_game = size // FILL_GAMES
                started = time.perf_counter()
                await fill(sessions, backend, filled + 1, per_game)
                filled = per_game
                seconds = time.perf_counter() - started
                _log(f"{backend}: filled to {size:,} event rows in {seconds:.1f} s")
                await timed_batch(old, batch_games.batch())  # warm the old writer's connection
                times: dict[str, list[float]] = {
                    "old": [],
                    "new": [],
                    "new_fenced": [],
                    "new_cold": [],
                }
                for _ in range(repeats):
                    items = batch_games.batch()
                    times["old"].append(await timed_batch(old, items))
                    # Steady state: the new writer is the only writer, so it knows these ends.
                    new.known.committed(items)
                    times["new"].append(await timed_batch(new, batch_games.batch()))
                    times["new_fenced"].append(await timed_batch(new, batch_games.batch(fence)))
                    new.known = KnownEnds()  # forget: every predecessor is read back
                    times["new_cold"].append(await timed_batch(new, batch_games.batch()))
                checks = await time_checks(sessions, batch_games, repeats)
                median = {k: statistics.median(v) for k, v in (times | checks).items()}
                row = {
                    "backend": backend,
                    "event_rows": size,
                    "command_rows": size // EVENTS_PER_COMMAND,
                    "batch_appends": games,
                    "old_ms": round(median["old"], 3),
                    "new_ms": round(median["new"], 3),
                    "new_cold_ms": round(median["new_cold"], 3),
                    "new_fenced_ms": round(median["new_fenced"], 3),
                    "old_over_new": round(median["old"] / median["new"], 2),
                    "check_old_ms": round(median["check_old"], 3),
                    "check_cold_ms": round(median["check_cold"], 3),
                }
                rows.append(row)
                _log(json.dumps(row))
        finally:
            await new.close()
            await old.close()
    return rows


def _log(line: str) -> None:
    sys.stderr.write(f"[logwriter {time.strftime('%H:%M:%S')}] {line}\n")
    sys.stderr.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--games", type=int, default=100, help="appends per batch")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--postgres-url", default=POSTGRES_URL)
    parser.add_argument("--json-out", type=Path, help="append one JSON line with the figures")
    args = parser.parse_args()
    sizes = sorted(int(size) for size in args.sizes.split(","))
    rows: list[dict[str, Any]] = []
    for backend in args.backends.split(","):
        rows += asyncio.run(
            measure_backend(backend, sizes, args.games, args.repeats, args.postgres_url)
        )
    print(
        f"one batch of {args.games} appends (1 command + {BATCH_EVENTS} events each), median of "
        f"{args.repeats}; baseline = the old (game_id, seq) IN (...) check; cold = the new writer "
        "with nothing remembered; fenced = the new writer with every append under its lease; "
        "check = the predecessor check alone"
    )
    print(
        f"{'backend':<11}{'event rows':>12}{'old ms':>10}{'new ms':>10}{'fenced ms':>10}"
        f"{'cold ms':>10}{'old/new':>9}  {'check old':>10}{'check cold':>11}"
    )
    for row in rows:
        print(
            f"{row['backend']:<11}{row['event_rows']:>12,}{row['old_ms']:>10.2f}"
            f"{row['new_ms']:>10.2f}{row['new_fenced_ms']:>10.2f}{row['new_cold_ms']:>10.2f}"
            f"{row['old_over_new']:>8.1f}×"
            f"  {row['check_old_ms']:>10.2f}{row['check_cold_ms']:>11.2f}"
        )
    if args.json_out is not None:
        append_json_line(
            args.json_out,
            "logwriter",
            figures={
                f"{r['backend']}_{r['event_rows']}": {
                    "new_ms": r["new_ms"],
                    "new_fenced_ms": r["new_fenced_ms"],
                    "new_cold_ms": r["new_cold_ms"],
                    "check_cold_ms": r["check_cold_ms"],
                }
                for r in rows
            },
            baseline={
                f"{r['backend']}_{r['event_rows']}": {
                    "old_ms": r["old_ms"],
                    "check_old_ms": r["check_old_ms"],
                }
                for r in rows
            },
            parameters={"games": args.games, "repeats": args.repeats, "sizes": sizes},
        )


if __name__ == "__main__":
    main()
