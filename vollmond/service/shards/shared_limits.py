"""The web's limits counted once for all worker processes (docs/scaling.md, "Limits").

Each limit (sign-ups per address, chat per seat, open sockets per address, ...) is a set of
keys; with the games sharded over processes every key gets one owner, the rendezvous hash of
``<limit>/<key>`` over the same fixed list of processes as the games (`HashOwnership`), and
only the owner counts it. A process asks the owner of a key on ``node.<owner>.limits`` and
gets its yes or no; a socket that closes is told to the owner as a notice (no answer needed,
in order after its acquire: one publisher's messages arrive in order). So a client that
spreads its attempts or sockets over the workers meets one budget, as on one process.

Why the owner of a key and not a shared store: a limit is asked on every sign-in, chat line
and socket, and answered from memory in microseconds; a round trip on the local bus is a
fraction of a millisecond, a database or Redis write per chat line would be more and would
add a service to run. Why the hash and not one counting process: the counts spread over the
workers like the games, and no process is special.

When the owner does not answer (it is gone; the whole service is restarted then, as for its
games), the asking process counts the key itself for that call, so the service still
answers; the budget is then per process again until the owner is back.
"""

from __future__ import annotations

from collections import Counter

import structlog

from vollmond.service.shards.ownership import HashOwnership
from vollmond.service.shards.transport import Message, NoRespondersError, Served, Transport
from vollmond.service.web.limits import LimitTable

log = structlog.get_logger(__name__)

#: How long a process waits for a key's owner before it counts the key itself.
ASK_TIMEOUT_S = 2.0

ALLOW, ACQUIRE, RELEASE = "allow", "acquire", "release"
_SEP = "\x00"
_YES, _NO = b"1", b"0"


def limits_subject(node: str, service: str = "limits") -> str:
    return f"node.{node}.{service}"


def encode(op: str, limit: str, key: str) -> bytes:
    """One question (or notice) about one key of one limit."""
    return _SEP.join((op, limit, key)).encode()


def decode(data: bytes) -> tuple[str, str, str]:
    """The operation, limit and key of a message (ValueError if it is not one)."""
    op, limit, key = data.decode().split(_SEP, 2)
    if op not in (ALLOW, ACQUIRE, RELEASE):
        raise ValueError(f"unknown limits operation {op!r}")
    return op, limit, key


class SharedLimits:
    """The limits of `table`, each key counted by its owner among `ownership.nodes`: this
    process answers for the keys it owns and asks the owner for the others."""

    def __init__(
        self,
        node: str,
        ownership: HashOwnership,
        transport: Transport,
        table: LimitTable,
        *,
        service: str = "limits",
    ) -> None:
        """`service`: the subject's last word (``node.<owner>.<service>``), so another table
        (the conference rooms' private rooms per person) is served beside the web's."""
        self.service = service
        self.node = node
        self.ownership = ownership
        self.transport = transport
        self.table = table
        self.asked = 0  # questions sent to other processes
        self.unanswered = 0  # of those, counted here because the owner did not answer
        self._here: Counter[tuple[str, str]] = Counter()  # sockets counted here instead
        self.served = Served(transport, limits_subject(node, service), self._on_message)

    async def start(self) -> None:
        await self.served.start()

    async def close(self) -> None:
        await self.served.close()

    def _owner(self, limit: str, key: str) -> str:
        return self.ownership.owner_of(f"{limit}/{key}")

    async def allow(self, limit: str, key: str) -> bool:
        """One more use of `key` under rate limit `limit` (False: over the limit)."""
        owner = self._owner(limit, key)
        if owner == self.node:
            return self.table.allow(limit, key)
        answer = await self._ask(owner, ALLOW, limit, key)
        return self.table.allow(limit, key) if answer is None else answer

    async def acquire(self, limit: str, key: str) -> bool:
        """One more open socket of `key` under ceiling `limit` (False: at the ceiling)."""
        owner = self._owner(limit, key)
        if owner == self.node:
            return self.table.acquire(limit, key)
        answer = await self._ask(owner, ACQUIRE, limit, key)
        if answer is not None:
            return answer
        taken = self.table.acquire(limit, key)
        if taken:
            self._here[(limit, key)] += 1  # its release is counted here too
        return taken

    def release(self, limit: str, key: str) -> None:
        """A socket of `key` acquired under `limit` closed."""
        if self._here[(limit, key)] > 0:
            self._here[(limit, key)] -= 1
            if not self._here[(limit, key)]:
                del self._here[(limit, key)]
            self.table.release(limit, key)
            return
        self._here.pop((limit, key), None)
        owner = self._owner(limit, key)
        if owner == self.node:
            self.table.release(limit, key)
        else:
            self.transport.publish(limits_subject(owner, self.service), encode(RELEASE, limit, key))

    async def _ask(self, owner: str, op: str, limit: str, key: str) -> bool | None:
        """The owner's answer; None when it gave none."""
        self.asked += 1
        try:
            reply = await self.transport.request(
                limits_subject(owner, self.service), encode(op, limit, key), ASK_TIMEOUT_S
            )
        except (TimeoutError, NoRespondersError) as exc:
            self.unanswered += 1
            log.warning("limits_owner_silent", owner=owner, limit=limit, error=type(exc).__name__)
            return None
        return reply == _YES

    def _on_message(self, message: Message) -> None:
        """A question from another process about a key this one owns (or a release); one
        that cannot be read is answered no."""
        allowed = False
        try:
            op, limit, key = decode(message.data)
            if op == RELEASE:
                self.table.release(limit, key)
            elif op == ALLOW:
                allowed = self.table.allow(limit, key)
            else:
                allowed = self.table.acquire(limit, key)
        except (ValueError, UnicodeDecodeError, KeyError) as exc:
            log.warning("limits_bad_message", error=repr(exc))
        if message.reply is not None:
            self.transport.reply(message, _YES if allowed else _NO)
