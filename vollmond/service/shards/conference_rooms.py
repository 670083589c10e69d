"""Conference rooms shared by the worker processes (docs/scaling.md, "Conference rooms").

A room lives with one owner, as a game does: the rendezvous hash of ``conference:<room id>``
over the processes (`HashOwnership`). A private room's id and code are drawn until both hash to
the process that opens it, so the process a code is typed on finds the owner without asking
anyone. The owner keeps the room as on one process — its members, its chat, its mixer — and:

- answers the other processes on ``node.<owner>.rooms`` (JSON): ``code`` (the room of a code),
  ``snapshot``, ``enter`` and ``say`` as requests, ``leave`` and ``mode`` as notices (one
  publisher's messages arrive in order, so a leave follows its enter);
- publishes the room's whole state after each of its events on ``room.<id>`` — members, modes,
  the kept chat, and the event itself. A room holds at most ``[rooms] max_members`` people and
  its events come at the pace of people talking, so the whole state is cheap, and a copy needs
  no sequence gaps filled: a newer version replaces it.

A process with members in a room it does not own keeps a :class:`MirrorRoom` of it: the state
from the owner, its own members' connections (phone lines, browser peers) told of the owner's
events as on the owner, their operations sent to the owner. Their voice goes through the voice
relay (`vollmond/voice/relay.py`) with the room's key in place of a game id: the mirror's
:class:`RelayedConferenceVoice` links each of its members as a relayed line, the owner's
`VoiceRooms.conference` finds the room's own mixer for them, where the owner's routing — every
talking member heard by every other — alone decides what they hear.

A person's private rooms open at once (``[rooms] private_per_person``) are counted by one
process for all, as the web's limits are (`shared_limits`): a ceiling keyed by the opener,
served on ``node.<w>.private_rooms``; acquired when a room is opened, released when its owner
drops it (the opener's own process: a private room is owned where it was opened).

Public rooms (one per world, a handful) are followed by every process from its start, so the
rooms list shows everyone's headcount; a private room is followed while a member here is in it.
Ownership by leases (nodes over NATS that take each other's games over) is not used for rooms:
there the rooms stay per node, as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import structlog

from vollmond.service.conference import (
    NOTICE_PREFIX,
    ChatLine,
    ChatRefusedError,
    ConferenceRoom,
    ConferenceRooms,
    EventKind,
    Member,
    RoomClosedError,
    RoomError,
    RoomEvent,
    RoomFullError,
    RoomKind,
    RoomNotFoundError,
    UnknownCodeError,
    normal_code,
)
from vollmond.service.enforce import Person
from vollmond.service.hub import Hub
from vollmond.service.shards.ownership import HashOwnership
from vollmond.service.shards.sharded_hub import ShardedHub
from vollmond.service.shards.shared_limits import SharedLimits
from vollmond.service.shards.transport import (
    Message,
    NoRespondersError,
    Served,
    Subscription,
    Transport,
)
from vollmond.service.web.limits import ConnectionCounter, LimitTable
from vollmond.settings.rooms import RoomSettings
from vollmond.voice.conference import ConferenceVoice
from vollmond.voice.frames import Int16Array
from vollmond.worlds import world_ids

if TYPE_CHECKING:
    from collections.abc import Callable, Hashable

    from vollmond.voice.relay import VoiceRelay

log = structlog.get_logger(__name__)

ASK_TIMEOUT_S: Final = 5.0
CODE_KEY: Final = "conference-code:"  # a private room's code hashes as this + code
PRIVATE: Final = "private"  # the ceiling of private rooms per opener (`SharedLimits`)
PRIVATE_SERVICE: Final = "private_rooms"  # its subject: node.<w>.private_rooms


def rooms_subject(node: str) -> str:
    return f"node.{node}.rooms"


def room_subject(room_id: str) -> str:
    return f"room.{room_id}"


class RoomOwnerSilentError(RoomNotFoundError):
    """The room's owner did not answer (it is gone: the service restarts as a whole)."""


# -- the room's state on the bus ---------------------------------------------------------------
def snapshot(room: ConferenceRoom) -> dict[str, Any]:
    return {
        "v": room.version,
        "members": [m.to_json() for m in room],
        "said": room.said,
        "chat": [[line.seq, line.slot, line.name, line.text] for line in room.chat],
    }


def event_json(event: RoomEvent) -> dict[str, Any]:
    return {"kind": event.kind.value, "slot": event.slot, "name": event.name, "text": event.text}


_ERRORS: dict[str, type[RoomError]] = {
    "unknown": RoomNotFoundError,
    "unknown_code": UnknownCodeError,
    "closed": RoomClosedError,
}


def error_json(exc: RoomError) -> dict[str, Any]:
    body: dict[str, Any] = {"error": exc.code}
    if isinstance(exc, RoomFullError):
        body["size"] = exc.size
    return body


def raise_error(body: dict[str, Any]) -> None:
    """The owner's refusal, raised here as the room itself would have raised it."""
    code = str(body["error"])
    if code == "full":
        raise RoomFullError(int(body["size"]))
    if code in _ERRORS:
        raise _ERRORS[code](code)
    raise ChatRefusedError(code)


def opener_key(opener: Person) -> str:
    """Whose private rooms a room counts for: the opener as the rooms compare it (an account,
    a phone identity, or both for a linked caller)."""
    return f"{opener.account_id}/{opener.phone_identity_id}"


# -- a room another process owns -----------------------------------------------------------------
class RelayedConferenceVoice(ConferenceVoice):
    """The voice of a room owned elsewhere: each member here is a relayed line, keyed by the
    room and its slot; frames go to the owner's mixer, the member's mix comes back."""

    mixed_here = False

    def __init__(self, size: int, key: str, relay: Callable[[], VoiceRelay | None]) -> None:
        super().__init__(size)
        self.key = key
        self.relay = relay

    def seat(self, slot: int, *, talking: bool) -> None:
        """The owner seats; the talking set here only keeps a muted frame off the bus."""
        if talking:
            self._talking.add(slot)
        else:
            self._talking.discard(slot)
        self._present.add(slot)

    def unseat(self, slot: int) -> None:
        self._present.discard(slot)
        self._talking.discard(slot)
        relay = self.relay()
        if relay is not None:
            relay.unlink((self.key, slot))

    def push(self, slot: int, samples: Int16Array) -> None:
        relay = self.relay()
        if relay is not None and slot in self._talking:
            relay.link((self.key, slot), self.key, slot).push(slot, samples)

    def pull(self, slot: int, puller: Hashable) -> Int16Array | None:
        relay = self.relay()
        if relay is None or slot not in self._present:
            return None
        return relay.link((self.key, slot), self.key, slot).pull()


@dataclass(eq=False)
class MirrorRoom(ConferenceRoom):
    """A room owned by `owner`, as this process sees it: the owner's state, this process's
    members' connections and operations (sent to the owner)."""

    owner: str = ""
    rooms: ShardedConferenceRooms | None = None
    subscription: Subscription | None = None
    told: int = 0  # the owner's version whose event this process's members were told last

    def __post_init__(self) -> None:
        assert self.rooms is not None
        self.voice = RelayedConferenceVoice(self.size, self.notice_key, self.rooms.relay)

    def local(self) -> list[Member]:
        """The members whose connections are on this process."""
        return [m for m in self.members.values() if m.listener is not None or m.person]

    def _mode_changed(self, member: Member) -> None:
        if self.members.get(member.slot) is member:
            self.voice.seat(member.slot, talking=member.talking)
            assert self.rooms is not None
            self.rooms.notify(
                self, "mode", slot=member.slot, muted=member.muted, listening=member.listening
            )

    def apply(self, state: dict[str, Any], event: dict[str, Any] | None) -> None:
        """The owner's state (if newer than the one here), then its event told to this
        process's members as the owner tells its own (once, though an answer's state of the
        same version may have come first)."""
        version = int(state["v"])
        if version > self.version:
            self._take(state)
        if event is None or version <= self.told:
            return
        self.told = version
        told = RoomEvent(EventKind(event["kind"]), int(event["slot"]), event["name"], event["text"])
        # As on the owner: who came or changed mode is not told of himself.
        but = (
            self.members.get(told.slot) if told.kind in (EventKind.JOINED, EventKind.MODE) else None
        )
        self._tell(told, but=but)
        self.version -= 1  # the owner counts the events, not this copy

    def _take(self, state: dict[str, Any]) -> None:
        self.version = int(state["v"])
        seen = {int(m["slot"]): m for m in state["members"]}
        for slot in [s for s in self.members if s not in seen]:
            self.voice.unseat(slot)
            del self.members[slot]
        for slot, data in seen.items():
            member = self.members.get(slot)
            if member is None or member.name != data["name"]:
                member = Member(slot, str(data["name"]), Person(), str(data["channel"]))
                self.members[slot] = member
            member.muted, member.listening = bool(data["muted"]), bool(data["listening"])
            self.voice.seat(slot, talking=member.talking)
        self.said = int(state["said"])
        self.chat = deque(ChatLine(int(s), int(n), str(w), str(t)) for s, n, w, t in state["chat"])


# -- the registry ---------------------------------------------------------------------------
class ShardedConferenceRooms(ConferenceRooms):
    """The rooms of one process among several: the rooms it owns as on one process, mirrors of
    the others' rooms it has members in (and of every public room)."""

    def __init__(
        self,
        settings: RoomSettings,
        *,
        node: str,
        ownership: HashOwnership,
        transport: Transport,
        relay: Callable[[], VoiceRelay | None],
    ) -> None:
        super().__init__(settings)
        self.node = node
        self.ownership = ownership
        self.transport = transport
        self.relay = relay
        self.mirrors: dict[str, MirrorRoom] = {}
        self.served = Served(transport, rooms_subject(node), self._on_request)
        table = LimitTable()
        table.counters[PRIVATE] = ConnectionCounter(settings.private_per_person)
        self.private = SharedLimits(node, ownership, transport, table, service=PRIVATE_SERVICE)
        self._tasks: set[asyncio.Task[None]] = set()

    def owner_of(self, room_id: str) -> str:
        return self.ownership.owner_of(f"{NOTICE_PREFIX}{room_id}")

    async def start(self) -> None:
        """Serve the other processes and follow every world's public room owned elsewhere."""
        await self.served.start()
        await self.private.start()
        for world in world_ids():
            room_id = f"public-{world}"
            if self.owner_of(room_id) == self.node:
                self._owned(super().public(world))
            else:
                await self._mirror(room_id, RoomKind.PUBLIC, world=world)

    async def close(self) -> None:
        await self.served.close()
        await self.private.close()
        for mirror in list(self.mirrors.values()):
            await self._unfollow(mirror)
        for task in list(self._tasks):
            task.cancel()

    # -- finding rooms -------------------------------------------------------------------------
    def public(self, world: str) -> ConferenceRoom:
        mirror = self.mirrors.get(f"public-{world}")
        return mirror if mirror is not None else super().public(world)

    def headcount(self, world: str) -> int:
        mirror = self.mirrors.get(f"public-{world}")
        return len(mirror.members) if mirror is not None else super().headcount(world)

    def _fresh_code(self) -> str:
        code = super()._fresh_code()
        while self.ownership.owner_of(f"{CODE_KEY}{code}") != self.node:
            code = super()._fresh_code()
        return code

    def _fresh_id(self) -> str:
        room_id = super()._fresh_id()
        while self.owner_of(room_id) != self.node:
            room_id = super()._fresh_id()
        return room_id

    async def open_private(self, opener: Person | None) -> ConferenceRoom:
        return self._owned(await super().open_private(opener))

    async def _may_open(self, opener: Person) -> bool:
        """One more room of `opener` at the ceiling's owner (released by `_dropped`)."""
        return await self.private.acquire(PRIVATE, opener_key(opener))

    def _dropped(self, room: ConferenceRoom) -> None:
        if room.opener:
            self.private.release(PRIVATE, opener_key(room.opener))

    async def by_code(self, code: str) -> ConferenceRoom:
        code = normal_code(code)
        owner = self.ownership.owner_of(f"{CODE_KEY}{code}")
        if owner == self.node:
            return await super().by_code(code)
        answer = await self._ask(owner, "code", code=code)
        return await self._follow(owner, str(answer["id"]), RoomKind.PRIVATE, code=code)

    async def invited(self, room_id: str) -> ConferenceRoom:
        owner = self.owner_of(room_id)
        if owner == self.node:
            return await super().invited(room_id)
        try:
            return await self._follow(owner, room_id, RoomKind.PRIVATE)
        except RoomNotFoundError as exc:
            raise RoomClosedError(room_id) from exc

    # -- what members do -----------------------------------------------------------------------
    async def _seat(self, room: ConferenceRoom, who: Member) -> Member:
        if not isinstance(room, MirrorRoom):
            return await super()._seat(room, who)
        person = who.person
        answer = await self._ask(
            room.owner,
            "enter",
            room=room.id,
            name=who.name,
            account=person.account_id,
            phone=person.phone_identity_id,
            channel=who.channel,
            listening=who.listening,
        )
        room.apply(answer["state"], None)
        member = room.members[int(answer["slot"])]
        member.person, member.listener = person, who.listener
        return member

    def leave(self, room: ConferenceRoom, member: Member) -> None:
        if not isinstance(room, MirrorRoom):
            super().leave(room, member)
            return
        if room.members.get(member.slot) is member:
            del room.members[member.slot]
            room.voice.unseat(member.slot)
            member.listener = None
            self.notify(room, "leave", slot=member.slot)
        self._later(self._drop_unused(room))

    def drop_if_empty(self, room: ConferenceRoom) -> None:
        if not isinstance(room, MirrorRoom):
            super().drop_if_empty(room)

    async def say(self, room: ConferenceRoom, member: Member, text: str) -> ChatLine:
        if not isinstance(room, MirrorRoom):
            return await super().say(room, member, text)
        answer = await self._ask(room.owner, "say", room=room.id, slot=member.slot, text=text)
        room.apply(answer["state"], None)
        seq = int(answer["seq"])
        return next(line for line in room.chat if line.seq == seq)

    # -- the owner's side ----------------------------------------------------------------------
    def _owned(self, room: ConferenceRoom) -> ConferenceRoom:
        """Publish the room's state after each of its events (once per room)."""
        if not any(isinstance(o, _Publisher) for o in room.observers):
            room.observers.add(_Publisher(self.transport, room))
        return room

    def _room_here(self, room_id: str) -> ConferenceRoom:
        if room_id.startswith("public-") and self.owner_of(room_id) == self.node:
            return self._owned(super().public(room_id.removeprefix("public-")))
        room = self._by_id.get(room_id)
        if room is None:
            raise RoomClosedError(room_id)
        return self._owned(room)

    def _on_request(self, message: Message) -> None:
        try:
            body = json.loads(message.data)
            answer = self._answer(str(body["op"]), body)
        except RoomError as exc:
            answer = error_json(exc)
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("rooms_bad_request", node=self.node, error=repr(exc))
            answer = {"error": "default"}
        if message.reply is not None:
            self.transport.reply(message, json.dumps(answer).encode())

    def _answer(self, op: str, body: dict[str, Any]) -> dict[str, Any]:
        if op == "code":
            room = self._private.get(normal_code(str(body["code"])))
            if room is None:
                raise UnknownCodeError("code")
            return {"id": room.id}
        room = self._room_here(str(body["room"]))
        if op == "snapshot":
            return {"state": snapshot(room)}
        if op == "enter":
            person = Person(body["account"], body["phone"])
            entered = room.enter(
                str(body["name"]), person, str(body["channel"]), listening=bool(body["listening"])
            )
            return {"slot": entered.slot, "state": snapshot(room)}
        member = room.members.get(int(body["slot"]))
        if member is None:
            raise RoomClosedError(room.id)
        if op == "say":
            line = self.say_now(room, member, str(body["text"]))
            return {"seq": line.seq, "state": snapshot(room)}
        if op == "mode":
            if bool(body["listening"]) != member.listening:
                room.set_listening(member, bool(body["listening"]))
            if bool(body["muted"]) != member.muted:
                room.set_muted(member, bool(body["muted"]))
        elif op == "leave":
            super().leave(room, member)
        return {}

    # -- following a room ------------------------------------------------------------------------
    async def _follow(
        self, owner: str, room_id: str, kind: RoomKind, *, code: str | None = None
    ) -> MirrorRoom:
        mirror = self.mirrors.get(room_id) or await self._mirror(room_id, kind, code=code)
        try:
            answer = await self._ask(owner, "snapshot", room=room_id)
        except RoomError:
            self._later(self._drop_unused(mirror))
            raise
        mirror.apply(answer["state"], None)
        return mirror

    async def _mirror(
        self, room_id: str, kind: RoomKind, *, world: str | None = None, code: str | None = None
    ) -> MirrorRoom:
        mirror = MirrorRoom(
            room_id,
            kind,
            self.settings.max_members,
            world=world,
            code=code,
            owner=self.owner_of(room_id),
            rooms=self,
        )
        self.mirrors[room_id] = mirror

        def heard(message: Message) -> None:
            body = json.loads(message.data)
            mirror.apply(body["state"], body["event"])

        mirror.subscription = await self.transport.subscribe(room_subject(room_id), heard)
        return mirror

    async def _drop_unused(self, mirror: MirrorRoom) -> None:
        """A private room nobody here is in any more is not followed."""
        if mirror.kind is RoomKind.PRIVATE and not mirror.local():
            await self._unfollow(mirror)

    async def _unfollow(self, mirror: MirrorRoom) -> None:
        if self.mirrors.get(mirror.id) is mirror:
            del self.mirrors[mirror.id]
        subscription, mirror.subscription = mirror.subscription, None
        if subscription is not None:
            with contextlib.suppress(Exception):
                await subscription.unsubscribe()

    # -- the bus -----------------------------------------------------------------------------
    def notify(self, room: MirrorRoom, op: str, **args: Any) -> None:
        """A notice to the room's owner (no answer): one publisher's messages keep their order."""
        body = {"op": op, "room": room.id, **args}
        self.transport.publish(rooms_subject(room.owner), json.dumps(body).encode())

    async def _ask(self, owner: str, op: str, **args: Any) -> dict[str, Any]:
        try:
            data = await self.transport.request(
                rooms_subject(owner), json.dumps({"op": op, **args}).encode(), ASK_TIMEOUT_S
            )
        except (TimeoutError, NoRespondersError) as exc:
            log.warning("rooms_owner_silent", owner=owner, op=op, error=type(exc).__name__)
            raise RoomOwnerSilentError(owner) from exc
        body: dict[str, Any] = json.loads(data)
        if "error" in body:
            raise_error(body)
        return body

    def _later(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


@dataclass(eq=False)
class _Publisher:
    """An observer of a room run here: its state and event to every process following it."""

    transport: Transport
    room: ConferenceRoom

    def __call__(self, event: RoomEvent) -> None:
        body = {"state": snapshot(self.room), "event": event_json(event)}
        self.transport.publish(room_subject(self.room.id), json.dumps(body).encode())


async def shared_rooms(hub: Hub, settings: RoomSettings) -> ConferenceRooms:
    """The service's rooms: shared by the processes where games are sharded by the hash (the
    workers of ``--workers``, nodes over NATS with ``--nodes``), else this process's own."""
    if not isinstance(hub, ShardedHub) or not isinstance(hub.ownership, HashOwnership):
        return ConferenceRooms(settings)
    sharded = hub

    def relay() -> VoiceRelay | None:
        return sharded.voice_relay

    rooms = ShardedConferenceRooms(
        settings,
        node=hub.node,
        ownership=hub.ownership,
        transport=hub.transport,
        relay=relay,
    )
    await rooms.start()
    return rooms
