"""Friends' whereabouts and invitations shared by the processes (docs/scaling.md, "Friends").

A player's socket or call lands on one worker, his friends' on others; each of them must see
one community. Two parts, each in the pattern its traffic fits:

- **Who is online: the person's owner knows** (as a limit key's owner counts it,
  `shared_limits`). Every person gets an owner, the rendezvous hash of ``person:<key>`` over
  the same fixed list of processes as the games. A call's start and end and a page's asking
  are told to that owner as notices on ``node.<owner>.online`` (in order: one publisher), a
  page's at most every `web_online_s` / `RESEND_PARTS`, since a page asks every few seconds
  and the owner needs no finer time than that. Whoever wants to know (a friends list, a call
  into a room) asks the owners of those this process has not seen itself, one request per
  owner for a whole list. Writes are frequent and reads rare, so the reads pay the bus.
- **Invitations: every process holds every one** (as the recording notices are told to all,
  `notices`). An invitation, its use (`take`), its withdrawal (a room closed) and the drop
  after a block are published on ``community.invitations`` and applied by every other
  process, whose watchers (a caller in the announcer) are told at once. Why not an owner per
  invitee: the telephone's announcer reads the invitations while it speaks its menu, without
  waiting, and a watcher sits wherever the invitee's call landed; invitations are rare (a
  person inviting a friend), so telling all is cheap. Numbers are unique among the
  processes: process i of n numbers i + n, i + 2n, ...

A silent owner (the bus lost it: the service restarts as a whole) counts as not knowing
anyone online; this process's own knowledge still answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Final

import structlog

from vollmond.service.community import (
    Community,
    Destination,
    Invitation,
    Named,
    ToRoom,
    ToTable,
    parse_key,
)
from vollmond.service.community.friends import Friends
from vollmond.service.community.online import Online
from vollmond.service.hub import Hub
from vollmond.service.shards.ownership import HashOwnership
from vollmond.service.shards.sharded_hub import ShardedHub
from vollmond.service.shards.transport import (
    Message,
    NoRespondersError,
    Served,
    Subscription,
    Transport,
)
from vollmond.settings.community import FriendsSettings, MailboxSettings
from vollmond.store.community import owner_key
from vollmond.store.db import Sessions
from vollmond.store.owners import Owner

log = structlog.get_logger(__name__)

ASK_TIMEOUT_S: Final = 2.0
RESEND_PARTS: Final = 6  # a page's asking is told to its owner every web_online_s / this
INVITATIONS: Final = "community.invitations"
CALL, HUNG_UP, SEEN, ONLINE = "call", "hung_up", "seen", "online"


def online_subject(node: str) -> str:
    return f"node.{node}.online"


def _owner(key: Any) -> Owner:
    owner = parse_key(str(key))
    if owner is None:
        raise ValueError(f"not a person's key: {key!r}")
    return owner


# -- who is online -------------------------------------------------------------------------
class SharedOnline(Online):
    """This process's callers and pages, told to each person's owner; the owners asked."""

    def __init__(
        self,
        web_online_s: float,
        *,
        node: str,
        ownership: HashOwnership,
        transport: Transport,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(web_online_s, clock)
        self.node = node
        self.ownership = ownership
        self.transport = transport
        self.resend_s = web_online_s / RESEND_PARTS
        self._told: dict[Owner, float] = {}  # when a page's asking was last told its owner
        self._told_kept = 0  # entries after the last sweep (a sweep costs one pass: amortised)
        self.asked = 0  # questions sent to other processes
        self.unanswered = 0  # of those, not answered
        self.served = Served(transport, online_subject(node), self._on_message)

    async def start(self) -> None:
        await self.served.start()

    async def close(self) -> None:
        await self.served.close()

    def owner_of(self, person: Owner) -> str:
        return self.ownership.owner_of(f"person:{owner_key(person)}")

    # -- told here ---------------------------------------------------------------------------
    def call_started(self, owner: Owner) -> Callable[[], None]:
        ended_here = super().call_started(owner)
        where = self.owner_of(owner)
        if where == self.node:
            return ended_here
        self._notify(where, CALL, owner)
        done = False

        def ended() -> None:
            nonlocal done
            if not done:
                done = True
                ended_here()
                self._notify(where, HUNG_UP, owner)

        return ended

    def seen(self, owner: Owner) -> None:
        super().seen(owner)
        where = self.owner_of(owner)
        if where == self.node:
            return
        now = self.clock()
        last = self._told.get(owner)
        if last is not None and now - last < self.resend_s:
            return
        if len(self._told) > 2 * self._told_kept + 1000:  # pages that stopped asking go
            self._told = {o: t for o, t in self._told.items() if now - t < self.resend_s}
            self._told_kept = len(self._told)
        self._told[owner] = now
        self._notify(where, SEEN, owner)

    def _notify(self, where: str, op: str, owner: Owner) -> None:
        body = {"op": op, "who": owner_key(owner)}
        self.transport.publish(online_subject(where), json.dumps(body).encode())

    # -- asked here ----------------------------------------------------------------------------
    async def online_of(self, owners: Iterable[Owner]) -> set[Owner]:
        """This process's own knowledge first; the others' owners asked, one request each."""
        wanted = list(owners)
        found = await super().online_of(wanted)
        asking: dict[str, list[Owner]] = {}
        for person in wanted:
            where = self.owner_of(person)
            if person not in found and where != self.node:
                asking.setdefault(where, []).append(person)
        answers = await asyncio.gather(*(self._ask(n, ps) for n, ps in asking.items()))
        for answer in answers:
            found |= answer
        return found

    async def _ask(self, where: str, persons: list[Owner]) -> set[Owner]:
        self.asked += 1
        body = {"op": ONLINE, "who": [owner_key(p) for p in persons]}
        try:
            reply = await self.transport.request(
                online_subject(where), json.dumps(body).encode(), ASK_TIMEOUT_S
            )
            return {_owner(key) for key in json.loads(reply)["online"]}
        except (TimeoutError, NoRespondersError, ValueError, KeyError) as exc:
            self.unanswered += 1
            log.warning("online_owner_silent", owner=where, error=type(exc).__name__)
            return set()

    def _on_message(self, message: Message) -> None:
        """Another process's caller or page (a notice), or its question (answered)."""
        online: list[str] = []
        try:
            body = json.loads(message.data)
            op = body["op"]
            if op == CALL:
                Online.call_started(self, _owner(body["who"]))
            elif op == HUNG_UP:
                self.call_ended(_owner(body["who"]))
            elif op == SEEN:
                Online.seen(self, _owner(body["who"]))
            elif op == ONLINE:
                online = [key for key in body["who"] if self.is_online(_owner(key))]
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("online_bad_message", node=self.node, error=repr(exc))
        if message.reply is not None:
            self.transport.reply(message, json.dumps({"online": online}).encode())


# -- invitations ---------------------------------------------------------------------------
def destination_json(to: Destination) -> dict[str, Any]:
    return {"kind": to.kind.value, **to.to_json()}


def destination_of(data: dict[str, Any]) -> Destination:
    if "room" in data:
        return ToRoom(str(data["room"]))
    return ToTable(str(data["game"]), str(data["world"]), bool(data["private"]))


def invitation_json(invitation: Invitation, now: float) -> dict[str, Any]:
    """An invitation on the bus: its time left, not its end (each process has its clock)."""
    return {
        "id": invitation.id,
        "from": invitation.inviter.to_json(),
        "invitee": owner_key(invitation.invitee),
        "to": destination_json(invitation.to),
        "ttl": invitation.expires - now,
    }


def invitation_of(data: dict[str, Any], now: float) -> Invitation:
    inviter = data["from"]
    named = Named(_owner(inviter["key"]), inviter["name"], inviter["phone_id"])
    to = destination_of(data["to"])
    return Invitation(int(data["id"]), named, _owner(data["invitee"]), to, now + data["ttl"])


class SharedFriends(Friends):
    """Friends whose invitations every process holds: each change here is published, each
    change there applied here (the base class's own steps, without publishing again)."""

    def __init__(
        self,
        sessions: Sessions,
        settings: FriendsSettings,
        online: Online,
        *,
        node: str,
        nodes: tuple[str, ...],
        transport: Transport,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        first, step = nodes.index(node) + 1, len(nodes)
        ids = (first + step * i for i in itertools.count())
        super().__init__(sessions, settings, online, clock, ids)
        self.node = node
        self.transport = transport
        self._subscription: Subscription | None = None

    async def start(self) -> None:
        self._subscription = await self.transport.subscribe(INVITATIONS, self._on_news)

    async def close(self) -> None:
        subscription, self._subscription = self._subscription, None
        if subscription is not None:
            with contextlib.suppress(Exception):
                await subscription.unsubscribe()

    def _publish(self, op: str, **body: Any) -> None:
        data = json.dumps({"from": self.node, "op": op, **body}).encode()
        self.transport.publish(INVITATIONS, data)

    async def _send(self, me: Owner, friend: Owner, to: Destination) -> Invitation:
        invitation = await super()._send(me, friend, to)
        await self.transport.flush()  # on its way to the others before the inviter hears yes
        return invitation

    def _add(self, invitation: Invitation) -> None:
        super()._add(invitation)
        self._publish("add", invitation=invitation_json(invitation, self.clock()))

    def take(self, me: Owner, invitation_id: int) -> Invitation:
        invitation = super().take(me, invitation_id)
        self._publish("take", id=invitation_id)
        return invitation

    def withdraw(self, to: Destination) -> None:
        super().withdraw(to)
        self._publish("withdraw", to=destination_json(to))

    def _drop_invitations(self, *, inviter: Owner, invitee: Owner) -> None:
        super()._drop_invitations(inviter=inviter, invitee=invitee)
        self._publish("drop", inviter=owner_key(inviter), invitee=owner_key(invitee))

    def _on_news(self, message: Message) -> None:
        try:
            body = json.loads(message.data)
            if body["from"] == self.node:
                return
            op = body["op"]
            if op == "add":
                Friends._add(self, invitation_of(body["invitation"], self.clock()))
            elif op == "take":
                self._invitations.pop(int(body["id"]), None)
            elif op == "withdraw":
                Friends.withdraw(self, destination_of(body["to"]))
            elif op == "drop":
                inviter, invitee = _owner(body["inviter"]), _owner(body["invitee"])
                Friends._drop_invitations(self, inviter=inviter, invitee=invitee)
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("invitations_bad_message", node=self.node, error=repr(exc))


async def shared_community(
    hub: Hub,
    data_dir: Path,
    mailbox: MailboxSettings | None = None,
    friends: FriendsSettings | None = None,
) -> Community:
    """The hub's community: whereabouts and invitations shared by the processes where games
    are sharded by the hash (the workers of ``--workers``, nodes over NATS with ``--nodes``),
    else this process's own (one process; nodes with leases: each node its own)."""
    if not isinstance(hub, ShardedHub) or not isinstance(hub.ownership, HashOwnership):
        return Community(hub, data_dir, mailbox, friends)
    settings = friends or FriendsSettings()
    ownership = hub.ownership
    online = SharedOnline(
        settings.web_online_s, node=hub.node, ownership=ownership, transport=hub.transport
    )
    book = SharedFriends(
        hub.sessions,
        settings,
        online,
        node=hub.node,
        nodes=ownership.nodes,
        transport=hub.transport,
    )
    await online.start()
    await book.start()
    return Community(hub, data_dir, mailbox, settings, online=online, make_friends=lambda *_: book)
