"""SQLite's one writer shared by worker processes: the ceiling of `--workers` on SQLite.

    .venv/bin/python -m benchmarks.sqlite_writers --writers 2,4 --seconds 10 [--json-out F]

Each writer process commits group-commit-sized transactions (`--rows` log rows each, as one
command entry and its events) into one WAL file with the store's settings (WAL,
synchronous=NORMAL, busy_timeout), as fast as it can, for `--seconds`. The baseline is one
writer, run first in the same invocation. Printed: transactions and rows per second of the
whole file, and the commit latency (p50/p99/max) each writer saw — with several writers the
waiting for the file lock shows in the tail (SQLite's busy handler sleeps between tries).

Each step runs twice: the writers relying on SQLite's busy handler alone ("busy"), and taking
the service's write turn around each transaction ("turn", `vollmond/store/write_turn.py`: an
flock the kernel queues), as the log writers of `vollmond serve --workers N` do.
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.jsonline import append_json_line
from vollmond.store.db import SQLITE_BUSY_TIMEOUT_MS
from vollmond.store.write_turn import WriteTurn

PAYLOAD = (
    '{"code": "chat", "params": {"room": "night_room", "seat": 3, "text": "' + "x" * 60 + '"}}'
)


def _connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, timeout=SQLITE_BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    db.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
    return db


def _writer(
    path: Path, index: int, rows: int, window: tuple[float, float], turn: bool, out: Any
) -> None:
    db = _connect(path)
    held = WriteTurn(path).held if turn else contextlib.nullcontext
    start, until = window
    time.sleep(max(0.0, start - time.time()))  # all writers begin together
    game = f"writer{index}"
    seq = 0
    latencies: list[float] = []
    while time.time() < until:
        started = time.perf_counter()
        with held():
            db.execute("BEGIN IMMEDIATE")
            db.executemany(
                "INSERT INTO log (game_id, seq, payload) VALUES (?, ?, ?)",
                [(game, seq + i, PAYLOAD) for i in range(rows)],
            )
            db.execute("COMMIT")
        latencies.append(time.perf_counter() - started)
        seq += rows
    db.close()
    out.put(latencies)


def run(writers: int, rows: int, seconds: float, turn: bool) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "log.sqlite3"
        db = _connect(path)
        db.execute(
            "CREATE TABLE log (game_id TEXT, seq INTEGER, payload TEXT, PRIMARY KEY (game_id, seq))"
        )
        db.close()
        context = multiprocessing.get_context("spawn")
        out = context.Queue()
        start = time.time() + 2.0  # every process has started by then
        window = (start, start + seconds)
        procs = [
            context.Process(target=_writer, args=(path, i, rows, window, turn, out))
            for i in range(writers)
        ]
        for proc in procs:
            proc.start()
        results = [out.get() for _ in procs]
        for proc in procs:
            proc.join()
    latencies = sorted(x for r in results for x in r)
    commits = len(latencies)
    return {
        "writers": writers,
        "turn": turn,
        "commits_per_s": commits / seconds,
        "rows_per_s": commits * rows / seconds,
        "p50_ms": 1000 * statistics.median(latencies),
        "p99_ms": 1000 * latencies[int(0.99 * (commits - 1))],
        "max_ms": 1000 * latencies[-1],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writers", default="2,4", help="writer processes, besides the baseline 1")
    parser.add_argument("--rows", type=int, default=6, help="log rows per transaction")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    base = run(1, args.rows, args.seconds, turn=False)
    steps = [
        run(int(n), args.rows, args.seconds, turn)
        for n in args.writers.split(",")
        for turn in (False, True)
    ]
    print("writers  wait  commits/s   rows/s  p50 ms  p99 ms  max ms   ratio commits/s  ratio p99")
    for step in [base, *steps]:
        print(
            f"{step['writers']:7.0f} {'turn' if step['turn'] else 'busy':>5}"
            f" {step['commits_per_s']:10.0f} {step['rows_per_s']:8.0f}"
            f" {step['p50_ms']:7.2f} {step['p99_ms']:7.2f} {step['max_ms']:7.1f}"
            f" {step['commits_per_s'] / base['commits_per_s']:17.2f}"
            f" {step['p99_ms'] / base['p99_ms']:10.2f}"
        )
    if args.json_out is not None:
        for step in steps:
            append_json_line(
                args.json_out,
                "sqlite_writers",
                figures=step,
                baseline=base,
                parameters={
                    "writers": step["writers"],
                    "turn": step["turn"],
                    "rows": args.rows,
                    "seconds": args.seconds,
                },
            )


if __name__ == "__main__":
    main()
