"""Who is online on this node: callers for the length of their call, browsers for a short
while after the page last asked (node-local, never stored, like presence)."""

from __future__ import annotations

import time
from collections.abc import Callable

from vollmond.store.owners import Owner


class Online:
    def __init__(self, web_online_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.web_online_s = web_online_s
        self.clock = clock
        self._calls: dict[Owner, int] = {}
        self._web: dict[Owner, float] = {}

    def call_started(self, owner: Owner) -> Callable[[], None]:
        """A signed-in caller is online until the returned function is called (hang-up)."""
        self._calls[owner] = self._calls.get(owner, 0) + 1
        done = False

        def ended() -> None:
            nonlocal done
            if done:
                return
            done = True
            left = self._calls.get(owner, 0) - 1
            if left > 0:
                self._calls[owner] = left
            else:
                self._calls.pop(owner, None)

        return ended

    def seen(self, owner: Owner) -> None:
        """A browser page of `owner` asked just now."""
        self._web[owner] = self.clock()

    def is_online(self, owner: Owner) -> bool:
        if self._calls.get(owner):
            return True
        seen = self._web.get(owner)
        return seen is not None and self.clock() - seen <= self.web_online_s

    def by_phone(self, owner: Owner) -> bool:
        return bool(self._calls.get(owner))
