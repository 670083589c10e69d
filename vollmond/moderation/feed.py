"""Live notification of moderators on duty (O1): every new or changed alarm is pushed to each
subscriber (a console WebSocket, a moderator's phone session) at once.

In-process fan-out; with several service nodes the same messages will travel on the per-game
NATS subjects (DESIGN.md §7 "Processes"), behind this same interface.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from vollmond.moderation.alarms import Alarm

# A console that stops reading must not hold memory without bound; it misses old news
# instead and re-reads the queue from the store.
QUEUE_LIMIT = 256


class AlarmFeed:
    """Subscribers get every alarm published after they subscribed, in order."""

    def __init__(self) -> None:
        self._subscribers: set[asyncio.Queue[Alarm]] = set()

    @asynccontextmanager
    async def subscribe(self) -> AsyncIterator[asyncio.Queue[Alarm]]:
        queue: asyncio.Queue[Alarm] = asyncio.Queue(QUEUE_LIMIT)
        self._subscribers.add(queue)
        try:
            yield queue
        finally:
            self._subscribers.discard(queue)

    def publish(self, alarm: Alarm) -> None:
        for queue in self._subscribers:
            if queue.full():
                queue.get_nowait()
            queue.put_nowait(alarm)

    @property
    def subscribers(self) -> int:
        return len(self._subscribers)
