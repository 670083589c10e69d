"""The transport between the worker processes of one machine: a small broker on a Unix socket.

The supervisor (vollmond/workers.py) runs the `Broker`; every worker connects a
`LocalTransport`. It does what the service asks of NATS (`transport.Transport`) and nothing
more: exact subjects and ``prefix.>`` wildcards, in-order delivery per connection, a ping that
makes a subscription certain, request/reply through a per-connection inbox, and an immediate
"no responders" answer. The socket lives in a directory only the service's user can enter.

A frame is two big-endian lengths (header, payload), a JSON header and the payload bytes.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import struct
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import structlog

from vollmond.service.shards.transport import Handler, Message, NoRespondersError

log = structlog.get_logger(__name__)

_LENGTHS = struct.Struct(">II")
NO_RESPONDERS = 503
WILDCARD = ">"
UNSUBSCRIBE_WAIT_S = 5.0


def _frame(header: dict[str, Any], payload: bytes = b"") -> bytes:
    head = json.dumps(header, separators=(",", ":")).encode()
    return _LENGTHS.pack(len(head), len(payload)) + head + payload


async def _read_frame(reader: asyncio.StreamReader) -> tuple[dict[str, Any], bytes]:
    head_len, payload_len = _LENGTHS.unpack(await reader.readexactly(_LENGTHS.size))
    header: dict[str, Any] = json.loads(await reader.readexactly(head_len))
    payload = await reader.readexactly(payload_len) if payload_len else b""
    return header, payload


def _covering(subject: str) -> Iterator[str]:
    """The subscription subjects that receive `subject`: itself and its ``.>`` prefixes."""
    yield subject
    parts = subject.split(".")
    for end in range(len(parts) - 1, -1, -1):
        yield ".".join([*parts[:end], WILDCARD])


# -- the broker --------------------------------------------------------------------------


@dataclass(eq=False)
class _Peer:
    writer: asyncio.StreamWriter
    sids: dict[int, str] = field(default_factory=dict)


class Broker:
    """Routes every published frame to the connections subscribed to its subject."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._subs: dict[str, dict[tuple[_Peer, int], None]] = {}
        self._server: asyncio.AbstractServer | None = None
        self._peers: set[_Peer] = set()
        self._serving: set[asyncio.Task[Any]] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_unix_server(self._serve, path=self.path)
        os.chmod(self.path, 0o600)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for peer in list(self._peers):
            peer.writer.close()  # its reader ends with the connection
        await asyncio.gather(*self._serving, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = _Peer(writer)
        self._peers.add(peer)
        task = asyncio.current_task()
        assert task is not None
        self._serving.add(task)
        try:
            while True:
                header, payload = await _read_frame(reader)
                self._handle(peer, header, payload)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            self._serving.discard(task)
            self._peers.discard(peer)
            for sid, subject in peer.sids.items():
                self._subs.get(subject, {}).pop((peer, sid), None)
            writer.close()

    def _handle(self, peer: _Peer, header: dict[str, Any], payload: bytes) -> None:
        op = header["op"]
        if op == "pub":
            self._route(header["subject"], header.get("reply"), payload)
        elif op == "sub":
            sid, subject = int(header["sid"]), str(header["subject"])
            peer.sids[sid] = subject
            self._subs.setdefault(subject, {})[(peer, sid)] = None
        elif op == "unsub":
            sid = int(header["sid"])
            gone = peer.sids.pop(sid, "")
            self._subs.get(gone, {}).pop((peer, sid), None)
        elif op == "ping":
            peer.writer.write(_frame({"op": "pong"}))

    def _route(self, subject: str, reply: str | None, payload: bytes) -> None:
        delivered = False
        for covering in _covering(subject):
            for peer, sid in self._subs.get(covering, {}):
                head = {"op": "msg", "sid": sid, "subject": subject, "reply": reply}
                peer.writer.write(_frame(head, payload))
                delivered = True
        if not delivered and reply is not None:
            self._route_status(reply, NO_RESPONDERS)

    def _route_status(self, subject: str, status: int) -> None:
        for covering in _covering(subject):
            for peer, sid in self._subs.get(covering, {}):
                head = {"op": "msg", "sid": sid, "subject": subject, "status": status}
                peer.writer.write(_frame(head))


# -- a worker's connection ---------------------------------------------------------------


class _LocalSubscription:
    def __init__(self, bus: LocalTransport, sid: int) -> None:
        self._bus = bus
        self._sid = sid

    async def unsubscribe(self) -> None:
        if self._bus._unsubscribe(self._sid) and not self._bus._reading.done():
            with contextlib.suppress(ConnectionError, TimeoutError):  # a broker that does not
                await asyncio.wait_for(self._bus.flush(), UNSUBSCRIBE_WAIT_S)  # answer: go on


class LocalTransport:
    """A worker's connection to the broker (`transport.Transport`)."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        on_lost: Callable[[], None] | None = None,
    ) -> None:
        self._reader = reader
        self._on_lost = on_lost
        self._writer = writer
        self._sids = itertools.count(1)
        self._handlers: dict[int, Handler] = {}
        self._pongs: deque[asyncio.Future[None]] = deque()  # one per ping, oldest first
        self._inbox = f"_INBOX.{os.getpid()}.{id(self):x}"
        self._replies: dict[str, asyncio.Future[Message]] = {}
        self._next_reply = itertools.count(1)
        self._inbox_sid = next(self._sids)
        self._handlers[self._inbox_sid] = self._on_reply
        self._send({"op": "sub", "sid": self._inbox_sid, "subject": f"{self._inbox}.{WILDCARD}"})
        self._reading = asyncio.create_task(self._read(), name="localbus-read")

    @classmethod
    async def connect(cls, path: str, on_lost: Callable[[], None] | None = None) -> LocalTransport:
        """Connect to the broker at `path`; `on_lost` is called if the broker goes away."""
        reader, writer = await asyncio.open_unix_connection(path)
        bus = cls(reader, writer, on_lost)
        await bus.flush()
        return bus

    def _send(self, header: dict[str, Any], payload: bytes = b"") -> None:
        self._writer.write(_frame(header, payload))

    async def flush(self) -> None:
        """Wait until the broker has handled everything sent so far (its pong)."""
        pong: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pongs.append(pong)
        self._send({"op": "ping"})
        await self._writer.drain()
        await pong

    async def _read(self) -> None:
        try:
            while True:
                header, payload = await _read_frame(self._reader)
                if header["op"] == "pong":
                    pong = self._pongs.popleft()
                    if not pong.done():
                        pong.set_result(None)
                    continue
                handler = self._handlers.get(int(header["sid"]))
                if handler is None:
                    continue
                status = header.get("status")
                data = payload if status is None else b""
                message = Message(header["subject"], data, header.get("reply"))
                try:
                    if status is not None:
                        self._on_status(message, int(status))
                    else:
                        handler(message)
                except Exception:  # one handler's bug must not stop every other delivery
                    log.exception("bus_handler_failed", subject=message.subject)
        except (asyncio.IncompleteReadError, ConnectionError):
            log.warning("bus_connection_lost")
            waiting: list[asyncio.Future[Any]] = [*self._replies.values(), *self._pongs]
            for future in waiting:
                if not future.done():
                    future.set_exception(ConnectionError("the bus is gone"))
            if self._on_lost is not None:
                self._on_lost()

    # -- Transport ---------------------------------------------------------------------------
    def publish(self, subject: str, data: bytes) -> None:
        self._send({"op": "pub", "subject": subject}, data)

    async def subscribe(self, subject: str, handler: Handler) -> _LocalSubscription:
        sid = next(self._sids)
        self._handlers[sid] = handler
        self._send({"op": "sub", "sid": sid, "subject": subject})
        await self.flush()
        return _LocalSubscription(self, sid)

    def _unsubscribe(self, sid: int) -> bool:
        if self._handlers.pop(sid, None) is None:
            return False
        self._send({"op": "unsub", "sid": sid})
        return True

    async def request(self, subject: str, data: bytes, timeout: float) -> bytes:
        reply_to = f"{self._inbox}.{next(self._next_reply)}"
        future: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        self._replies[reply_to] = future
        try:
            self._send({"op": "pub", "subject": subject, "reply": reply_to}, data)
            return (await asyncio.wait_for(future, timeout)).data
        finally:
            self._replies.pop(reply_to, None)

    def reply(self, message: Message, data: bytes) -> None:
        if message.reply is not None:
            self.publish(message.reply, data)

    async def close(self) -> None:
        self._reading.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reading
        self._writer.close()
        with contextlib.suppress(ConnectionError):
            await self._writer.wait_closed()

    # -- replies -----------------------------------------------------------------------------
    def _on_reply(self, message: Message) -> None:
        future = self._replies.get(message.subject)
        if future is not None and not future.done():
            future.set_result(message)

    def _on_status(self, message: Message, status: int) -> None:
        future = self._replies.get(message.subject)
        if future is not None and not future.done() and status == NO_RESPONDERS:
            future.set_exception(NoRespondersError(message.subject))
