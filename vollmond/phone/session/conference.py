"""Conference rooms by phone (X2): the rooms list from the announcer (key ``5``) and the line
in a room (docs/phone-keys.md "Conference rooms").

The list (:class:`RoomsMenu`): ``NN#`` enters the public room of world NN to talk, ``*NN#``
(``**NN#``, needed for 7 and 9 as in the games) to listen only; ``00#`` opens a private room
and reads its code; the 16-digit code and ``#`` enters a private room (``*`` code ``#`` to
listen); ``99#`` the next page, ``0#`` back.

In a room (:class:`RoomLine`): ``1`` mute or unmute yourself, ``2`` switch between talking
and only listening, ``#3`` where you are, ``#4`` who is here (with their numbers), ``#9``
leave, ``*9#`` or ``*9 R NN #`` call the moderators (NN: a number from ``#4``). What the
room hears of the caller is the voice of :attr:`RoomLine.seat`, mixed by
:mod:`vollmond.phone.service` — this module only speaks and keeps the membership.
"""

from __future__ import annotations

import weakref
from collections import deque
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from vollmond.moderation import SPECTATE
from vollmond.phone.session.codes import (
    PHONE_CODE_DIGITS,
    invitation_from_phone,
    phone_code,
    spoken_groups,
)
from vollmond.phone.session.keys import Entry, Info, Single, Star, Token
from vollmond.phone.session.prompts import Line, Priority
from vollmond.phone.session.recording import RecordingNoticeLine
from vollmond.service.conference import (
    ConferenceRoom,
    ConferenceRooms,
    EventKind,
    Member,
    RoomBannedError,
    RoomError,
    RoomEvent,
    RoomFullError,
    RoomKind,
    RoomNotFoundError,
    conference_rooms,
)
from vollmond.service.enforce import denial_text
from vollmond.voice.conference import ConferenceSeat
from vollmond.worlds import get_world, world_ids

if TYPE_CHECKING:
    from vollmond.phone.session.session import PhoneSession

KEY: Final = "5"
"""The announcer's key for conference rooms."""

PAGE: Final = 4
NEXT_PAGE: Final = "99"
OPEN_PRIVATE: Final = "00"
BACK: Final = "0"
MUTE: Final = "1"
LISTEN: Final = "2"


async def open_rooms(session: PhoneSession) -> None:
    """The announcer's ``5``: the rooms list (the one hook in ``menu.py``)."""
    menu = RoomsMenu(session)
    session.set_mode(menu)
    menu.show()


class RoomsMenu:
    """The list of rooms: a public one per world, private ones by code."""

    def __init__(self, session: PhoneSession) -> None:
        self.s = session
        self.page = 0

    @property
    def rooms(self) -> ConferenceRooms:
        return conference_rooms(self.s.hub)

    # -- Mode ------------------------------------------------------------------------------
    def immediate(self) -> frozenset[str]:
        return frozenset()

    def hash_immediate(self) -> bool:
        return False

    def help(self) -> list[str]:
        return [self._list_text(long=True)]

    def reminder(self) -> Sequence[Line] | None:
        return [self._list_text()]

    async def handle(self, token: Token) -> None:
        if isinstance(token, Info) and token.digit == "9":
            self.s.hang_up()
        elif isinstance(token, Entry):
            await self._entry(token.digits)
        elif isinstance(token, Star) and token.end == "#":
            await self._listen(token.body)
        else:
            self.s.refuse(self.s.t("phone.keyerror.not_here"))

    # -- the list --------------------------------------------------------------------------
    def show(self) -> None:
        self.page = 0
        self.s.say(self._list_text())

    def _list_text(self, *, long: bool = False) -> str:
        items = [self._item(n, w) for n, w in enumerate(world_ids(), start=1)]
        if long:
            return self.s.t("rooms.phone.list_long", list="; ".join(items))
        pages = max(1, -(-len(items) // PAGE))
        page = self.page % pages
        shown = "; ".join(items[page * PAGE : (page + 1) * PAGE])
        line = self.s.t("rooms.phone.list", list=shown)
        return f"{line} {self.s.t('phone.menu.more')}" if pages > 1 else line

    def _item(self, n: int, world: str) -> str:
        name = get_world(world).names_in(self.s.lang).world
        count = self.rooms.headcount(world)
        key = "item_empty" if count == 0 else "item_one" if count == 1 else "item_many"
        return self.s.t(f"rooms.phone.{key}", n=n, name=name, count=count)

    async def _entry(self, digits: str) -> None:
        if digits == BACK:
            self.s.set_mode(self.s.announcer)
            self.s.announcer.open_menu()
        elif digits == NEXT_PAGE:
            self.page += 1
            self.s.say(self._list_text())
        elif digits == OPEN_PRIVATE:
            await self._open_private()
        else:
            await self._choose(digits, listening=False)

    async def _listen(self, body: str) -> None:
        """``*NN#`` / ``**NN#`` / ``*code#``: listen only. ``*9#`` alone is the operator's
        key everywhere else, so it is not taken for room 9 here."""
        if body == "9":
            self.s.refuse(self.s.t("rooms.phone.star_nine"))
            return
        digits = body[1:] if body.startswith("*") else body
        await self._choose(digits, listening=True)

    async def _choose(self, digits: str, *, listening: bool) -> None:
        if not digits.isdigit():
            self.s.refuse(self.s.t("phone.keyerror.not_here"))
            return
        if len(digits) == PHONE_CODE_DIGITS:
            if not _may_try_code(self.s):
                self.s.say(self.s.t("phone.menu.code_limit"), remember=False)
                return
            code = invitation_from_phone(digits)
            try:
                room = await self.rooms.by_code(code or "")
            except RoomNotFoundError:
                self.s.refuse(self.s.t("rooms.error.unknown_code"))
                return
        elif len(digits) > 2:
            self.s.refuse(self.s.t("rooms.error.code_length", n=PHONE_CODE_DIGITS))
            return
        else:
            ids = world_ids()
            n = int(digits)
            if not 1 <= n <= len(ids):
                self.s.refuse(self.s.t("phone.menu.no_choice", n=n))
                return
            room = self.rooms.public(ids[n - 1])
        await enter_room(self.s, room, listening=listening)

    async def _open_private(self) -> None:
        try:
            room = await self.rooms.open_private(self.s.person)
        except RoomError as exc:
            self.s.refuse(opening_refused(self.s, exc))
            return
        assert room.code is not None
        code = phone_code(room.code)
        self.s.say(
            self.s.t(
                "rooms.phone.opened",
                code=", ".join(spoken_groups(code)),
                letters=" ".join(room.code),
            ),
            priority=Priority.NEWS,
        )
        if not await enter_room(self.s, room, listening=False):
            self.rooms.drop_if_empty(room)  # nobody came in: the room is gone again


def opening_refused(session: PhoneSession, exc: RoomError) -> str:
    """Why no private room was opened (the rooms list's ``00#``, a friend called with ``4``)."""
    if exc.code == "too_many_private":
        n = conference_rooms(session.hub).settings.private_per_person
        return session.t("rooms.error.too_many_private", n=n)
    return session.t("rooms.error.default")


async def enter_room(session: PhoneSession, room: ConferenceRoom, *, listening: bool) -> bool:
    """Enter `room` (after moderation's check); False with the reason said when refused."""
    rooms = conference_rooms(session.hub)
    line = RoomLine(session, room)
    try:
        member = await rooms.enter(
            room,
            session.name,
            session.person,
            "phone",
            enforcer=session.enforcer,
            listening=listening,
            listener=line,
        )
    except RoomBannedError as exc:
        session.say(denial_text(exc.denied, session.lang), priority=Priority.URGENT)
        return False
    except RoomFullError as exc:
        session.refuse(session.t("rooms.error.full", size=exc.size))
        return False
    line.attach(member)
    session.set_mode(line)
    return True


class RoomLine:
    """The caller in a room: keys for mute, listen-only, the list, leaving, the moderators;
    comings, goings and the browser's chat lines are spoken."""

    def __init__(self, session: PhoneSession, room: ConferenceRoom) -> None:
        self.s = session
        self.room = room
        self.member: Member | None = None
        world = get_world(room.world) if room.world is not None else get_world(world_ids()[0])
        self._notice = RecordingNoticeLine(
            session, room.notice_key, world, ended="rooms.recording.ended"
        )

    @property
    def seat(self) -> ConferenceSeat | None:
        """Where the phone service pushes and pulls this caller's audio."""
        if self.member is None:
            return None
        return ConferenceSeat(self.room.voice, self.member.slot)

    def attach(self, member: Member) -> None:
        self.member = member
        key = "entered_listening" if member.listening else "entered"
        others = [self._member_text(m) for m in self.room if m is not member]
        present = (
            self.s.t("rooms.phone.present", list="; ".join(others))
            if others
            else self.s.t("rooms.phone.alone")
        )
        self.s.say(
            self.s.t(f"rooms.phone.{key}", name=self.name, n=member.slot),
            present,
            self.s.t("rooms.phone.keys"),
        )
        self._notice.start()  # O4: a recording running now is announced on arrival
        if self.s.enforcer is not None and self.s.person:
            # Warnings and mutes from the moderators reach the caller here too (O5).
            self.s.enforcer.watch(self, self.room.notice_key, member.slot, self.s.person)

    def detach(self) -> None:
        """Leave the room (``#9``, or the call ended)."""
        self._notice.stop()
        if self.s.enforcer is not None:
            self.s.enforcer.unwatch(self)
        if self.member is not None:
            conference_rooms(self.s.hub).leave(self.room, self.member)
            self.member = None

    @property
    def name(self) -> str:
        if self.room.kind is RoomKind.PRIVATE or self.room.world is None:
            return self.s.t("rooms.phone.private_name")
        return get_world(self.room.world).names_in(self.s.lang).world

    # -- Mode ------------------------------------------------------------------------------
    def immediate(self) -> frozenset[str]:
        return frozenset((MUTE, LISTEN))

    def hash_immediate(self) -> bool:
        return False

    def help(self) -> list[str]:
        return [self.s.t("rooms.phone.keys_long")]

    def reminder(self) -> Sequence[Line] | None:
        return None  # people talk here: no reminders in the middle of a conversation

    async def handle(self, token: Token) -> None:
        member = self.member
        if member is None:
            return
        if isinstance(token, Single) and token.key == MUTE:
            await self._mute(member)
        elif isinstance(token, Single) and token.key == LISTEN:
            await self._switch(member)
        elif isinstance(token, Info) and token.digit == "3":
            self.s.say(self._status(member))
        elif isinstance(token, Info) and token.digit == "4":
            self.s.say(self._who())
        elif isinstance(token, Info) and token.digit == "9":
            self.detach()
            self.s.set_mode(self.s.announcer)
            self.s.say(self.s.t("rooms.phone.left_room"), remember=False)
            self.s.announcer.open_menu()
        elif isinstance(token, Star) and token.end == "#" and token.body.startswith("9"):
            await self._operator(member, token.body[1:])
        else:
            self.s.refuse(self.s.t("rooms.phone.not_here"))

    # -- keys ------------------------------------------------------------------------------
    async def _mute(self, member: Member) -> None:
        if member.listening:
            self.s.refuse(self.s.t("rooms.phone.listening_no_mute"))
            return
        self.room.set_muted(member, not member.muted)
        self.s.say(self.s.t("rooms.phone.muted" if member.muted else "rooms.phone.unmuted"))

    async def _switch(self, member: Member) -> None:
        """Talk or listen only; listening is refused to a person banned from "nur Zuhören"
        (talking needs nothing more than being in the room)."""
        if not member.listening and self.s.enforcer is not None and self.s.person:
            denied = await self.s.enforcer.check(self.s.person, SPECTATE)
            if denied is not None:
                self.s.say(denial_text(denied, self.s.lang), priority=Priority.URGENT)
                return
        self.room.set_listening(member, not member.listening)
        self.s.say(self.s.t("rooms.phone.listening" if member.listening else "rooms.phone.talking"))

    def _status(self, member: Member) -> str:
        count = len(self.room.members)
        mode = (
            "mode_listening" if member.listening else "mode_muted" if member.muted else "mode_talk"
        )
        return self.s.t(
            "rooms.phone.status",
            name=self.name,
            count=count,
            n=member.slot,
            mode=self.s.t(f"rooms.phone.{mode}"),
        )

    def _who(self) -> str:
        return self.s.t("rooms.phone.present", list="; ".join(map(self._member_text, self.room)))

    def _member_text(self, member: Member) -> str:
        key = (
            "member_listening" if member.listening else "member_muted" if member.muted else "member"
        )
        return self.s.t(f"rooms.phone.{key}", n=member.slot, name=member.name)

    async def _operator(self, member: Member, rest: str) -> None:
        """``*9#`` / ``*9 R NN #`` in a room: the alarm names the room and, with NN, the
        member of that number; then the room is recorded for exactly its length (O2)."""
        reason: int | None = None
        accused: int | None = None
        if rest:
            if not rest.isdigit() or rest[0] not in "1234":
                self.s.say(self.s.t("phone.operator_bad_reason"), remember=False)
                return
            reason = int(rest[0])
            accused = int(rest[1:]) if rest[1:] else None
            if accused is not None and accused not in self.room.members:
                accused = None  # nobody of that number: the call still counts
        if self.s.enforcer is None:
            self.s.say(self.s.t("phone.operator_called"), remember=False)
            return
        rooms = conference_rooms(self.s.hub)
        message = await rooms.call_operator(
            self.room,
            member,
            enforcer=self.s.enforcer,
            reason=reason,
            accused=accused,
            lang=self.s.lang,
        )
        self.s.say(message, remember=False)

    # -- the moderators' notices (Enforcer.watch) -------------------------------------------
    @property
    def lang(self) -> str:
        return self.s.lang

    def moderation_notice(self, kind: str, message: str) -> None:
        """A warning or a mute, spoken at once (a mute also keeps the voice out: the phone
        service asks the enforcer for every frame)."""
        self.s.say(message, priority=Priority.URGENT, remember=False)

    # -- RoomListener ----------------------------------------------------------------------
    def room_event(self, event: RoomEvent) -> None:
        """Comings and goings and the browser's chat lines, spoken as news."""
        if event.kind is EventKind.MODE:
            return
        key = {
            EventKind.JOINED: "joined",
            EventKind.LEFT: "left",
            EventKind.CHAT: "chat",
        }[event.kind]
        self.s.say(
            self.s.t(f"rooms.phone.{key}", name=event.name, n=event.slot, text=event.text),
            priority=Priority.NEWS,
            remember=False,
        )


_CODE_TRIES: weakref.WeakKeyDictionary[PhoneSession, deque[float]] = weakref.WeakKeyDictionary()


def _may_try_code(session: PhoneSession) -> bool:
    """Room codes are tried no faster than private rounds' codes: at most the operators'
    `invitation_attempts_per_minute` per call (the same limit; kept per call, so going back
    to the announcer and in again does not reset it)."""
    tries = _CODE_TRIES.setdefault(session, deque())
    now = session.clock()
    while tries and now - tries[0] > 60:
        tries.popleft()
    if len(tries) >= session.hub.policy.invitation_attempts_per_minute:
        return False
    tries.append(now)
    return True
