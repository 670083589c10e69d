"""Ownership from the store's game leases: nodes that come and go (issue 15, `--ownership leases`).

A game belongs to the node that holds its lease (store/leases.py). A node learns a game's
owner from the lease row and keeps it with the row's epoch and expiry (`resolve`); the sync
`owner_of` answers from that cache, so it is only asked after `resolve` (the hub resolves
before it acts on a game). A cached owner is trusted until the lease's expiry as read; then,
or when the owner does not answer (`forget`), the row is read again.

A free or expired lease (or a game never leased: founded, or from before the leases) is
acquired by the node that asks; the one winner resumes the game (`on_acquired`), the others
read the winner. Every ttl/3 the node renews all its leases in one statement (`keep`); a game
missing from the answer is no longer its own (`on_lost`: the hub stops it). Every ttl/2 it
takes over expired leases — a dead node's games — and resumes them (`on_acquired`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import structlog

from vollmond.service.shards.stats import LeaseCounters
from vollmond.store import Sessions
from vollmond.store.leases import (
    Fence,
    Lease,
    acquire_lease,
    expire_leases,
    get_lease,
    release_lease,
    renew_node_leases,
    take_over_expired_leases,
)

log = structlog.get_logger(__name__)

DEFAULT_LEASE_TTL_S = 6.0  # a dead node's games move within about this (issue 15: <= 10 s)

GameHook = Callable[[str], Awaitable[None]]


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class Known:
    """A game's owner as this node last read it from the lease row."""

    owner: str
    epoch: int
    expires_at: datetime


class LeaseOwnership:
    """`Ownership` for nodes: the lease holder owns the game."""

    def __init__(
        self,
        sessions: Sessions,
        node: str,
        *,
        ttl_s: float = DEFAULT_LEASE_TTL_S,
        clock: Callable[[], datetime] = _now,
    ) -> None:
        """`clock`: the wall clock the leases are measured with (the tests move one by hand)."""
        if ttl_s <= 0:
            raise ValueError("a lease's time-to-live must be positive")
        self.sessions = sessions
        self.node = node
        self.ttl = timedelta(seconds=ttl_s)
        self.clock = clock
        self.known: dict[str, Known] = {}
        self.held: set[str] = set()  # the games whose lease this process holds and runs
        self.on_acquired: GameHook | None = None
        self.on_lost: GameHook | None = None
        self._resolving: dict[str, asyncio.Task[str]] = {}
        self._loops: list[asyncio.Task[None]] = []
        self.counters = LeaseCounters()  # for /metrics and the console (shards/stats.py)

    @property
    def retry_for_s(self) -> float:
        """How long an asker keeps trying an owner that does not answer: until its lease has
        expired and this node or another took it over."""
        return 2 * self.ttl.total_seconds() + 2.0

    # -- who owns a game ---------------------------------------------------------------------
    def owner_of(self, game_id: str) -> str:
        known = self.known.get(game_id)
        if known is None:
            raise LookupError(f"{game_id}: resolve the owner first")
        return known.owner

    async def resolve(self, game_id: str) -> str:
        """The game's owner: from the cache while its lease is live, else from the row; a free
        or expired lease is acquired here (and the game resumed by `on_acquired`)."""
        known = self.known.get(game_id)
        if known is not None and (game_id in self.held or self.clock() < known.expires_at):
            return known.owner
        task = self._resolving.get(game_id)
        if task is None:
            task = asyncio.create_task(self._read_or_acquire(game_id))
            self._resolving[game_id] = task
            task.add_done_callback(lambda _: self._resolving.pop(game_id, None))
        return await asyncio.shield(task)

    def forget(self, game_id: str) -> None:
        """The cached owner did not answer: read the row at the next `resolve`."""
        if game_id not in self.held:
            self.known.pop(game_id, None)

    async def _read_or_acquire(self, game_id: str) -> str:
        now = self.clock()
        lease = await get_lease(self.sessions, game_id)
        if lease is not None and lease.live(now) and lease.owner != self.node:
            return self._note(lease)
        # Free, expired, never leased, or ours from before a restart: take it.
        mine = await acquire_lease(self.sessions, game_id, self.node, now=now, ttl=self.ttl)
        if mine is None:  # another node won it meanwhile
            lease = await get_lease(self.sessions, game_id)
            assert lease is not None and lease.owner is not None
            return self._note(lease)
        if game_id not in self.held:
            self.counters.acquired += 1
        await self._acquired(mine)
        return self.node

    def _note(self, lease: Lease) -> str:
        assert lease.owner is not None
        self.known[lease.game_id] = Known(lease.owner, lease.epoch, lease.expires_at)
        return lease.owner

    async def _acquired(self, lease: Lease) -> None:
        self.held.add(lease.game_id)
        self._note(lease)
        log.info("lease_acquired", game=lease.game_id, node=self.node, epoch=lease.epoch)
        if self.on_acquired is not None:
            await self.on_acquired(lease.game_id)

    def fence(self, game_id: str) -> Fence | None:
        """The lease this node runs the game under (its appends carry it); None if the node
        does not hold the game's lease."""
        known = self.known.get(game_id)
        if game_id not in self.held or known is None:
            return None
        return Fence(self.node, known.epoch)

    def moved_away(self, game_id: str) -> None:
        """The store refused an append under this node's lease: another node holds it now.
        Nothing to give back; the next `resolve` reads the row."""
        if game_id in self.held:
            self.held.discard(game_id)
            self.known.pop(game_id, None)
            self.counters.fenced += 1
            log.warning("lease_fenced", game=game_id, node=self.node)

    async def release(self, game_id: str) -> None:
        """The game ended or was stopped here: its lease is free (nobody takes it over)."""
        if game_id in self.held:
            self.held.discard(game_id)
            self.known.pop(game_id, None)
            await release_lease(self.sessions, game_id, self.node)

    def next_expiry_s(self) -> float | None:
        """Seconds until the soonest of this node's leases expires, as last renewed (about
        the ttl just after a renewal; near zero or below means renewals are not getting
        through); None while it holds none."""
        expiries = [self.known[g].expires_at for g in self.held if g in self.known]
        if not expiries:
            return None
        return (min(expiries) - self.clock()).total_seconds()

    async def hand_on(self) -> list[str]:
        """A clean stop, after this node's actors stopped writing: expire every lease it holds,
        so the other nodes take those games over at once (not a ttl later). The games handed
        on, by id."""
        held, self.held = sorted(self.held), set()
        for game_id in held:
            self.known.pop(game_id, None)
        expired = await expire_leases(self.sessions, self.node, held, now=self.clock())
        self.counters.handed_on += len(expired)
        log.info("leases_handed_on", node=self.node, games=len(expired))
        return [lease.game_id for lease in expired]

    # -- the loops: renew every ttl/3, take over every ttl/2 ---------------------------------
    def start(self) -> None:
        ttl_s = self.ttl.total_seconds()
        self._loops = [
            asyncio.create_task(self._every(ttl_s / 3, self.keep), name="lease-renewal"),
            asyncio.create_task(self._every(ttl_s / 2, self.take_over), name="lease-takeover"),
        ]

    async def stop(self) -> None:
        for task in self._loops:
            task.cancel()
        for task in self._loops:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._loops = []

    @staticmethod
    async def _every(period_s: float, step: Callable[[], Awaitable[None]]) -> None:
        while True:
            await asyncio.sleep(period_s)
            try:
                await step()
            except Exception:  # the store was away: the next round tries again
                log.exception("lease_loop_failed", step=step.__name__)

    async def keep(self) -> None:
        """Renew every lease of this node; stop the games whose lease is no longer ours."""
        before = set(self.held)  # a game acquired meanwhile is not lost
        try:
            renewed = await renew_node_leases(
                self.sessions, self.node, now=self.clock(), ttl=self.ttl
            )
        except Exception:
            self.counters.renewal_failures += 1
            raise
        self.counters.renewals += 1
        for lease in renewed:
            if lease.game_id in self.held:  # others (a lobby's, from before a restart) are
                self._note(lease)  # looked up and acquired again when asked about
        lost = (before & self.held) - {lease.game_id for lease in renewed}
        for game_id in sorted(lost):
            self.held.discard(game_id)
            self.known.pop(game_id, None)
            self.counters.lost += 1
            log.warning("lease_lost", game=game_id, node=self.node)
            if self.on_lost is not None:
                await self.on_lost(game_id)

    async def take_over(self) -> None:
        """Take the expired leases of dead nodes and resume their games here."""
        now = self.clock()
        try:
            taken = await take_over_expired_leases(self.sessions, self.node, now=now, ttl=self.ttl)
        except Exception:
            self.counters.takeover_failures += 1
            raise
        self.counters.taken_over += len(taken)
        for lease in taken:
            log.info("lease_taken_over", game=lease.game_id, node=self.node, epoch=lease.epoch)
            await self._acquired(lease)
