"""Empty lobbies are called off after a grace period (issue 12).

A round whose players all left (the host too) would otherwise stay in the public list for
ever. The sweeper looks at the waiting rounds now and then; a round seen without any seat for
longer than the grace period is aborted like a host's cancel (a founding charge is refunded).
The time it was first seen empty lives only in memory: after a restart the grace starts again,
which only ever keeps a round a little longer.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

import structlog

from vollmond.service.hub import Hub, LobbyError
from vollmond.store.games import list_games
from vollmond.store.models import GameStatus
from vollmond.store.seats import list_seats

log = structlog.get_logger(__name__)


class LobbySweeper:
    def __init__(self, hub: Hub, grace_s: float) -> None:
        self.hub = hub
        self.grace_s = grace_s
        self._empty_since: dict[str, float] = {}
        self._task: asyncio.Task[None] | None = None

    @property
    def interval_s(self) -> float:
        return max(0.05, min(30.0, self.grace_s / 2))

    def start(self) -> None:
        if self.grace_s > 0:
            self._task = asyncio.create_task(self._run())

    @classmethod
    def started(cls, hub: Hub, grace_s: float) -> LobbySweeper:
        """A sweeper already running (0 s of grace: none)."""
        sweeper = cls(hub, grace_s)
        sweeper.start()
        return sweeper

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval_s)
            try:
                await self.sweep(time.monotonic())
            except Exception:  # a store hiccup must not end the sweeper
                log.exception("lobby_sweep_failed")

    async def sweep(self, now: float) -> list[str]:
        """Abort the rounds empty for longer than the grace period; return their ids."""
        lobbies = await list_games(self.hub.sessions, statuses=(GameStatus.LOBBY,))
        seen: set[str] = set()
        closed: list[str] = []
        for game in lobbies:
            if await list_seats(self.hub.sessions, game.id):
                continue
            seen.add(game.id)
            since = self._empty_since.setdefault(game.id, now)
            if now - since < self.grace_s:
                continue
            with contextlib.suppress(LobbyError):  # started or aborted meanwhile
                await self.hub.abort(game.id)
                closed.append(game.id)
                log.info("empty_lobby_closed", game=game.id)
        self._empty_since = {k: v for k, v in self._empty_since.items() if k in seen}
        return closed
