"""The transport between nodes: NATS (issue 15), behind the same `transport.Transport`.

It keeps the local bus's promises (`localbus`) over a NATS connection (nats-py):

- **Order per publisher.** `publish` is synchronous, nats-py's is a coroutine; every message
  this process sends (publish, a request, a reply) goes through one queue and one sending
  task, so they leave — and NATS delivers them — in the order they were handed in. A request
  therefore arrives after the notices published before it (the hub relies on that).
- **A subscription is in force when `subscribe` returns**: the SUB is followed by a message to
  this connection's own inbox, and `subscribe` returns when it has come back
  (`_round_trip`), so the server has registered the SUB before anything published afterwards.
- **Request/reply** through one inbox subscription per connection (``_INBOX.<id>.>``) and the
  same sending queue; the server's no-responders status (503, which nats-py's client asks
  for when the server supports headers) is raised as `NoRespondersError`.
- **Wildcards**: NATS's own ``.>``.
- **A namespace** (optional) goes in front of every subject on the wire and is taken off again
  on delivery, so several deployments (or test runs) can share one NATS server without
  hearing each other; the service's code never sees it.

Delivery is per subscription in arrival order (nats-py runs one task per subscription);
between two subscriptions of one connection there is no promised order, as with NATS itself.
A lost connection is reconnected by nats-py, which subscribes again; messages of that gap are
lost (a mirror reads a gap from the log). If it gives up, `on_lost` is called.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Awaitable, Callable

import nats
import structlog
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription as NatsSubscription

from vollmond.service.shards.transport import Handler, Message, NoRespondersError

log = structlog.get_logger(__name__)

NO_RESPONDERS = "503"
STATUS_HEADER = "Status"
FLUSH_TIMEOUT_S = 10
CONNECT_TIMEOUT_S = 5


class _NatsSubscription:
    def __init__(
        self, subscription: NatsSubscription, round_trip: Callable[[], Awaitable[None]]
    ) -> None:
        self._subscription = subscription
        self._round_trip = round_trip

    async def unsubscribe(self) -> None:
        """Stop; once this returns the server routes nothing more to it (a request on its
        subject finds no responder instead of being dropped here)."""
        with contextlib.suppress(nats.errors.Error, TimeoutError, ConnectionError):
            await self._subscription.unsubscribe()
            await self._round_trip()


_Outgoing = tuple[str, bytes, str]  # subject, data, reply subject ("" for none)


class NatsTransport:
    """A process's connection to NATS (`transport.Transport`)."""

    def __init__(self, client: Client, namespace: str = "") -> None:
        self._client = client
        self._prefix = f"{namespace}." if namespace else ""
        self._outgoing: asyncio.Queue[_Outgoing | None] = asyncio.Queue()
        self._sending = asyncio.create_task(self._send(), name="natsbus-send")
        self._inbox = client.new_inbox()
        self._replies: dict[str, asyncio.Future[Message]] = {}
        self._next_reply = itertools.count(1)
        self._inbox_subscription: NatsSubscription | None = None
        self._closing = False

    @classmethod
    async def connect(
        cls,
        url: str,
        *,
        namespace: str = "",
        name: str | None = None,
        on_lost: Callable[[], None] | None = None,
    ) -> NatsTransport:
        """Connect to the NATS server at `url`; `on_lost` is called if the connection closes
        for good (nats-py gave up reconnecting), not when `close` closes it."""
        transport: NatsTransport | None = None

        async def closed() -> None:
            if transport is not None and not transport._closing and on_lost is not None:
                on_lost()

        async def error(exc: Exception) -> None:
            log.warning("nats_error", error=repr(exc))

        async def disconnected() -> None:
            if transport is None or not transport._closing:
                log.warning("nats_disconnected", url=url)

        async def reconnected() -> None:
            log.info("nats_reconnected", url=url)

        connecting = nats.connect(
            servers=[url],
            name=name,
            closed_cb=closed,
            error_cb=error,
            disconnected_cb=disconnected,
            reconnected_cb=reconnected,
            connect_timeout=CONNECT_TIMEOUT_S,
        )
        try:  # nats-py retries a first connection as long as a lost one (minutes): not here
            client = await asyncio.wait_for(connecting, CONNECT_TIMEOUT_S)
        except TimeoutError as exc:
            raise ConnectionError(f"no NATS server answers at {url}") from exc
        transport = cls(client, namespace)
        await transport._start()
        return transport

    async def _start(self) -> None:
        self._inbox_subscription = await self._client.subscribe(
            f"{self._inbox}.>", cb=self._on_reply
        )
        await self._round_trip()

    async def _send(self) -> None:
        while (item := await self._outgoing.get()) is not None:
            subject, data, reply = item
            try:
                await self._client.publish(subject, data, reply=reply)
            except nats.errors.Error as exc:  # fire and forget, as the local bus: log it
                log.warning("nats_publish_failed", subject=subject, error=repr(exc))
                future = self._replies.get(reply)
                if future is not None and not future.done():
                    future.set_exception(ConnectionError(f"not sent: {exc!r}"))
            finally:
                self._outgoing.task_done()

    async def flush(self) -> None:
        """Return once the server has handled everything this process sent so far."""
        await self._round_trip()

    async def _round_trip(self) -> None:
        """Return once the server has read everything this connection sent before the call.

        Not nats-py's `flush`: its PING goes straight to the socket, ahead of the commands
        still waiting in the client's buffer (a SUB, an UNSUB), so its PONG can come back
        before the server has read them; a request from another connection right after
        `subscribe` then found no responder (CI, once). A message to this connection's own
        inbox waits behind them in the same buffer and the same sending queue, and the
        server hands it back only after reading them.
        """
        reply_to = f"{self._inbox}.{next(self._next_reply)}"
        future: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        self._replies[reply_to] = future
        try:
            self._outgoing.put_nowait((reply_to, b"", ""))
            await asyncio.wait_for(future, FLUSH_TIMEOUT_S)
        finally:
            self._replies.pop(reply_to, None)

    # -- Transport ---------------------------------------------------------------------------
    def publish(self, subject: str, data: bytes) -> None:
        self._outgoing.put_nowait((self._prefix + subject, data, ""))

    async def subscribe(self, subject: str, handler: Handler) -> _NatsSubscription:
        cut = len(self._prefix)

        async def deliver(msg: Msg) -> None:
            try:
                handler(Message(msg.subject[cut:], msg.data, msg.reply or None))
            except Exception:  # one handler's bug must not stop the later deliveries
                log.exception("bus_handler_failed", subject=msg.subject)

        subscription = await self._client.subscribe(self._prefix + subject, cb=deliver)
        await self._round_trip()
        return _NatsSubscription(subscription, self._round_trip)

    async def request(self, subject: str, data: bytes, timeout: float) -> bytes:
        reply_to = f"{self._inbox}.{next(self._next_reply)}"
        future: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        self._replies[reply_to] = future
        try:
            self._outgoing.put_nowait((self._prefix + subject, data, reply_to))
            return (await asyncio.wait_for(future, timeout)).data
        finally:
            self._replies.pop(reply_to, None)

    def reply(self, message: Message, data: bytes) -> None:
        if message.reply is not None:  # an inbox: outside the namespace
            self._outgoing.put_nowait((message.reply, data, ""))

    async def close(self) -> None:
        self._closing = True
        self._outgoing.put_nowait(None)  # what was queued before is sent first
        with contextlib.suppress(nats.errors.Error, TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._sending), FLUSH_TIMEOUT_S)
        self._sending.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._sending
        with contextlib.suppress(nats.errors.Error):
            await self._client.flush(FLUSH_TIMEOUT_S)
        if not self._client.is_closed:
            await self._client.close()
        for future in self._replies.values():
            if not future.done():
                future.set_exception(ConnectionError("the bus is closed"))

    # -- replies -----------------------------------------------------------------------------
    async def _on_reply(self, msg: Msg) -> None:
        future = self._replies.get(msg.subject)
        if future is None or future.done():
            return
        if msg.headers and msg.headers.get(STATUS_HEADER) == NO_RESPONDERS:
            future.set_exception(NoRespondersError(msg.subject))
        else:
            future.set_result(Message(msg.subject, msg.data, msg.reply or None))
