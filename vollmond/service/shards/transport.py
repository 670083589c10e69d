"""The one interface between the processes that share the games (docs/scaling.md).

It is the part of NATS the service needs, so the same code runs over NATS between machines
(issue 15) and over the local bus (`localbus`) between the worker processes of one machine:

- `publish(subject, data)`: fire and forget, in order per publisher;
- `subscribe(subject, handler)`: every message on `subject` (or, for a subject ending in
  ``.>``, on every subject below it), handed to `handler` in arrival order; returns once the
  bus has registered it, so whatever is published after that reaches the handler;
- `request(subject, data, timeout)`: one answer from a subscriber that replies
  (`NoRespondersError` if nobody listens on the subject);
- `reply(message, data)`: answer a request;
- `flush()`: a round trip to the bus.

Implementations: `localbus.LocalTransport`, `natsbus.NatsTransport`.

Subjects of the service: ``game.<id>.log`` carries each committed command of a game from its
owner to every process that follows the game; ``node.<name>.calls`` carries the requests to a
node about the games it owns (`owner_calls`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Message:
    subject: str
    data: bytes
    reply: str | None = None


Handler = Callable[[Message], None]


class NoRespondersError(RuntimeError):
    """A request on a subject nobody serves (the owner is gone or not yet there)."""


class Subscription(Protocol):
    async def unsubscribe(self) -> None:
        """Stop the deliveries; a request on the subject afterwards finds no responder here."""


class Transport(Protocol):
    def publish(self, subject: str, data: bytes) -> None:
        """Queue `data` on `subject`; messages of one publisher arrive in publishing order."""

    async def subscribe(self, subject: str, handler: Handler) -> Subscription:
        """Hand every message on `subject` to `handler`; registered when this returns."""

    async def request(self, subject: str, data: bytes, timeout: float) -> bytes:
        """The first reply to `data` on `subject`; TimeoutError, NoRespondersError."""

    def reply(self, message: Message, data: bytes) -> None:
        """Answer the request `message`."""

    async def flush(self) -> None:
        """Return once the bus has handled everything this process sent so far (and routed
        what it had for this process before that)."""

    async def close(self) -> None: ...


class Served:
    """A subject this process serves (`start`) until `close`: the subscription kept, its end
    never raising (the bus may already be gone when the service stops)."""

    def __init__(self, transport: Transport, subject: str, handler: Handler) -> None:
        self.transport = transport
        self.subject = subject
        self.handler = handler
        self._subscription: Subscription | None = None

    async def start(self) -> None:
        self._subscription = await self.transport.subscribe(self.subject, self.handler)

    async def close(self) -> None:
        if self._subscription is not None:
            with contextlib.suppress(Exception):
                await self._subscription.unsubscribe()
            self._subscription = None


def game_log_subject(game_id: str) -> str:
    return f"game.{game_id}.log"


def node_calls_subject(node: str) -> str:
    return f"node.{node}.calls"
