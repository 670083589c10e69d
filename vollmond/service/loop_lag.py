"""How late the event loop runs what is due: the lag an operator reads in `/metrics`.

Everything one service process serves — the sockets' reads and writes, every game's commands
and fan-out, the telephone's signalling — runs on one event loop, so whatever holds the loop
(a long synchronous step, the collector, a process starved of CPU) delays every player of the
process at once. A command's latency cannot tell that apart from a slow game; the loop's lag
can. A callback is scheduled every `interval_s` for an absolute time and records how much
later than that it ran: a histogram whose upper buckets count the stalls, at ten callbacks a
second (≈ 2 µs each, nothing next to a command).

`benchmarks/ws_load.py` reads it before and after its window, so a tail in the command
latencies can be laid beside the loop's own (docs/scaling.md).
"""

from __future__ import annotations

import asyncio

from prometheus_client import Histogram

INTERVAL_S = 0.1
# From a millisecond (the timer's resolution) to the stalls a player notices and beyond.
BUCKETS_S = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class LoopLag:
    """Measures the running loop's lag into `histogram` from `start` until `stop`."""

    def __init__(self, histogram: Histogram, interval_s: float = INTERVAL_S) -> None:
        self.histogram = histogram
        self.interval_s = interval_s
        self.worst_s = 0.0  # the longest lag since the start (the histogram keeps no maximum)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._due = 0.0
        self._handle: asyncio.TimerHandle | None = None

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._schedule(self._loop.time())

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _schedule(self, now: float) -> None:
        assert self._loop is not None
        # The next tick is due an interval after this one ran, not after it was due: a stall
        # counts once, as one late tick, not again as a burst of ticks that all came late.
        self._due = now + self.interval_s
        self._handle = self._loop.call_at(self._due, self._tick)

    def _tick(self) -> None:
        assert self._loop is not None
        now = self._loop.time()
        lag = max(0.0, now - self._due)
        self.histogram.observe(lag)
        self.worst_s = max(self.worst_s, lag)
        self._schedule(now)
