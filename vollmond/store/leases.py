"""Game ownership leases: which node runs a game, and until when (issue 15).

Several Vollmond nodes share one PostgreSQL database; each running game belongs to exactly one
of them. A node *acquires* a game's lease for a time-to-live and *renews* it while it runs the
game; a node that dies stops renewing, its leases expire, and another node *takes them over*
and resumes those games from their logs. A game that ends (or is handed on) is *released*.

Every change is one SQL statement whose condition is checked by the database on the row it
changes, so among any number of concurrent acquirers or takers exactly one wins (PostgreSQL:
`INSERT … ON CONFLICT DO UPDATE … WHERE` and `UPDATE … WHERE` re-check the row under its lock;
SQLite: one writer at a time). The store has no clock of its own here: every call is given
`now`, so the caller decides time (a node uses its wall clock, the tests a fixed one). Nodes'
clocks must agree to well within the lease's time-to-live (NTP); see docs/deployment.md.

A lease row stays once made: releasing only clears its owner, so the `epoch` (the fencing token,
one more at every change of hands) never repeats for a game.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import and_, bindparam, case, func, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from vollmond.store._validate import check_aware
from vollmond.store.db import Sessions
from vollmond.store.errors import GameNotFoundError, LeaseLostError
from vollmond.store.models.leases import GameLeaseRow

NODE_ID_MAX_LENGTH = 64

_COLUMNS = (
    GameLeaseRow.game_id,
    GameLeaseRow.owner,
    GameLeaseRow.epoch,
    GameLeaseRow.acquired_at,
    GameLeaseRow.renewed_at,
    GameLeaseRow.expires_at,
)


@dataclass(frozen=True, slots=True)
class Lease:
    """A game's lease as the database held it at the moment of the call."""

    game_id: str
    owner: str | None
    epoch: int
    acquired_at: datetime
    renewed_at: datetime
    expires_at: datetime

    def live(self, now: datetime) -> bool:
        """Whether the lease is held at `now` (an owner, and not yet expired)."""
        return self.owner is not None and now < self.expires_at


def check_node_id(node_id: str) -> str:
    """A node id is 1 to 64 printable characters without spaces (it names a node in logs)."""
    if not node_id or len(node_id) > NODE_ID_MAX_LENGTH:
        raise ValueError(f"a node id has 1 to {NODE_ID_MAX_LENGTH} characters")
    if not node_id.isprintable() or any(ch.isspace() for ch in node_id):
        raise ValueError("a node id has no spaces or control characters")
    return node_id


def _check(now: datetime, ttl: timedelta) -> None:
    check_aware(now, "now")
    if ttl <= timedelta(0):
        raise ValueError("a lease's time-to-live must be positive")


def _lease(row: Any) -> Lease:
    return Lease(
        game_id=row.game_id,
        owner=row.owner,
        epoch=row.epoch,
        acquired_at=row.acquired_at,
        renewed_at=row.renewed_at,
        expires_at=row.expires_at,
    )


def _insert(session: AsyncSession) -> Any:
    """The dialect's INSERT, which knows ON CONFLICT (both PostgreSQL and SQLite do)."""
    if session.get_bind().dialect.name == "postgresql":
        return postgresql.insert(GameLeaseRow)
    return sqlite.insert(GameLeaseRow)


async def acquire_lease(
    sessions: Sessions, game_id: str, node_id: str, *, now: datetime, ttl: timedelta
) -> Lease | None:
    """Take the game's lease for `ttl` if it is free, expired, or already this node's.

    Returns the lease now held, or None if another node holds it live. Taking a free or
    expired lease starts a new epoch; asking again for one's own live lease only renews it.
    Raises GameNotFoundError for a game the store does not know.
    """
    check_node_id(node_id)
    _check(now, ttl)
    try:
        return await _upsert(sessions, game_id, node_id, now=now, ttl=ttl)
    except IntegrityError as exc:  # the only constraint an upsert can break: the game's
        raise GameNotFoundError(game_id) from exc


async def _upsert(
    sessions: Sessions, game_id: str, node_id: str, *, now: datetime, ttl: timedelta
) -> Lease | None:
    mine_and_live = and_(GameLeaseRow.owner == node_id, GameLeaseRow.expires_at > now)
    async with sessions.begin() as session:
        insert = _insert(session)
        statement = (
            insert.values(
                game_id=game_id,
                owner=node_id,
                epoch=1,
                acquired_at=now,
                renewed_at=now,
                expires_at=now + ttl,
            )
            .on_conflict_do_update(
                index_elements=[GameLeaseRow.game_id],
                set_={
                    "owner": insert.excluded.owner,
                    "epoch": case(
                        (mine_and_live, GameLeaseRow.epoch), else_=GameLeaseRow.epoch + 1
                    ),
                    "acquired_at": case(
                        (mine_and_live, GameLeaseRow.acquired_at),
                        else_=insert.excluded.acquired_at,
                    ),
                    "renewed_at": insert.excluded.renewed_at,
                    "expires_at": insert.excluded.expires_at,
                },
                where=or_(
                    GameLeaseRow.owner.is_(None),
                    GameLeaseRow.expires_at <= now,
                    GameLeaseRow.owner == node_id,
                ),
            )
            .returning(*_COLUMNS)
        )
        row = (await session.execute(statement)).one_or_none()
    return None if row is None else _lease(row)


async def renew_lease(
    sessions: Sessions, game_id: str, node_id: str, *, now: datetime, ttl: timedelta
) -> Lease | None:
    """Extend this node's live lease to `now + ttl`; None if the node does not hold it live
    (never held, released, expired, or taken over: the node must stop running the game)."""
    _check(now, ttl)
    async with sessions.begin() as session:
        row = (
            await session.execute(
                update(GameLeaseRow)
                .where(
                    GameLeaseRow.game_id == game_id,
                    GameLeaseRow.owner == node_id,
                    GameLeaseRow.expires_at > now,
                )
                .values(renewed_at=now, expires_at=now + ttl)
                .returning(*_COLUMNS)
            )
        ).one_or_none()
    return None if row is None else _lease(row)


async def renew_node_leases(
    sessions: Sessions, node_id: str, *, now: datetime, ttl: timedelta
) -> list[Lease]:
    """A node's heartbeat: extend every lease it holds live, in one statement; the leases
    renewed, by game id. A game of the node missing here is no longer the node's."""
    _check(now, ttl)
    live = and_(GameLeaseRow.owner == node_id, GameLeaseRow.expires_at > now)
    # Locked in game order, as the log writer's fencing read locks them for share: a renewal
    # and a batch of appends then never wait for each other in a circle (a deadlock).
    ordered = (
        select(GameLeaseRow.game_id)
        .where(live)
        .order_by(GameLeaseRow.game_id)
        .with_for_update()
        .scalar_subquery()
    )
    async with sessions.begin() as session:
        rows = (
            await session.execute(
                update(GameLeaseRow)
                .where(GameLeaseRow.game_id.in_(ordered), live)
                .values(renewed_at=now, expires_at=now + ttl)
                .returning(*_COLUMNS)
            )
        ).all()
    return sorted((_lease(row) for row in rows), key=lambda lease: lease.game_id)


async def release_lease(sessions: Sessions, game_id: str, node_id: str) -> bool:
    """Give the lease up (the game ended, or is handed to another node); only its owner can.
    A released lease is free, not expired: nobody takes it over. True if it was this node's."""
    async with sessions.begin() as session:
        result = await session.execute(
            update(GameLeaseRow)
            .where(GameLeaseRow.game_id == game_id, GameLeaseRow.owner == node_id)
            .values(owner=None)
        )
    return bool(getattr(result, "rowcount", 0))


async def expire_leases(
    sessions: Sessions, node_id: str, game_ids: Iterable[str], *, now: datetime
) -> list[Lease]:
    """A node that stops cleanly hands its games on: their leases expire at `now` (still naming
    it, so `take_over_expired_leases` on another node takes them at once, where a released
    lease would wait for someone to ask). Only the node's live leases among `game_ids`; the
    leases expired, by game id. Call it after the node's actors stopped writing."""
    check_aware(now, "now")
    games = sorted(set(game_ids))
    if not games:
        return []
    async with sessions.begin() as session:
        rows = (
            await session.execute(
                update(GameLeaseRow)
                .where(
                    GameLeaseRow.game_id.in_(games),
                    GameLeaseRow.owner == node_id,
                    GameLeaseRow.expires_at > now,
                )
                .values(expires_at=now)
                .returning(*_COLUMNS)
            )
        ).all()
    return sorted((_lease(row) for row in rows), key=lambda lease: lease.game_id)


async def take_over_expired_leases(
    sessions: Sessions, node_id: str, *, now: datetime, ttl: timedelta, limit: int = 100
) -> list[Lease]:
    """Take up to `limit` leases whose owner stopped renewing them (a dead node's games), oldest
    expiry first; each starts a new epoch. The caller resumes these games from their logs.

    Concurrent takers never take the same lease: the row's expiry is checked again under its
    lock, and on PostgreSQL rows another taker holds are skipped rather than waited for.
    """
    check_node_id(node_id)
    _check(now, ttl)
    if limit < 1:
        raise ValueError("limit must be at least 1")
    expired = and_(GameLeaseRow.owner.is_not(None), GameLeaseRow.expires_at <= now)
    candidates = (
        select(GameLeaseRow.game_id)
        .where(expired)
        .order_by(GameLeaseRow.expires_at, GameLeaseRow.game_id)
        .limit(limit)
        .with_for_update(skip_locked=True)
        .scalar_subquery()
    )
    async with sessions.begin() as session:
        rows = (
            await session.execute(
                update(GameLeaseRow)
                .where(GameLeaseRow.game_id.in_(candidates), expired)
                .values(
                    owner=node_id,
                    epoch=GameLeaseRow.epoch + 1,
                    acquired_at=now,
                    renewed_at=now,
                    expires_at=now + ttl,
                )
                .returning(*_COLUMNS)
            )
        ).all()
    return sorted((_lease(row) for row in rows), key=lambda lease: lease.game_id)


async def get_lease(sessions: Sessions, game_id: str) -> Lease | None:
    """The game's lease row (live, expired or free), or None if it was never leased."""
    async with sessions() as session:
        row = (
            await session.execute(select(*_COLUMNS).where(GameLeaseRow.game_id == game_id))
        ).one_or_none()
    return None if row is None else _lease(row)


async def node_leases(sessions: Sessions, node_id: str) -> list[Lease]:
    """Every lease the node is recorded as owning, live or expired, by game id."""
    async with sessions() as session:
        rows = (
            await session.execute(
                select(*_COLUMNS)
                .where(GameLeaseRow.owner == node_id)
                .order_by(GameLeaseRow.game_id)
            )
        ).all()
    return [_lease(row) for row in rows]


# -- fencing: appends carry the lease they were made under -----------------------------------------
@dataclass(frozen=True, slots=True)
class Fence:
    """The lease a node writes a game's log under: its node id and the lease's epoch.

    An append that carries a fence is written only if the game's lease still has exactly this
    owner and epoch, checked in the append's own transaction (`stale_fences`): a node that was
    paused past its time-to-live, while another node took the game over, is refused
    (LeaseLostError) instead of writing once more after the new owner read the log.
    """

    owner: str
    epoch: int


# The lease rows of a batch's games, locked for share on PostgreSQL: a takeover (an UPDATE of
# the row) waits for the append's commit, so the new owner reads the log only after it, and an
# append waiting behind a takeover sees the new epoch. SQLite has one writer at a time: the
# append's inserts took the write lock before this read. Built once; `games` expands.
FENCE_READ = (
    select(GameLeaseRow.game_id, GameLeaseRow.owner, GameLeaseRow.epoch)
    .where(GameLeaseRow.game_id.in_(bindparam("games", expanding=True)))
    .order_by(GameLeaseRow.game_id)
    .with_for_update(read=True)
)


def stale_fences(
    rows: Iterable[Any], fences: Iterable[tuple[str, Fence]]
) -> list[tuple[str, Fence]]:
    """The (game, fence) pairs whose game's lease row (from `FENCE_READ`) is missing or has
    another owner or epoch."""
    current = {row.game_id: (row.owner, row.epoch) for row in rows}
    return [
        (game_id, fence)
        for game_id, fence in fences
        if current.get(game_id) != (fence.owner, fence.epoch)
    ]


async def check_fences(session: AsyncSession, fences: Sequence[tuple[str, Fence]]) -> None:
    """Raise LeaseLostError for the first fence that is not its game's current lease; call it
    inside the transaction that writes (the row locks last until its commit)."""
    if not fences:
        return
    games = sorted({game_id for game_id, _ in fences})
    rows = (await session.execute(FENCE_READ, {"games": games})).all()
    stale = stale_fences(rows, fences)
    if stale:
        game_id, fence = stale[0]
        raise LeaseLostError(game_id, fence.owner, fence.epoch)


# -- what operators see ----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class NodeLeases:
    """One node's leases as the store holds them (the moderators' console, "Nodes")."""

    node: str
    live: int  # leases it holds and renews
    expired: int  # leases it stopped renewing that nobody took over yet (a dead node's games)
    next_expiry: datetime  # the soonest expiry among them
    last_renewal: datetime  # its latest renewal: a node that is alive renews every ttl/3


async def lease_overview(
    sessions: Sessions, *, now: datetime, limit: int = 200
) -> tuple[list[NodeLeases], list[Lease]]:
    """Every node that holds a lease (live or expired, not released), by node id, and up to
    `limit` of those leases, soonest expiry first: one grouped read and one indexed list."""
    check_aware(now, "now")
    held = GameLeaseRow.owner.is_not(None)
    is_live = case((GameLeaseRow.expires_at > now, 1), else_=0)
    async with sessions() as session:
        groups = (
            await session.execute(
                select(
                    GameLeaseRow.owner,
                    func.sum(is_live),
                    func.count(),
                    func.min(GameLeaseRow.expires_at),
                    func.max(GameLeaseRow.renewed_at),
                )
                .where(held)
                .group_by(GameLeaseRow.owner)
                .order_by(GameLeaseRow.owner)
            )
        ).all()
        rows = (
            await session.execute(
                select(*_COLUMNS)
                .where(held)
                .order_by(GameLeaseRow.expires_at, GameLeaseRow.game_id)
                .limit(limit)
            )
        ).all()
    nodes = [
        NodeLeases(
            node=owner,
            live=int(live or 0),
            expired=int(count) - int(live or 0),
            next_expiry=_aware(soonest),
            last_renewal=_aware(latest),
        )
        for owner, live, count, soonest, latest in groups
    ]
    return nodes, [_lease(row) for row in rows]


def _aware(moment: datetime | str) -> datetime:
    """An aggregate of a UTC column may come back without the column type's conversion on
    SQLite (a naive datetime, or text): read it as UTC like the column does."""
    if isinstance(moment, str):
        moment = datetime.fromisoformat(moment)
    return moment.astimezone(UTC) if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
