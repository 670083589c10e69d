"""Conference rooms (X2): voice rooms outside the games, for callers and browsers alike.

Every world has one public room; anyone may open a private room, which is entered with its
code (the private rounds' invitation code: 10 symbols in the browser, 16 digits by phone).
A room holds at most ``[rooms] max_members`` people (talking and listening alike). Who may
enter is asked of moderation (O5): the area ``conference`` always, ``world:<id>`` for a
world's public room, and ``spectate`` ("nur Zuhören") for listen-only entry.

A :class:`ConferenceRoom` is the room's members, its chat (the browser's text, kept for
late-comers) and its voice (:class:`~vollmond.voice.conference.ConferenceVoice`). Members
are told of comings, goings and chat lines through the small :class:`RoomListener` protocol
(a phone line, a browser socket). Rooms live in the memory of the process that owns them,
like the calls in them: a private room is gone when its last member leaves (docs/decisions.md).
Where worker processes share the games they share the rooms too: the registry is then a
:class:`~vollmond.service.shards.conference_rooms.ShardedConferenceRooms`, and a room another
process owns is a mirror of it behind the same interface.

The registry is one per hub (:func:`conference_rooms`), so the telephone, the web API and
the recorder find the same rooms without a new argument through every layer.
"""

from __future__ import annotations

import enum
import secrets
import weakref
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Final, Protocol

from vollmond.i18n import text
from vollmond.moderation import CONFERENCE, SPECTATE, AlarmRateLimitedError, Area, Caller, Denied
from vollmond.service.enforce import Enforcer, Person, until_text
from vollmond.service.hub import Hub, new_invitation_code
from vollmond.settings.rooms import RoomSettings
from vollmond.voice.conference import ConferenceVoice
from vollmond.worlds import get_world, world_ids

NOTICE_PREFIX: Final = "conference:"
"""Conference rooms share the hub's recording notice board with the games, under this prefix
(game ids never contain a colon)."""


class RoomKind(enum.StrEnum):
    PUBLIC = "public"
    PRIVATE = "private"


class RoomError(Exception):
    """A refused room action; `code` names the catalogue line (``rooms.error.<code>``)."""

    code = "default"


class RoomFullError(RoomError):
    code = "full"

    def __init__(self, size: int) -> None:
        super().__init__(f"the room is full ({size} people)")
        self.size = size


class RoomNotFoundError(RoomError):
    """No such room: an unknown world, a code nobody opened, a room already closed."""

    code = "unknown"


class UnknownCodeError(RoomNotFoundError):
    """No private room is open with this code (never opened, or already closed)."""

    code = "unknown_code"


class RoomClosedError(RoomNotFoundError):
    """The room an invitation named is closed: everybody in it has left."""

    code = "closed"


class TooManyPrivateRoomsError(RoomError):
    code = "too_many_private"


class ChatRefusedError(RoomError):
    """A chat line that may not be said: empty, too long, or from a listener."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


class RoomBannedError(RoomError):
    """Moderation refuses the person this room (O5); `denied` has reason and expiry."""

    code = "banned"

    def __init__(self, denied: Denied) -> None:
        super().__init__(f"banned from {denied.area}")
        self.denied = denied


class EventKind(enum.StrEnum):
    JOINED = "joined"
    LEFT = "left"
    CHAT = "chat"
    MODE = "mode"  # someone muted, unmuted, or switched between talking and listening


@dataclass(frozen=True, slots=True)
class RoomEvent:
    """What members are told; `name` is who did it, `text` a chat line."""

    kind: EventKind
    slot: int
    name: str
    text: str = ""


class RoomListener(Protocol):
    """A member's connection (phone line, browser socket): must not block."""

    def room_event(self, event: RoomEvent) -> None: ...


@dataclass(eq=False)
class Member:
    """One person in a room: their slot is their number in the room's list (``*9 R NN #``)."""

    slot: int
    name: str
    person: Person
    channel: str
    listening: bool = False  # listen-only (spectator): never heard, never chats
    muted: bool = False  # muted themselves: not heard until they unmute
    listener: RoomListener | None = None

    @property
    def talking(self) -> bool:
        return not (self.listening or self.muted)

    def to_json(self) -> dict[str, object]:
        return {
            "slot": self.slot,
            "name": self.name,
            "channel": self.channel,
            "listening": self.listening,
            "muted": self.muted,
        }


@dataclass(frozen=True, slots=True)
class ChatLine:
    """One line of the room's chat; `seq` counts the room's lines (a page asks for the
    lines after the last it has)."""

    seq: int
    slot: int
    name: str
    text: str


@dataclass(eq=False)
class ConferenceRoom:
    """One room: members by slot, the kept chat, the voice."""

    id: str
    kind: RoomKind
    size: int
    world: str | None = None  # the world of a public room
    code: str | None = None  # the invitation code of a private room
    opener: Person | None = None
    members: dict[int, Member] = field(default_factory=dict)
    chat: deque[ChatLine] = field(default_factory=deque)
    said: int = 0  # chat lines so far (the last one's seq)
    version: int = 0  # events so far: where rooms are shared by workers, a newer state wins
    # Told of every event as well (the recorder takes the chat lines while it records).
    observers: set[Callable[[RoomEvent], None]] = field(default_factory=set)
    voice: ConferenceVoice = field(init=False)

    def __post_init__(self) -> None:
        self.voice = ConferenceVoice(self.size)

    @property
    def notice_key(self) -> str:
        """This room's key on the hub's recording notice board (O2, O4)."""
        return f"{NOTICE_PREFIX}{self.id}"

    @property
    def full(self) -> bool:
        return len(self.members) >= self.size

    def enter(
        self,
        name: str,
        person: Person,
        channel: str,
        *,
        listening: bool = False,
        listener: RoomListener | None = None,
    ) -> Member:
        """Take the lowest free slot; raises RoomFullError when every slot is taken."""
        if self.full:
            raise RoomFullError(self.size)
        slot = next(s for s in range(1, self.size + 1) if s not in self.members)
        member = Member(slot, name, person, channel, listening=listening, listener=listener)
        self.members[slot] = member
        self.voice.seat(slot, talking=member.talking)
        self._tell(RoomEvent(EventKind.JOINED, slot, name), but=member)
        return member

    def leave(self, member: Member) -> None:
        if self.members.get(member.slot) is not member:
            return
        del self.members[member.slot]
        self.voice.unseat(member.slot)
        self._tell(RoomEvent(EventKind.LEFT, member.slot, member.name))

    def set_muted(self, member: Member, muted: bool) -> None:
        member.muted = muted
        self._mode_changed(member)

    def set_listening(self, member: Member, listening: bool) -> None:
        member.listening = listening
        self._mode_changed(member)

    def _mode_changed(self, member: Member) -> None:
        if self.members.get(member.slot) is member:
            self.voice.seat(member.slot, talking=member.talking)
            self._tell(RoomEvent(EventKind.MODE, member.slot, member.name), but=member)

    def say(self, member: Member, text: str, max_chars: int, kept: int) -> ChatLine:
        """A chat line from `member` to everyone in the room (the browser's text chat)."""
        cleaned = " ".join(text.split())
        if member.listening:
            raise ChatRefusedError("listening")
        if not cleaned:
            raise ChatRefusedError("chat_empty")
        if len(cleaned) > max_chars:
            raise ChatRefusedError("chat_long")
        self.said += 1
        line = ChatLine(self.said, member.slot, member.name, cleaned)
        self.chat.append(line)
        while len(self.chat) > kept:
            self.chat.popleft()
        self._tell(RoomEvent(EventKind.CHAT, member.slot, member.name, cleaned))
        return line

    def _tell(self, event: RoomEvent, but: Member | None = None) -> None:
        self.version += 1
        for observer in list(self.observers):
            observer(event)
        for other in list(self.members.values()):
            if other is not but and other.listener is not None:
                other.listener.room_event(event)

    def __iter__(self) -> Iterator[Member]:
        return iter(sorted(self.members.values(), key=lambda m: m.slot))


class ConferenceRooms:
    """Every room of this node: the public room of each world (made when first entered) and
    the private rooms (dropped with their last member)."""

    def __init__(self, settings: RoomSettings | None = None) -> None:
        self.settings = settings or RoomSettings()
        self._public: dict[str, ConferenceRoom] = {}
        self._private: dict[str, ConferenceRoom] = {}  # by invitation code
        self._by_id: dict[str, ConferenceRoom] = {}

    def public(self, world: str) -> ConferenceRoom:
        """The public room of `world`; raises RoomNotFoundError for an unknown world."""
        if world not in world_ids():
            raise RoomNotFoundError(world)
        room = self._public.get(world)
        if room is None:
            room = ConferenceRoom(
                f"public-{world}", RoomKind.PUBLIC, self.settings.max_members, world=world
            )
            self._public[world] = room
            self._by_id[room.id] = room
        return room

    def headcount(self, world: str) -> int:
        """How many are in the public room of `world` (0 when nobody entered it yet)."""
        room = self._public.get(world)
        return len(room.members) if room is not None else 0

    async def open_private(self, opener: Person | None) -> ConferenceRoom:
        """A new private room with a fresh code; a signed-in person may have only
        `private_per_person` open at once (a guest's rooms count for nobody: they end with
        the call anyway)."""
        if opener and not await self._may_open(opener):
            raise TooManyPrivateRoomsError(str(self.settings.private_per_person))
        code = self._fresh_code()
        room = ConferenceRoom(
            self._fresh_id(),
            RoomKind.PRIVATE,
            self.settings.max_members,
            code=code,
            opener=opener,
        )
        self._private[code] = room
        self._by_id[room.id] = room
        return room

    async def _may_open(self, opener: Person) -> bool:
        """Whether `opener` may open one more private room (where processes share the
        rooms, counted for all of them: `service/shards/conference_rooms.py`)."""
        mine = [r for r in self._private.values() if r.opener == opener and r.members]
        return len(mine) < self.settings.private_per_person

    def _fresh_code(self) -> str:
        """A code no open room has."""
        code = new_invitation_code()
        while code in self._private:
            code = new_invitation_code()
        return code

    def _fresh_id(self) -> str:
        return f"private-{secrets.token_hex(8)}"

    async def by_code(self, code: str) -> ConferenceRoom:
        """The private room of `code` (case and spaces ignored); RoomNotFoundError else."""
        room = self._private.get(normal_code(code))
        if room is None:
            raise UnknownCodeError("code")
        return room

    def by_id(self, room_id: str) -> ConferenceRoom:
        room = self._by_id.get(room_id)
        if room is None:
            raise RoomNotFoundError(room_id)
        return room

    async def invited(self, room_id: str) -> ConferenceRoom:
        """The room a friend's invitation names (X4); RoomClosedError when it is gone."""
        room = self._by_id.get(room_id)
        if room is None:
            raise RoomClosedError(room_id)
        return room

    async def enter(
        self,
        room: ConferenceRoom,
        name: str,
        person: Person,
        channel: str,
        *,
        enforcer: Enforcer | None,
        listening: bool = False,
        listener: RoomListener | None = None,
    ) -> Member:
        """Enter `room` after moderation's check (O5: RoomBannedError with the ban)."""
        await self._admitted(room, person, listening=listening, enforcer=enforcer)
        return await self._seat(
            room, Member(0, name, person, channel, listening, listener=listener)
        )

    async def _seat(self, room: ConferenceRoom, who: Member) -> Member:
        """Seat `who` in `room` (where processes share rooms: at its owner)."""
        return room.enter(
            who.name, who.person, who.channel, listening=who.listening, listener=who.listener
        )

    @staticmethod
    async def _admitted(
        room: ConferenceRoom, person: Person, *, listening: bool, enforcer: Enforcer | None
    ) -> None:
        """Moderation's check of an entry (O5); raises RoomBannedError with the ban."""
        if enforcer is not None and person:
            denied = await enforcer.check(person, *entry_areas(room, listening=listening))
            if denied is not None:
                raise RoomBannedError(denied)

    def leave(self, room: ConferenceRoom, member: Member) -> None:
        room.leave(member)
        self.drop_if_empty(room)

    def drop_if_empty(self, room: ConferenceRoom) -> None:
        """A private room nobody is in is gone (its code finds nothing any more)."""
        if room.kind is RoomKind.PRIVATE and not room.members:
            assert room.code is not None
            self._private.pop(room.code, None)
            if self._by_id.pop(room.id, None) is not None:
                self._dropped(room)

    def _dropped(self, room: ConferenceRoom) -> None:
        """A private room opened here is gone (shared rooms: its opener's count is told)."""

    async def call_operator(
        self,
        room: ConferenceRoom,
        member: Member,
        *,
        enforcer: Enforcer,
        reason: int | None,
        accused: int | None,
        lang: str,
    ) -> str:
        """O1 from a room: the alarm names the room (no game), the caller (their number in
        the room when they have no identity) and the accused member's number; the answer is
        the caller's confirmation or, past the misuse limit, when they may call again. The
        recording that follows is the conference recorder's (O2)."""
        person = member.person
        try:
            await enforcer.moderation.raise_alarm(
                game_id=None,
                conference=room.id,
                round=0,
                phase="conference",
                caller=Caller(person.account_id, person.phone_identity_id, member.slot),
                reason=reason,
                accused_house=accused,
            )
        except AlarmRateLimitedError as exc:
            return _t(
                "moderation.enforce.alarm_limited", lang, until=until_text(exc.retry_at, lang)
            )
        if reason is not None and accused is not None:
            return _t("rooms.alarm.raised_about", lang, reason=reason, n=accused)
        return _t("moderation.enforce.alarm_raised", lang)

    def hosted_voice(self, key: str) -> ConferenceVoice | None:
        """The voice of a room run here by its key (``conference:<room>``), for the lines
        of other processes that the voice relay hosts in it (``VoiceRooms.conference``)."""
        room = self._by_id.get(key.removeprefix(NOTICE_PREFIX))
        return room.voice if room is not None and key.startswith(NOTICE_PREFIX) else None

    async def close(self) -> None:
        """The service stops (rooms shared by processes stop serving the others)."""

    def max_chars(self) -> int:
        return self.settings.chat_max_chars

    async def say(self, room: ConferenceRoom, member: Member, text: str) -> ChatLine:
        """A chat line in `room` (where rooms are shared by processes: said at its owner)."""
        return self.say_now(room, member, text)

    def say_now(self, room: ConferenceRoom, member: Member, text: str) -> ChatLine:
        return room.say(member, text, self.settings.chat_max_chars, self.settings.chat_kept)


def normal_code(code: str) -> str:
    """A room code as it is kept (typed with spaces or in lower case alike)."""
    return "".join(code.split()).upper()


def entry_areas(room: ConferenceRoom, *, listening: bool) -> tuple[Area, ...]:
    """The ban areas entering `room` asks for: conference; the world of a public room (a ban
    "nur Vampir" covers the Vampir room too); listen-only (a ban "nur Zuhören")."""
    areas = [CONFERENCE]
    if room.world is not None:
        areas.append(Area.in_world(room.world))
    if listening:
        areas.append(SPECTATE)
    return tuple(areas)


def _t(key: str, lang: str, **params: str | int) -> str:
    return text(key, lang, get_world(world_ids()[0]), **params)


_REGISTRIES: weakref.WeakKeyDictionary[Hub, ConferenceRooms] = weakref.WeakKeyDictionary()


def conference_rooms(hub: Hub) -> ConferenceRooms:
    """The rooms of `hub`'s node (made with default settings unless installed first)."""
    rooms = _REGISTRIES.get(hub)
    if rooms is None:
        rooms = _REGISTRIES[hub] = ConferenceRooms()
    return rooms


def install_conference_rooms(hub: Hub, rooms: ConferenceRooms) -> ConferenceRooms:
    """The service's rooms (the app's lifespan: the operator's ``[rooms]`` settings, shared
    by the worker processes where the games are)."""
    _REGISTRIES[hub] = rooms
    return rooms
