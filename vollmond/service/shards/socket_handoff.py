"""A game's WebSocket reaches the worker that owns the game (issue 16, "Every core").

The kernel spreads new connections over the workers' listening sockets (SO_REUSEPORT), so
without help a socket lands on the owner of its game only one time in N; on every other
worker it is served through a mirror, which replays each of the game's commands a second time
and relays the socket's commands over the bus (docs/scaling.md). Two workers then cost
1.4-1.8x the CPU per command of one, and a second core buys little.

A client that knows its game says so in the upgrade request (``/ws?game=<id>``, as the page
does). The worker that accepted it asks the ownership function; if another worker owns the
game, it passes the connected socket itself to that worker (a Unix datagram with the file
descriptor as SCM_RIGHTS, before a byte of the answer is written) together with the request
it read, and forgets the connection. The owner adopts the socket as if it had accepted it and
reads the request again: the handshake, the hello and everything after happen there, with no
mirror and no relay.

Why the socket and not a proxy: a proxy would copy every frame through a second process for
the socket's whole life, which is the cost this removes. Why in the upgrade and not at the
hello: after the handshake the socket carries WebSocket state (the uvicorn protocol's), which
cannot be moved; the request before it is plain bytes.

What stays as it was: a socket without the hint (an older client, a spectator's link, the
tests that put a socket on a chosen worker), a hint that names no game, a request too large
for one datagram, TLS terminated by the worker (the session cannot move), and an owner that
cannot be reached — each is served where it landed, through a mirror. The hint is only a
hint: the hello decides what the socket follows.
"""

from __future__ import annotations

import array
import asyncio
import contextlib
import enum
import os
import re
import socket
from collections.abc import Callable
from dataclasses import dataclass, field

import structlog

from vollmond.service.shards.ownership import Ownership

log = structlog.get_logger(__name__)

# A game id as the service makes them; anything else is no hint.
_GAME_HINT = re.compile(rb"(?:^|&)game=([A-Za-z0-9_-]{1,64})(?:&|$)")
# The request is read again by the owner; a larger one than this is served where it landed.
MAX_REQUEST_BYTES = 32 * 1024

# While the owner's inbox is full: try again this often, this many times (half a second).
BUSY_RETRY_S = 0.005
BUSY_TRIES = 100

ProtocolFactory = Callable[[], asyncio.Protocol]


class Passed(enum.Enum):
    """What became of one attempt to pass a connection on."""

    SENT = "sent"
    BUSY = "busy"  # the owner's inbox is full: worth another try soon
    REFUSED = "refused"  # too large, or nobody listens: serve it here


def handoff_path(directory: str, node: str) -> str:
    """Where worker `node` takes sockets handed to it (in the supervisor's private directory)."""
    return os.path.join(directory, f"handoff-{node}.sock")


def game_hint(target: bytes) -> str | None:
    """The game id in the query of an upgrade request's target (``/ws?game=…``), if any."""
    query = target.partition(b"?")[2].partition(b"#")[0]  # bytes as sent: no decoding to fail
    match = _GAME_HINT.search(query) if query else None
    return match.group(1).decode("ascii") if match else None


@dataclass(eq=False)
class SocketHandoff:
    """One worker's end: passes sockets to the owners of their games, adopts those passed to it."""

    node: str
    ownership: Ownership
    directory: str
    #: Connections passed on, adopted, and served here although another worker owns their
    #: game (its inbox stayed full, or nobody listened); `/metrics` shows them.
    passed: int = 0
    adopted: int = 0
    kept: int = 0
    _inbox: socket.socket | None = field(default=None, repr=False)
    _outbox: socket.socket | None = field(default=None, repr=False)

    def owner_elsewhere(self, target: bytes) -> str | None:
        """The worker to pass an upgrade request for `target` to, or None to serve it here."""
        game = game_hint(target)
        if game is None:
            return None
        owner = self.ownership.owner_of(game)
        return None if owner == self.node else owner

    def pass_to(self, node: str, request: bytes, fd: int) -> Passed:
        """Send the connection `fd` and the `request` read from it to worker `node`, once."""
        if len(request) > MAX_REQUEST_BYTES:
            return Passed.REFUSED
        if self._outbox is None:
            self._outbox = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            self._outbox.setblocking(False)
        fds = array.array("i", [fd])
        try:
            self._outbox.sendmsg(
                [request],
                [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)],
                0,
                handoff_path(self.directory, node),
            )
        except BlockingIOError:
            return Passed.BUSY
        except OSError as exc:  # not listening (not yet, or no longer)
            log.warning("ws_handoff_failed", to=node, error=str(exc))
            return Passed.REFUSED
        self.passed += 1
        return Passed.SENT

    def pass_soon(
        self, node: str, request: bytes, fd: int, done: Callable[[bool], None], tries: int = 0
    ) -> None:
        """`pass_to`, tried again while the owner's inbox is full; then `done(sent)`.

        An inbox holds only `net.unix.max_dgram_qlen` datagrams (10 by default): when
        thousands of clients connect at once (a restart's reconnects), the owner may be
        behind. Waiting a few milliseconds is cheaper than serving the socket through a
        mirror for the rest of its life; after `BUSY_TRIES` it is served here.
        """
        passed = self.pass_to(node, request, fd)
        if passed is Passed.BUSY and tries < BUSY_TRIES:
            loop = asyncio.get_running_loop()
            loop.call_later(BUSY_RETRY_S, self.pass_soon, node, request, fd, done, tries + 1)
            return
        if passed is Passed.BUSY:
            log.warning("ws_handoff_busy", to=node, tries=tries)
        if passed is not Passed.SENT:
            self.kept += 1
        done(passed is Passed.SENT)

    def listen(self, adopt: ProtocolFactory) -> None:
        """Start taking sockets passed to this worker; each is served by a protocol from
        `adopt` as if this worker had accepted it."""
        path = handoff_path(self.directory, self.node)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        inbox = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        inbox.bind(path)
        inbox.setblocking(False)
        self._inbox = inbox
        loop = asyncio.get_running_loop()
        loop.add_reader(inbox.fileno(), self._take, adopt)

    def _take(self, adopt: ProtocolFactory) -> None:
        assert self._inbox is not None
        while True:
            try:
                request, fds, flags, _ = socket.recv_fds(self._inbox, MAX_REQUEST_BYTES + 1, 1)
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                log.warning("ws_handoff_receive_failed", error=str(exc))
                return
            truncated = flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC)
            if truncated or len(fds) != 1 or not request:
                for fd in fds:
                    os.close(fd)
                log.warning("ws_handoff_malformed", fds=len(fds), size=len(request))
                continue
            try:
                conn = socket.socket(fileno=fds[0])
            except OSError:
                os.close(fds[0])
                continue
            if conn.type != socket.SOCK_STREAM:
                conn.close()
                continue
            conn.setblocking(False)
            asyncio.get_running_loop().create_task(self._adopt(conn, request, adopt))

    async def _adopt(self, conn: socket.socket, request: bytes, adopt: ProtocolFactory) -> None:
        loop = asyncio.get_running_loop()
        try:
            _, protocol = await loop.connect_accepted_socket(adopt, conn)
        except OSError:
            conn.close()  # the client went away meanwhile
            return
        self.adopted += 1
        protocol.data_received(request)

    def close(self) -> None:
        if self._inbox is not None:
            with contextlib.suppress(RuntimeError):  # the loop is already closed
                asyncio.get_running_loop().remove_reader(self._inbox.fileno())
            self._inbox.close()
            self._inbox = None
        if self._outbox is not None:
            self._outbox.close()
            self._outbox = None
