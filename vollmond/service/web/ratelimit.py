"""A sliding-window limiter per key (client address, seat) with a bounded memory.

Keys live in an OrderedDict in order of their last use. Each call moves its key to the end
and forgets, from the front, keys whose newest hit has left the window, and the least
recently used ones beyond `max_keys`. Each call therefore does O(1) work (amortised), and an
attacker who rotates addresses can fill at most `max_keys` entries — forgetting a key only
ever errs on the side of the forgotten client, never on the side of a flood from one key,
which stays at the end of the order while it keeps hitting.
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from collections.abc import Callable


class RateLimiter:
    """At most `limit` allowed calls per key within any `window_s` seconds."""

    def __init__(
        self,
        limit: int,
        window_s: float,
        clock: Callable[[], float] = time.monotonic,
        *,
        max_keys: int = 10_000,
    ) -> None:
        self.limit = limit
        self.window_s = window_s
        self.clock = clock
        self.max_keys = max_keys
        self._hits: OrderedDict[str, deque[float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._hits)

    def allow(self, key: str) -> bool:
        now = self.clock()
        hits = self._hits.get(key)
        if hits is None:
            hits = self._hits[key] = deque(maxlen=max(1, self.limit))
        else:
            self._hits.move_to_end(key)
        while hits and now - hits[0] > self.window_s:
            hits.popleft()
        self._forget(now)
        if len(hits) >= self.limit:
            return False
        hits.append(now)
        return True

    def _forget(self, now: float) -> None:
        while len(self._hits) > self.max_keys:
            self._hits.popitem(last=False)
        while self._hits:
            oldest_key, oldest = next(iter(self._hits.items()))
            if oldest and now - oldest[-1] <= self.window_s:
                return
            if len(self._hits) == 1:
                return  # the key being asked about right now
            del self._hits[oldest_key]
