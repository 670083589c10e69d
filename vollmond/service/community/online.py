"""Who is online: callers for the length of their call, browsers for a short while after the
page last asked (never stored, like presence).

On one process this is all there is. Where processes share the games (workers, nodes by the
hash), `service/shards/community.py` tells each person's owner among them as well, and
:meth:`Online.online_of` asks the owners what this process does not know itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from vollmond.store.owners import Owner


class Online:
    def __init__(self, web_online_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.web_online_s = web_online_s
        self.clock = clock
        self._calls: dict[Owner, int] = {}
        self._web: dict[Owner, float] = {}
        self._web_kept = 0  # entries after the last sweep of pages long gone

    def call_started(self, owner: Owner) -> Callable[[], None]:
        """A signed-in caller is online until the returned function is called (hang-up)."""
        self._calls[owner] = self._calls.get(owner, 0) + 1
        done = False

        def ended() -> None:
            nonlocal done
            if done:
                return
            done = True
            self.call_ended(owner)

        return ended

    def call_ended(self, owner: Owner) -> None:
        left = self._calls.get(owner, 0) - 1
        if left > 0:
            self._calls[owner] = left
        else:
            self._calls.pop(owner, None)

    def seen(self, owner: Owner) -> None:
        """A browser page of `owner` asked just now."""
        self._web[owner] = self.clock()
        if len(self._web) > 2 * self._web_kept + 1000:  # pages that stopped asking go
            limit = self.clock() - self.web_online_s
            self._web = {o: t for o, t in self._web.items() if t >= limit}
            self._web_kept = len(self._web)

    def is_online(self, owner: Owner) -> bool:
        """Online as far as this process knows."""
        if self._calls.get(owner):
            return True
        seen = self._web.get(owner)
        return seen is not None and self.clock() - seen <= self.web_online_s

    async def online_of(self, owners: Iterable[Owner]) -> set[Owner]:
        """Those of `owners` who are online (where processes share the service: on any)."""
        return {o for o in owners if self.is_online(o)}

    def by_phone(self, owner: Owner) -> bool:
        return bool(self._calls.get(owner))

    async def close(self) -> None:
        """The service stops (shared: no more answers to the other processes)."""
