"""Group commit for the game logs: the appends of many game actors in one transaction.

Every accepted command appends one command entry and its events. Written one by one, that is
two transactions per command, and with many games on SQLite the writers queue for the file
lock (sleeping in SQLite's busy handler) — under load, commands waited seconds for the disk.
The writer takes whatever appends are waiting, writes them all in one transaction, and only
then lets each actor fan its events out (events still reach the log before any client).

The guarantees of `append_commands`/`append_events` stay: the primary key refuses a second
writer at the same position, and the predecessor of each appended run must exist. If a batch
fails, nothing of it was written, and each append is retried alone through the store, so the
actor that lost track gets its own SeqConflictError and the others are unaffected.

The predecessor check costs the same however long the logs are. The writer remembers the last
seq it committed per game and log (`KnownEnds`): an append that continues right after it needs
no read, because logs are append-only and contiguous. Only an append the writer has not seen
the predecessor of (the first after a start, or after another writer) reads it: one index
lookup per game, many games in one query. An earlier version checked the whole batch with one
`(game_id, seq) IN (...)` query, which was answered by scanning the whole key index: 3.6 ms at
10k rows, 313 ms at 1M (benchmarks/logwriter.py keeps it as the baseline). What the writer
remembers is only what it committed itself, never what an actor believes; a second writer at
the same position is still refused by the primary key.

An append of a game run under a lease carries the lease's `Fence` (node and epoch). The batch
reads the lease rows of its fenced games once, in its own transaction (`FENCE_READ`: locked
for share on PostgreSQL, so a takeover waits for the commit): one more query per batch, one
index lookup per game, whatever the batch's size or the logs' length. A batch with a stale fence
is rolled back and retried item by item, where the stale node's appends get LeaseLostError.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, cast

import sqlalchemy
from sqlalchemy import Insert, Select, Table, and_, bindparam, event, insert, or_, select
from sqlalchemy.ext.asyncio import AsyncEngine

from vollmond.store import NewEvent, Sessions, append_commands, append_events
from vollmond.store.db import SQLITE_BUSY_TIMEOUT_MS, _configure_sqlite
from vollmond.store.leases import FENCE_READ, Fence, stale_fences
from vollmond.store.models import GameCommandRow, GameEventRow
from vollmond.store.types import utcnow
from vollmond.store.write_turn import WriteTurn

MAX_BATCH = 500
KNOWN_GAMES = 100_000  # games whose log ends the writer remembers; older ones are read again
# Core tables, not ORM entities: the ORM's bulk-insert path cost more than the database did.
COMMANDS = cast(Table, GameCommandRow.__table__)
EVENTS = cast(Table, GameEventRow.__table__)
# Built once, so every batch reuses the compiled statement: one executemany per table.
INSERT_COMMANDS: Insert = insert(COMMANDS)
INSERT_EVENTS: Insert = insert(EVENTS)


READ_CHUNK = 100  # predecessors per read: keeps SQLite's expression depth far below its limit
ROWS_PER_INSERT = 500  # rows per SQLite INSERT: 3,000 parameters, far below its 32,766


class RowsInsert:
    """A table's rows for SQLite as multi-row INSERT statements, bound exactly as SQLAlchemy
    binds them (each column type's own processor for this dialect: JSON text, timestamps).

    Why not `executemany`: the writer's thread runs beside the event loop, and SQLite's
    driver gives up the GIL at every row it steps; beside a busy loop each give-up costs up to
    a switch interval before the thread runs again (a batch of 160 rows waited 0.7 s at 5 ms;
    benchmarks/log_gil.py). One statement for many rows is one step: the batch gives the GIL
    up a few times, not once per row. SQLAlchemy's own multi-row `values()` compiles each size
    anew (10 ms a batch), so the statement text is built here, once per number of rows.
    """

    def __init__(self, table: Table, dialect: sqlalchemy.Dialect) -> None:
        quote = dialect.identifier_preparer.quote
        # Each column's name and the processor that binds its values (None: as they are).
        self._columns = [(c.name, c.type.bind_processor(dialect)) for c in table.columns]
        columns = ", ".join(quote(name) for name, _ in self._columns)
        self._head = f"INSERT INTO {dialect.identifier_preparer.format_table(table)} ({columns}) "
        self._row = "(" + ", ".join("?" * len(self._columns)) + ")"
        self._texts: dict[int, str] = {}

    def statements(self, rows: list[dict[str, Any]]) -> list[tuple[str, tuple[Any, ...]]]:
        """The statements (text, positional parameters) that insert `rows`, in order."""
        out: list[tuple[str, tuple[Any, ...]]] = []
        for start in range(0, len(rows), ROWS_PER_INSERT):
            chunk = rows[start : start + ROWS_PER_INSERT]
            text = self._texts.get(len(chunk))
            if text is None:
                text = self._head + "VALUES " + ", ".join([self._row] * len(chunk))
                self._texts[len(chunk)] = text
            params = tuple(
                row.get(name) if process is None else process(row.get(name))
                for row in chunk
                for name, process in self._columns
            )
            out.append((text, params))
        return out


@functools.cache
def _read_keys(table_name: str, count: int) -> Select[Any]:
    """`count` primary keys as an OR, built once per size: later batches reuse it compiled."""
    table = COMMANDS if table_name == COMMANDS.name else EVENTS
    return select(table.c.seq).where(
        or_(
            *(
                and_(table.c.game_id == bindparam(f"g{i}"), table.c.seq == bindparam(f"s{i}"))
                for i in range(count)
            )
        )
    )


def predecessor_reads(
    checks: list[tuple[str, str, int]],
) -> list[tuple[Select[Any], dict[str, Any], int]]:
    """The reads for the predecessors the writer does not know: query, parameters, rows.

    An OR of primary keys: SQLite answers it with one index lookup per key (its OR
    optimisation), PostgreSQL with a bitmap OR of index scans; a row-value IN list was answered
    with a scan of the whole index.
    """
    reads: list[tuple[Select[Any], dict[str, Any], int]] = []
    for table in (COMMANDS.name, EVENTS.name):
        keys = sorted({(game_id, seq) for name, game_id, seq in checks if name == table})
        for start in range(0, len(keys), READ_CHUNK):
            chunk = keys[start : start + READ_CHUNK]
            params: dict[str, Any] = {}
            for i, (game_id, seq) in enumerate(chunk):
                params[f"g{i}"], params[f"s{i}"] = game_id, seq
            reads.append((_read_keys(table, len(chunk)), params, len(chunk)))
    return reads


@dataclass(frozen=True, slots=True)
class LogAppend:
    """One actor's append: a command entry at `command_seq`, its events from `event_seq`."""

    game_id: str
    command_seq: int
    command: Any
    event_seq: int
    events: list[NewEvent]
    cid: str | None = None  # the command's seat-scoped client id (actor.client_key)
    fence: Fence | None = None  # the game's lease this is written under (None: no leases)


class LogWriter:
    def __init__(self, sessions: Sessions, *, max_batch: int = MAX_BATCH) -> None:
        self.sessions = sessions
        self.max_batch = max_batch
        self._pending: list[tuple[LogAppend, asyncio.Future[None]]] = []
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.known = KnownEnds()
        self.batches = 0
        self.appends = 0
        self.predecessor_reads = 0  # how many appends needed their predecessor read back
        self.fence_reads = 0  # queries for the lease rows: at most one per batch
        # Told how long each append waited for its commit (seconds), if set: `/metrics`.
        self.on_waited: Callable[[float], None] | None = None
        # SQLite: each batch is one call in a thread of its own, on a plain sqlite3 connection.
        # Through aiosqlite a batch took 16 thread round trips, and under load each of them
        # waited for a turn of the busy event loop: commands waited seconds for their batch.
        self._sync_engine: sqlalchemy.Engine | None = None
        self._rows_inserts: dict[str, RowsInsert] = {}
        self._executor: ThreadPoolExecutor | None = None
        self._turn: WriteTurn | None = None
        bind = sessions.kw.get("bind")
        url = bind.url if isinstance(bind, AsyncEngine) else None
        if (
            url is not None
            and url.get_backend_name() == "sqlite"
            and url.database
            not in (
                None,
                "",
                ":memory:",
            )
        ):
            self._sync_engine = sqlalchemy.create_engine(
                url.set(drivername="sqlite"),
                connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000},
            )
            dialect = self._sync_engine.dialect
            self._rows_inserts = {
                table.name: RowsInsert(table, dialect) for table in (COMMANDS, EVENTS)
            }
            event.listen(self._sync_engine, "connect", _configure_sqlite)
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="log-writer")
            # Worker processes' log writers queue for the file (store/write_turn.py).
            self._turn = WriteTurn(url.database)

    async def append(self, item: LogAppend) -> None:
        """Resolves once the item is committed; raises what the store raised for it."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        future: asyncio.Future[None] = loop.create_future()
        self._pending.append((item, future))
        self._wake.set()
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run(), name="log-writer")
        await future
        if self.on_waited is not None:
            self.on_waited(loop.time() - started)

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        for _, future in self._pending:
            if not future.done():
                future.set_exception(RuntimeError("the log writer is closed"))
        self._pending.clear()
        if self._executor is not None:
            self._executor.shutdown(wait=True)
        if self._sync_engine is not None:
            self._sync_engine.dispose()
        if self._turn is not None:
            self._turn.close()

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._pending:
                batch = self._pending[: self.max_batch]
                del self._pending[: self.max_batch]
                await self._commit(batch)

    async def _commit(self, batch: list[tuple[LogAppend, asyncio.Future[None]]]) -> None:
        try:
            await self._write([item for item, _ in batch])
        except Exception:  # retried one by one below, which reports each item's own error
            for item, future in batch:
                try:
                    await append_commands(
                        self.sessions,
                        item.game_id,
                        item.command_seq,
                        [item.command],
                        cids=[item.cid],
                        fence=item.fence,
                    )
                    await append_events(
                        self.sessions,
                        item.game_id,
                        item.event_seq,
                        item.events,
                        fence=item.fence,
                    )
                except Exception as exc:
                    self.known.forget(item.game_id)
                    if not future.done():
                        future.set_exception(exc)
                else:
                    self.known.committed([item])
                    if not future.done():
                        future.set_result(None)
            return
        self.known.committed([item for item, _ in batch])
        self.batches += 1
        self.appends += len(batch)
        for _, future in batch:
            if not future.done():
                future.set_result(None)

    async def _write(self, items: list[LogAppend]) -> None:
        statements = _statements(items, self.known)
        self.predecessor_reads += len(statements.checks)
        self.fence_reads += 1 if statements.fences else 0
        if self._sync_engine is not None:
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(self._executor, self._write_sync, statements)
            return
        async with self.sessions.begin() as session:
            connection = await session.connection()
            for statement, rows in statements.inserts:
                await connection.execute(statement, rows)
            for read, params, expected in predecessor_reads(statements.checks):
                if len((await connection.execute(read, params)).all()) != expected:
                    raise LookupError("a log would have a gap")  # rolled back; retried alone
            if statements.fences:
                games = sorted({game_id for game_id, _ in statements.fences})
                leases = (await connection.execute(FENCE_READ, {"games": games})).all()
                if stale_fences(leases, statements.fences):
                    raise LookupError("a lease was lost")  # rolled back; retried alone

    def _write_sync(self, statements: Statements) -> None:
        assert self._sync_engine is not None and self._turn is not None
        with self._turn.held(), self._sync_engine.begin() as connection:
            for statement, rows in statements.inserts:
                rows_insert = self._rows_inserts[statement.table.name]
                for text, values in rows_insert.statements(rows):
                    connection.exec_driver_sql(text, values)
            for read, params, expected in predecessor_reads(statements.checks):
                if len(connection.execute(read, params).all()) != expected:
                    raise LookupError("a log would have a gap")  # rolled back; retried alone
            if statements.fences:
                games = sorted({game_id for game_id, _ in statements.fences})
                leases = connection.execute(FENCE_READ, {"games": games}).all()
                if stale_fences(leases, statements.fences):
                    raise LookupError("a lease was lost")  # rolled back; retried alone


class KnownEnds:
    """The last seq this writer committed, per game and log: predecessors it need not read.

    Logs are append-only and every append was checked to continue its log, so an entry at or
    before a remembered end exists. Bounded: the oldest games are forgotten first, and a
    forgotten game only costs one index lookup at its next append.
    """

    def __init__(self, capacity: int = KNOWN_GAMES) -> None:
        self.capacity = capacity
        self._ends: OrderedDict[str, tuple[int, int]] = OrderedDict()  # game: (command, event)

    def covers(self, table: str, game_id: str, seq: int) -> bool:
        """Whether the entry `seq` of this game's `table` log is known to be committed."""
        ends = self._ends.get(game_id)
        return ends is not None and (ends[0] if table == COMMANDS.name else ends[1]) >= seq

    def committed(self, items: list[LogAppend]) -> None:
        for item in items:
            command_end, event_end = self._ends.pop(item.game_id, (0, 0))
            if item.events:  # an append without events says nothing about the event log
                event_end = max(event_end, item.event_seq + len(item.events) - 1)
            self._ends[item.game_id] = (max(command_end, item.command_seq), event_end)
        while len(self._ends) > self.capacity:
            self._ends.popitem(last=False)

    def forget(self, game_id: str) -> None:
        self._ends.pop(game_id, None)


@dataclass(frozen=True, slots=True)
class Statements:
    """One batch: the inserts, and the predecessors (table, game, seq) that must be read."""

    inserts: list[tuple[Insert, list[dict[str, Any]]]]
    checks: list[tuple[str, str, int]]
    fences: list[tuple[str, Fence]]  # the (game, fence) pairs the batch's appends carry


def _statements(items: list[LogAppend], known: KnownEnds) -> Statements:
    now = utcnow()
    commands = [
        {
            "game_id": i.game_id,
            "seq": i.command_seq,
            "command": i.command,
            "created_at": now,
            "cid": i.cid,
        }
        for i in items
    ]
    events = [
        {
            "game_id": i.game_id,
            "seq": i.event_seq + offset,
            "kind": e.kind,
            "payload": e.payload,
            "audience": e.audience,
            "created_at": now,
        }
        for i in items
        for offset, e in enumerate(i.events)
    ]
    inserts: list[tuple[Insert, list[dict[str, Any]]]] = [(INSERT_COMMANDS, commands)]
    if events:
        inserts.append((INSERT_EVENTS, events))
    # Every append must follow an entry already in the log or in this batch; the entries this
    # writer committed itself need no read.
    in_batch = {
        COMMANDS.name: {(i.game_id, i.command_seq) for i in items},
        EVENTS.name: {(i.game_id, i.event_seq + n) for i in items for n in range(len(i.events))},
    }
    firsts = {
        COMMANDS.name: [(i.game_id, i.command_seq) for i in items],
        EVENTS.name: [(i.game_id, i.event_seq) for i in items if i.events],
    }
    checks = [
        (table, game_id, seq - 1)
        for table, appends in firsts.items()
        for game_id, seq in appends
        if seq > 1
        and (game_id, seq - 1) not in in_batch[table]
        and not known.covers(table, game_id, seq - 1)
    ]
    fences = sorted(
        {(i.game_id, i.fence) for i in items if i.fence is not None},
        key=lambda pair: (pair[0], pair[1].epoch),
    )
    return Statements(inserts, checks, fences)
