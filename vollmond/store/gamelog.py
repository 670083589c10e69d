"""The per-game event and command logs: append with an expected sequence number, read in order.

`append_events(game, expected_next_seq, events)` writes all events or none, and only if they
continue the log exactly at `expected_next_seq`. The primary key (game_id, seq) makes a second
writer at the same position fail in the database itself, so a restarted or duplicated actor
gets SeqConflictError instead of writing an event twice. Sequence numbers start at 1.

An append may carry a `Fence` (the node and epoch of the game's lease, store/leases.py): it is
then written only if that is still the lease's current owner and epoch, checked in the same
transaction, and refused with LeaseLostError otherwise (a node that lost the game to another).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, insert, select
from sqlalchemy.exc import IntegrityError

from vollmond.store.db import Sessions
from vollmond.store.errors import GameNotFoundError, SeqConflictError
from vollmond.store.leases import Fence, check_fences
from vollmond.store.models import GameCommandRow, GameEventRow, GameRow
from vollmond.store.types import JSONValue, utcnow


@dataclass(frozen=True, slots=True)
class NewEvent:
    """An event to append: a code with parameters and who may see it (see DESIGN §1)."""

    kind: str
    payload: JSONValue
    audience: JSONValue


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """An event as read back from the log."""

    game_id: str
    seq: int
    kind: str
    payload: JSONValue
    audience: JSONValue
    created_at: datetime


@dataclass(frozen=True, slots=True)
class StoredCommand:
    """A command as read back from the log."""

    game_id: str
    seq: int
    command: JSONValue
    created_at: datetime
    cid: str | None = None


def _check_seq(expected_next_seq: int, after_seq: int | None = None) -> None:
    if expected_next_seq < 1:
        raise ValueError("sequence numbers start at 1")
    if after_seq is not None and after_seq < 0:
        raise ValueError("after_seq must not be negative")


async def _append(
    sessions: Sessions,
    table: type[GameEventRow] | type[GameCommandRow],
    *,
    log: str,
    game_id: str,
    expected_next_seq: int,
    rows: list[dict[str, object]],
    fence: Fence | None = None,
) -> None:
    try:
        async with sessions.begin() as session:
            # Insert first: on SQLite that takes the write lock before anything is read, on
            # PostgreSQL a concurrent insert of the same (game_id, seq) blocks, then fails.
            await session.execute(insert(table), rows)
            if fence is not None:  # before the gap check: a stale node is told it is stale
                await check_fences(session, [(game_id, fence)])
            if expected_next_seq > 1:
                # The key alone cannot see gaps; a writer that skipped ahead lost track too.
                predecessor = await session.scalar(
                    select(table.seq).where(
                        table.game_id == game_id, table.seq == expected_next_seq - 1
                    )
                )
                if predecessor is None:
                    raise SeqConflictError(game_id, expected_next_seq, log)
    except IntegrityError as exc:
        async with sessions() as session:
            exists = await session.get(GameRow, game_id) is not None
        if not exists:
            raise GameNotFoundError(game_id) from exc
        if fence is not None:
            # The new owner's entry at this seq may be what we collided with: say why.
            async with sessions.begin() as session:
                await check_fences(session, [(game_id, fence)])
        raise SeqConflictError(game_id, expected_next_seq, log) from exc


async def append_events(
    sessions: Sessions,
    game_id: str,
    expected_next_seq: int,
    events: Sequence[NewEvent],
    *,
    now: datetime | None = None,
    fence: Fence | None = None,
) -> list[StoredEvent]:
    """Append `events` as seq `expected_next_seq`, `+1`, ...; all or nothing.

    Raises SeqConflictError if the log does not end right before `expected_next_seq`,
    GameNotFoundError for an unknown game, and LeaseLostError if `fence` is given and is not
    the game's current lease.
    """
    _check_seq(expected_next_seq)
    if not events:
        return []
    created_at = now or utcnow()
    stored = [
        StoredEvent(
            game_id=game_id,
            seq=expected_next_seq + offset,
            kind=event.kind,
            payload=event.payload,
            audience=event.audience,
            created_at=created_at,
        )
        for offset, event in enumerate(events)
    ]
    rows: list[dict[str, object]] = [
        {
            "game_id": event.game_id,
            "seq": event.seq,
            "kind": event.kind,
            "payload": event.payload,
            "audience": event.audience,
            "created_at": created_at,
        }
        for event in stored
    ]
    await _append(
        sessions,
        GameEventRow,
        log="event",
        game_id=game_id,
        expected_next_seq=expected_next_seq,
        rows=rows,
        fence=fence,
    )
    return stored


async def read_events(
    sessions: Sessions, game_id: str, after_seq: int = 0, *, limit: int | None = None
) -> list[StoredEvent]:
    """Events with seq > `after_seq`, in order (empty for an unknown game)."""
    _check_seq(1, after_seq)
    query = (
        select(GameEventRow)
        .where(GameEventRow.game_id == game_id, GameEventRow.seq > after_seq)
        .order_by(GameEventRow.seq)
    )
    if limit is not None:
        query = query.limit(limit)
    async with sessions() as session:
        rows = await session.scalars(query)
        return [
            StoredEvent(
                game_id=row.game_id,
                seq=row.seq,
                kind=row.kind,
                payload=row.payload,
                audience=row.audience,
                created_at=row.created_at,
            )
            for row in rows
        ]


async def next_event_seq(sessions: Sessions, game_id: str) -> int:
    """The seq the next appended event must have (1 for an empty log)."""
    async with sessions() as session:
        last = await session.scalar(
            select(func.max(GameEventRow.seq)).where(GameEventRow.game_id == game_id)
        )
    return (last or 0) + 1


async def append_commands(
    sessions: Sessions,
    game_id: str,
    expected_next_seq: int,
    commands: Sequence[JSONValue],
    *,
    cids: Sequence[str | None] | None = None,
    now: datetime | None = None,
    fence: Fence | None = None,
) -> list[StoredCommand]:
    """Append commands like `append_events` appends events, with the same guarantees (the
    fence too).

    `cids` gives each command its client id (or None); a client id is unique per game, so a
    command retried under the same id can never be logged twice.
    """
    _check_seq(expected_next_seq)
    if not commands:
        return []
    client_ids = list(cids) if cids is not None else [None] * len(commands)
    if len(client_ids) != len(commands):
        raise ValueError("one client id (or None) per command")
    created_at = now or utcnow()
    stored = [
        StoredCommand(
            game_id=game_id,
            seq=expected_next_seq + offset,
            command=command,
            created_at=created_at,
            cid=cid,
        )
        for offset, (command, cid) in enumerate(zip(commands, client_ids, strict=True))
    ]
    rows: list[dict[str, object]] = [
        {
            "game_id": c.game_id,
            "seq": c.seq,
            "command": c.command,
            "created_at": created_at,
            "cid": c.cid,
        }
        for c in stored
    ]
    await _append(
        sessions,
        GameCommandRow,
        log="command",
        game_id=game_id,
        expected_next_seq=expected_next_seq,
        rows=rows,
        fence=fence,
    )
    return stored


async def read_commands(
    sessions: Sessions, game_id: str, after_seq: int = 0, *, limit: int | None = None
) -> list[StoredCommand]:
    """Commands with seq > `after_seq`, in order."""
    _check_seq(1, after_seq)
    query = (
        select(GameCommandRow)
        .where(GameCommandRow.game_id == game_id, GameCommandRow.seq > after_seq)
        .order_by(GameCommandRow.seq)
    )
    if limit is not None:
        query = query.limit(limit)
    async with sessions() as session:
        rows = await session.scalars(query)
        return [
            StoredCommand(
                game_id=row.game_id,
                seq=row.seq,
                command=row.command,
                created_at=row.created_at,
                cid=row.cid,
            )
            for row in rows
        ]


async def next_command_seq(sessions: Sessions, game_id: str) -> int:
    """The seq the next appended command must have (1 for an empty log)."""
    async with sessions() as session:
        last = await session.scalar(
            select(func.max(GameCommandRow.seq)).where(GameCommandRow.game_id == game_id)
        )
    return (last or 0) + 1
