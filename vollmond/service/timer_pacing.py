"""Timers of many games that come due together fire a few at a time, between the players.

A phase that ends changes every seat's view: the engine's step, the log, a view per seat and
a frame to each socket. Games whose timers end in the same moment — a tournament's tables
started together, every running game resumed after a restart (timers due in the past fire at
once) — put hundreds of such changes on one event loop in one go, and the asyncio loop runs
what is ready in order: a player's command that arrives in that moment waits behind all of
them (`ws_load` at 5,000 players: the slowest 1 % of the commands fell in the seconds where
the games' first phases ended together, at 100-300 ms).

So the timers of one process go through one pacer: while few are due it fires them at once;
when more come due than `per_slot` in one `slot_s`, the rest wait for the next slots, at
least `per_slot` a slot and more as the queue grows, so that none waits much longer than
`spread_s` however many came due. A phase then ends up to about a second late in such a
moment, which nobody at a table of minute-long phases can tell; the commands in between are
answered meanwhile. What a timer does is unchanged: the engine never sees when it fired, and
the log records the timer's command like any other.
"""

from __future__ import annotations

import asyncio
import math
from collections import deque
from collections.abc import Callable

import structlog

log = structlog.get_logger(__name__)

SLOT_S = 0.02
PER_SLOT = 4
SPREAD_S = 1.0


class TimerPacer:
    """Fires due timer callbacks of one event loop, `per_slot` per `slot_s` while few wait,
    more when the first in line would otherwise wait beyond `spread_s`."""

    def __init__(
        self, *, slot_s: float = SLOT_S, per_slot: int = PER_SLOT, spread_s: float = SPREAD_S
    ) -> None:
        self.slot_s = slot_s
        self.per_slot = per_slot
        self.spread_s = spread_s
        self._slot_ends = -math.inf
        self._fired = 0  # callbacks fired in the current slot
        # Waiting callbacks, each with the time by which it is to have fired.
        self._queue: deque[tuple[float, Callable[[], None]]] = deque()
        self._drain: asyncio.TimerHandle | None = None
        self.deferred = 0  # callbacks that waited for a later slot, since the start

    def fire(self, callback: Callable[[], None]) -> None:
        """Run `callback` now if this slot has room and nothing waits, else in a later slot."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        if now >= self._slot_ends:
            self._slot_ends = now + self.slot_s
            self._fired = 0
        if not self._queue and self._fired < self.per_slot:
            self._fired += 1
            callback()
            return
        self._queue.append((now + self.spread_s, callback))
        self.deferred += 1
        if self._drain is None:
            self._drain = loop.call_at(self._slot_ends, self._next_slot)

    def _next_slot(self) -> None:
        loop = asyncio.get_running_loop()
        now = loop.time()
        self._slot_ends = now + self.slot_s
        # The queue is in deadline order: spread what waits evenly over the slots left before
        # the first in line is due, so a herd of any size is through in about `spread_s`.
        slots_left = max(1, math.floor((self._queue[0][0] - now) / self.slot_s))
        room = max(self.per_slot, math.ceil(len(self._queue) / slots_left))
        self._fired = 0
        while self._queue and self._fired < room:
            self._fired += 1
            _, callback = self._queue.popleft()
            try:
                callback()
            except Exception:  # one failing timer must not hold back the others behind it
                log.exception("timer_failed")
        self._drain = loop.call_at(self._slot_ends, self._next_slot) if self._queue else None

    def close(self) -> None:
        """Drop what waits (the process stops; its actors are stopped with it)."""
        if self._drain is not None:
            self._drain.cancel()
            self._drain = None
        self._queue.clear()
