"""The log writer beside a busy event loop: how long appends wait for their commit, by the
interpreter's switch interval and by how the rows are inserted.

    .venv/bin/python -m benchmarks.log_gil [--batches 300] [--games 40] [--busy-ms 20]
                                           [--json-out FILE]

The service writes a command's log on SQLite in a thread of its own (service/logwriter.py),
and nobody sees the command's events before that commit. The thread shares the GIL with the
event loop. Here the loop is kept busy as a burst of fan-outs keeps it — pure Python in slices
of `--busy-ms`, yielding between them — while `--games` games append one command with three
events each, together, `--batches` times (each time one group commit, as the actors' appends
come together under load). Every append's wait for its commit is recorded through the
writer's own hook (`on_waited`, what `/metrics` shows).

Side by side, in one process: the BASELINE, the writer as it was (one `executemany` per table,
kept here as `ExecutemanyWriter`), and the writer as it is (multi-row INSERTs, `RowsInsert`),
both at CPython's default switch interval (5 ms, what the service runs with), with the loop
busy and once with it idle (the floor of the disk and the writer themselves); and both at a
1 ms switch interval, which was tried for the service and not kept.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.jsonline import append_json_line
from vollmond.service.logwriter import LogAppend, LogWriter, Statements, predecessor_reads
from vollmond.store import NewEvent, create_game, open_store
from vollmond.store.models import GameStatus

DEFAULT_SWITCH_INTERVAL_S = 0.005  # CPython's, what the service runs with
SHORT_SWITCH_INTERVAL_S = 0.001  # measured beside it; not the service's (docs/decisions.md)


class ExecutemanyWriter(LogWriter):
    """The baseline: the writer before multi-row INSERTs, one `executemany` per table."""

    def _write_sync(self, statements: Statements) -> None:
        assert self._sync_engine is not None and self._turn is not None
        with self._turn.held(), self._sync_engine.begin() as connection:
            for statement, rows in statements.inserts:
                connection.execute(statement, rows)
            for read, params, expected in predecessor_reads(statements.checks):
                if len(connection.execute(read, params).all()) != expected:
                    raise LookupError("a log would have a gap")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _busy(stop: asyncio.Event, slice_s: float) -> None:
    """The loop at work: Python for `slice_s` at a time, a yield between slices."""
    x = 0
    while not stop.is_set():
        until = time.perf_counter() + slice_s
        while time.perf_counter() < until:
            x += 1
        await asyncio.sleep(0)


async def _run(
    switch_s: float, busy: bool, old_writer: bool, args: argparse.Namespace
) -> dict[str, Any]:
    sys.setswitchinterval(switch_s)
    with tempfile.TemporaryDirectory() as directory:
        url = f"sqlite+aiosqlite:///{Path(directory) / 'db'}"
        async with open_store(url) as store:
            games = [
                (
                    await create_game(
                        store, world="werwolf", options={}, seed=1, status=GameStatus.RUNNING
                    )
                ).id
                for _ in range(args.games)
            ]
            writer = ExecutemanyWriter(store) if old_writer else LogWriter(store)
            waits: list[float] = []
            stop = asyncio.Event()
            load = asyncio.create_task(_busy(stop, args.busy_ms / 1000)) if busy else None
            try:
                for batch in range(args.batches):
                    await asyncio.gather(
                        *(
                            writer.append(
                                LogAppend(
                                    game,
                                    batch + 1,
                                    {"type": "Vote", "actor": 3, "target": 5},
                                    3 * batch + 1,
                                    [
                                        NewEvent("vote", {"seat": 3, "target": 5}, {"kind": "all"})
                                        for _ in range(3)
                                    ],
                                )
                            )
                            for game in games
                        )
                    )
                    if batch == 0:
                        writer.on_waited = waits.append  # the first batch sets up the writer
            finally:
                stop.set()
                if load is not None:
                    await load
                await writer.close()
    sys.setswitchinterval(DEFAULT_SWITCH_INTERVAL_S)
    ms = [1000 * w for w in waits]
    return {
        "switch_interval_ms": 1000 * switch_s,
        "busy": busy,
        "rows": "executemany" if old_writer else "multi-row",
        "appends": len(ms),
        "p50_ms": statistics.median(ms),
        "p99_ms": percentile(ms, 0.99),
        "max_ms": max(ms),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, default=300)
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--busy-ms", type=float, default=20.0)
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    runs = {}
    five, one = DEFAULT_SWITCH_INTERVAL_S, SHORT_SWITCH_INTERVAL_S
    for name, switch_s, busy, old_writer in (
        ("baseline, idle loop", five, False, True),
        ("now, idle loop", five, False, False),
        ("baseline, busy loop", five, True, True),
        ("now, busy loop", five, True, False),
        ("old writer, 1 ms, busy", one, True, True),
        ("now, 1 ms, busy", one, True, False),
    ):
        runs[name] = figures = asyncio.run(_run(switch_s, busy, old_writer, args))
        print(
            f"{name:<22} {figures['rows']:<11} switch {figures['switch_interval_ms']:.0f} ms: "
            f"{figures['appends']} appends waited p50 {figures['p50_ms']:.1f} ms, "
            f"p99 {figures['p99_ms']:.1f} ms, max {figures['max_ms']:.1f} ms"
        )
    base, now = runs["baseline, busy loop"], runs["now, busy loop"]
    print(
        f"busy loop, baseline / now: p50 {base['p50_ms'] / now['p50_ms']:.1f}×, "
        f"p99 {base['p99_ms'] / now['p99_ms']:.1f}×, max {base['max_ms'] / now['max_ms']:.1f}×"
    )
    if args.json_out:
        append_json_line(
            args.json_out,
            "log_gil",
            figures={k: v for k, v in runs.items() if not k.startswith("baseline")},
            baseline={k: v for k, v in runs.items() if k.startswith("baseline")},
            parameters={"batches": args.batches, "games": args.games, "busy_ms": args.busy_ms},
        )


if __name__ == "__main__":
    main()
