"""The write turn of an SQLite file (`vollmond/store/write_turn.py`): processes that open the
same file take turns, and the service's log writer waits for its turn before it writes."""

from __future__ import annotations

import asyncio
import multiprocessing
import threading
import time
from pathlib import Path

from vollmond.service.logwriter import LogAppend, LogWriter
from vollmond.store import NewEvent, create_game, open_store, read_commands
from vollmond.store.models import GameStatus
from vollmond.store.write_turn import WriteTurn

ROUNDS = 40


def _take_turns(database: str, marks: str, name: str) -> None:
    """Write "<name> in" and "<name> out" around a short stay in the turn, ROUNDS times."""
    turn = WriteTurn(database)
    for _ in range(ROUNDS):
        with turn.held():
            with open(marks, "a") as out:
                out.write(f"{name} in\n")
            time.sleep(0.002)  # long enough for the other process to come in, were it let
            with open(marks, "a") as out:
                out.write(f"{name} out\n")
    turn.close()


def test_processes_of_one_file_never_hold_the_turn_together(tmp_path: Path) -> None:
    database, marks = str(tmp_path / "db"), str(tmp_path / "marks")
    context = multiprocessing.get_context("spawn")
    procs = [context.Process(target=_take_turns, args=(database, marks, name)) for name in "ab"]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    lines = Path(marks).read_text().splitlines()
    assert len(lines) == 2 * 2 * ROUNDS
    pairs = list(zip(lines[::2], lines[1::2], strict=True))
    # Every stay is whole: an "in" is followed by the same process's "out".
    assert all(a.split()[0] == b.split()[0] and a.endswith(" in") for a, b in pairs)
    assert {a.split()[0] for a, _ in pairs} == {"a", "b"}


async def test_the_log_writer_waits_for_its_turn(tmp_path: Path) -> None:
    """Another process's writer (here: a turn held by this test, on its own open file) holds
    the file: the log writer's batch waits until it lets go, then commits."""
    database = tmp_path / "db"
    async with open_store(f"sqlite+aiosqlite:///{database}") as store:
        created = await create_game(
            store, world="werwolf", options={}, seed=1, status=GameStatus.RUNNING
        )
        game = created.id
        writer = LogWriter(store)
        other = WriteTurn(database)
        holding, release = threading.Event(), threading.Event()

        def hold() -> None:
            with other.held():
                holding.set()
                release.wait(10)

        holder = threading.Thread(target=hold)
        holder.start()
        try:
            assert await asyncio.to_thread(holding.wait, 10)
            append = asyncio.create_task(
                writer.append(
                    LogAppend(game, 1, {"n": 1}, 1, [NewEvent("e1", {}, {"kind": "all"})])
                )
            )
            await asyncio.sleep(0.3)
            assert not append.done()  # waiting for the turn
            release.set()
            await asyncio.wait_for(append, 10)
            assert [c.seq for c in await read_commands(store, game)] == [1]
        finally:
            release.set()
            holder.join()
            other.close()
            await writer.close()
