"""Conference rooms in the browser (X2, X5): the page ``/rooms.html`` and its JSON API.

The browser sees who is in the room (callers and browsers alike), writes chat lines that
callers hear read out, reads everyone's lines, and talks and listens over WebRTC: its peer is a
line of the room's own mixer, like a call (docs/community.md "Conference rooms"). A signed-in
account enters; a guest signs in as a guest first (``POST /api/guest``). Every entry asks
moderation like the phone does (O5).

- ``GET /api/rooms?lang=de``: the public room of every world with how many are in it, and the
  page's words (``rooms.web.*``, so every word comes from the catalogues).
- ``POST /api/rooms/enter`` ``{room?: "public-werwolf", code?: "ABCD…", invitation?: 7,
  listening?}``: enter a world's room, a private room by its code, or the room a friend's
  invitation names (X4, no code needed); answers the member's ``token`` and the state.
- ``POST /api/rooms/private``: open a private room (and enter it); answers its code also in the
  16 digits a caller types.
- ``POST /api/rooms/call`` ``{who}``: call a friend (the friends list's key) into a private
  room: opened, entered, and the friend invited (``vollmond.service.community.room_call``);
  answers the state and ``invited`` (who). Refused with the friends' codes (``not_friends``,
  ``friend_offline``) before any room is opened.
- ``GET /api/rooms/member/{token}?after=N``: the room now (members, chat lines after N, the
  recording notice) — the page asks about once a second; a member not asking for
  ``STALE_S`` seconds is taken out of the room (the browser was closed).
- ``POST /api/rooms/member/{token}/chat`` ``{text}``, ``…/listen`` ``{listening}``,
  ``…/operator`` ``{reason?, accused?}`` (the web's ``*9#``), ``…/leave``.
- ``POST /api/rooms/member/{token}/voice`` ``{sdp}``: the page's WebRTC offer (its candidates
  inside, no trickling: the rooms page has no WebSocket); answers ``{sdp}``.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import msgspec
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from vollmond.i18n import text
from vollmond.i18n.render import load_catalogue
from vollmond.moderation import FRIENDS, SPECTATE
from vollmond.service.community import CommunityError, ToRoom, community_of, find_person, names
from vollmond.service.community.room_call import call_friend
from vollmond.service.conference import (
    ChatLine,
    ConferenceRoom,
    ConferenceRooms,
    Member,
    RoomBannedError,
    RoomError,
    RoomFullError,
    RoomNotFoundError,
    conference_rooms,
    install_conference_rooms,
)
from vollmond.service.conference_recorder import ConferenceRecorder
from vollmond.service.config import Settings
from vollmond.service.enforce import Enforcer, Person, denial_json, notice_text
from vollmond.service.hub import Hub
from vollmond.service.invitation_digits import phone_code
from vollmond.service.shards.conference_rooms import shared_rooms
from vollmond.service.web.auth import Sessions
from vollmond.service.web.client_api import Guard
from vollmond.service.web.edge import ApiError, Short, read_json
from vollmond.service.web.error_catalogue import error_text
from vollmond.service.web.limits import preferred_language
from vollmond.store.accounts import get_account
from vollmond.store.owners import Owner
from vollmond.voice.browser import BrowserVoice, LineId, VoiceError
from vollmond.voice.conference import ConferenceSeat
from vollmond.worlds import LANGUAGES, get_world, world_ids

if TYPE_CHECKING:
    from vollmond.voice.webrtc import BrowserPeer

#: A browser member who has not asked for the room this long has left it (page closed).
STALE_S: Final = 30.0
BODY_LIMIT: Final = 4096
WEB_PREFIX: Final = "rooms.web."


class EnterBody(msgspec.Struct, forbid_unknown_fields=True):
    room: str | None = None
    code: str | None = None
    invitation: int | None = None
    listening: bool = False


class CallBody(msgspec.Struct, forbid_unknown_fields=True):
    who: Short


class ChatBody(msgspec.Struct, forbid_unknown_fields=True):
    text: str


class ListenBody(msgspec.Struct, forbid_unknown_fields=True):
    listening: bool


class VoiceBody(msgspec.Struct, forbid_unknown_fields=True):
    sdp: str


class OperatorBody(msgspec.Struct, forbid_unknown_fields=True):
    reason: int | None = None
    accused: int | None = None


@dataclass(eq=False)
class WebMember:
    """A browser in a room: its member there and when it last asked (the page reads the
    room's state, so it needs no events of its own)."""

    room: ConferenceRoom
    member: Member
    account_id: int
    seen: float
    peer: BrowserPeer | None = None  # its WebRTC voice in the room, if turned on


def _lang(value: str | None) -> str:
    return value if value in LANGUAGES else "de"


def words(lang: str) -> dict[str, str]:
    """The page's words in `lang` (the catalogue's ``rooms.web`` table), as templates: the
    page fills their ``{placeholders}`` itself."""
    catalogue = load_catalogue(lang)
    return {k[len(WEB_PREFIX) :]: v for k, v in catalogue.items() if k.startswith(WEB_PREFIX)}


class RoomsApi:
    """The browser's side of the conference rooms; the rooms themselves are the hub's."""

    def __init__(
        self,
        hub: Hub,
        sessions: Sessions,
        enforcer: Enforcer | None,
        clock: Callable[[], float] = time.monotonic,
        voice: Callable[[], BrowserVoice | None] = lambda: None,
    ) -> None:
        """`voice` finds the service's browser voice (made after the rooms at start)."""
        self.hub = hub
        self.sessions = sessions
        self.enforcer = enforcer
        self.clock = clock
        self.voice = voice
        self.members: dict[str, WebMember] = {}
        self._closing: set[asyncio.Task[None]] = set()

    @property
    def rooms(self) -> ConferenceRooms:
        return conference_rooms(self.hub)

    def routes(self, guard: Guard) -> list[Route]:
        member = "/api/rooms/member/{token}"
        return [
            Route("/api/rooms", guard(self.list_rooms, csrf=False)),
            Route("/api/rooms/enter", guard(self.enter), methods=["POST"]),
            Route("/api/rooms/private", guard(self.open_private), methods=["POST"]),
            Route("/api/rooms/call", guard(self.call_friend), methods=["POST"]),
            Route(member, guard(self.state, csrf=False)),
            Route(f"{member}/chat", guard(self.chat), methods=["POST"]),
            Route(f"{member}/listen", guard(self.listen), methods=["POST"]),
            Route(f"{member}/operator", guard(self.operator), methods=["POST"]),
            Route(f"{member}/voice", guard(self.open_voice), methods=["POST"]),
            Route(f"{member}/leave", guard(self.leave), methods=["POST"]),
        ]

    # -- helpers ---------------------------------------------------------------------------
    def _sweep(self) -> None:
        """Take browsers that stopped asking out of their rooms."""
        now = self.clock()
        for token, web in list(self.members.items()):
            if now - web.seen > STALE_S:
                self._drop(token, web)

    def _drop(self, token: str, web: WebMember) -> None:
        self.members.pop(token, None)
        self.rooms.leave(web.room, web.member)
        self._hang_up(web)

    def _hang_up(self, web: WebMember) -> None:
        peer, web.peer = web.peer, None
        if peer is not None:
            task = asyncio.get_running_loop().create_task(peer.close())
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)

    def _account(self, request: Request) -> int:
        account_id = self.sessions.account_id(request)
        if account_id is None:
            lang = preferred_language(request)
            message = text("rooms.error.sign_in", lang, get_world(world_ids()[0]))
            raise ApiError(401, "login_required", message)
        return account_id

    def _member(self, request: Request) -> tuple[str, WebMember]:
        self._sweep()
        token = request.path_params["token"]
        web = self.members.get(token)
        if web is None or web.account_id != self.sessions.account_id(request):
            lang = preferred_language(request)
            message = text("rooms.error.not_in_room", lang, get_world(world_ids()[0]))
            raise ApiError(404, "not_in_room", message)
        web.seen = self.clock()
        return token, web

    def _refusal(self, request: Request, exc: RoomError, **params: int) -> Response:
        lang = preferred_language(request)
        if isinstance(exc, RoomBannedError):
            return JSONResponse(denial_json(exc.denied, lang), status_code=403)
        status = (
            409
            if isinstance(exc, RoomFullError)
            else 404
            if isinstance(exc, RoomNotFoundError)
            else 400
        )
        message = text(f"rooms.error.{exc.code}", lang, get_world(world_ids()[0]), **params)
        return JSONResponse({"error": exc.code, "message": message}, status_code=status)

    def _state(self, token: str, web: WebMember, after: int = 0) -> dict[str, object]:
        room = web.room
        notice = self.hub.notices.current(room.notice_key)
        return {
            "token": token,
            "room": {
                "id": room.id,
                "kind": room.kind.value,
                "world": room.world,
                "code": room.code,
                "digits": phone_code(room.code) if room.code is not None else None,
                "size": room.size,
            },
            "you": web.member.to_json(),
            "members": [m.to_json() for m in room],
            "chat": [_line(line) for line in room.chat if line.seq > after],
            "recording": notice.to_json() if notice is not None else None,
            "voice": self._voice_config(room),
        }

    def _voice_config(self, room: ConferenceRoom) -> dict[str, object] | None:
        voice = self.voice()
        return voice.client_config(f"room.{room.id}") if voice is not None else None

    async def _admit(
        self, request: Request, room: ConferenceRoom, *, listening: bool
    ) -> tuple[str, WebMember] | Response:
        """This browser into `room` (after moderation's check): its token and membership, or
        the refusal to answer."""
        account_id = self._account(request)
        account = await get_account(self.hub.sessions, account_id)
        try:
            member = await self.rooms.enter(
                room,
                account.name,
                Person(account_id),
                "web",
                enforcer=self.enforcer,
                listening=listening,
            )
        except RoomFullError as exc:
            return self._refusal(request, exc, size=exc.size)
        except RoomError as exc:
            return self._refusal(request, exc)
        token = secrets.token_urlsafe(16)
        web = WebMember(room, member, account_id, self.clock())
        self.members[token] = web
        return token, web

    async def _enter(self, request: Request, room: ConferenceRoom, *, listening: bool) -> Response:
        admitted = await self._admit(request, room, listening=listening)
        if isinstance(admitted, Response):
            return admitted
        return JSONResponse(self._state(*admitted))

    @staticmethod
    def _community_refusal(request: Request, exc: CommunityError) -> Response:
        """A friends' refusal, worded here: the rooms page shows the server's sentence."""
        message = error_text(exc.code, preferred_language(request))
        return JSONResponse({"error": exc.code, "message": message}, status_code=exc.status)

    async def _enter_invited(
        self, request: Request, invitation_id: int, listening: bool
    ) -> Response:
        """Into the room a friend's invitation names; the invitation is used once in."""
        me = Owner.account(self._account(request))
        friends = community_of(self.hub).friends
        try:
            invitation = friends.invitation(me, invitation_id)
        except CommunityError as exc:
            return self._community_refusal(request, exc)
        if not isinstance(invitation.to, ToRoom):  # an invitation to a table is taken there
            return self._community_refusal(request, CommunityError("invitation_not_found"))
        try:
            room = await self.rooms.invited(invitation.to.room_id)
        except RoomError as exc:
            friends.withdraw(invitation.to)
            return self._refusal(request, exc)
        admitted = await self._admit(request, room, listening=listening)
        if isinstance(admitted, Response):
            return admitted
        friends.take(me, invitation_id)
        return JSONResponse(self._state(*admitted))

    # -- routes ----------------------------------------------------------------------------
    async def list_rooms(self, request: Request) -> Response:
        self._sweep()
        lang = _lang(request.query_params.get("lang"))
        rooms = [
            {
                "id": f"public-{w}",
                "world": w,
                "name": get_world(w).names_in(lang).world,
                "count": self.rooms.headcount(w),
                "size": self.rooms.settings.max_members,
            }
            for w in world_ids()
        ]
        return JSONResponse({"lang": lang, "rooms": rooms, "words": words(lang)})

    async def enter(self, request: Request) -> Response:
        self._sweep()
        body = await read_json(request, EnterBody, BODY_LIMIT)
        if body.invitation is not None:
            return await self._enter_invited(request, body.invitation, body.listening)
        try:
            if body.code is not None:
                room = await self.rooms.by_code(body.code)
            elif body.room is not None and body.room.startswith("public-"):
                room = self.rooms.public(body.room.removeprefix("public-"))
            else:
                raise ApiError(400, "invalid_request", "room or code")
        except RoomError as exc:
            return self._refusal(request, exc)
        return await self._enter(request, room, listening=body.listening)

    async def open_private(self, request: Request) -> Response:
        self._sweep()
        account_id = self._account(request)
        try:
            room = await self.rooms.open_private(Person(account_id))
        except RoomError as exc:
            return self._refusal(request, exc, n=self.rooms.settings.private_per_person)
        response = await self._enter(request, room, listening=False)
        if response.status_code != 200:
            self.rooms.drop_if_empty(room)
        return response

    async def call_friend(self, request: Request) -> Response:
        """Call a friend into a private room of mine (X2, X4): the same steps as key 4 of the
        phone's friends list. Refused to a person banned from ``friends`` (O5)."""
        self._sweep()
        account_id = self._account(request)
        body = await read_json(request, CallBody, BODY_LIMIT)
        person = Person(account_id)
        if self.enforcer is not None:
            denied = await self.enforcer.check(person, FRIENDS)
            if denied is not None:
                return JSONResponse(
                    denial_json(denied, preferred_language(request)), status_code=403
                )
        community = community_of(self.hub)
        me = Owner.account(account_id)
        community.online.seen(me)
        admitted: list[tuple[str, WebMember] | Response] = []

        async def enter(room: ConferenceRoom) -> bool:
            admitted.append(await self._admit(request, room, listening=False))
            return not isinstance(admitted[-1], Response)

        try:
            friend = await find_person(self.hub.sessions, body.who)
            invitation = await call_friend(community.friends, self.rooms, me, friend, person, enter)
        except CommunityError as exc:
            if admitted and not isinstance(admitted[-1], Response):
                self._drop(*admitted[-1])  # in, but the invitation failed: not left alone there
            return self._community_refusal(request, exc)
        except RoomError as exc:
            return self._refusal(request, exc, n=self.rooms.settings.private_per_person)
        entered = admitted[-1]
        if invitation is None or isinstance(entered, Response):
            assert isinstance(entered, Response)
            return entered
        invited = (await names(self.hub.sessions, [invitation.invitee]))[invitation.invitee]
        return JSONResponse({**self._state(*entered), "invited": invited.to_json()})

    async def state(self, request: Request) -> Response:
        token, web = self._member(request)
        try:
            after = int(request.query_params.get("after", "0"))
        except ValueError:
            after = 0
        return JSONResponse(self._state(token, web, after))

    async def chat(self, request: Request) -> Response:
        token, web = self._member(request)
        body = await read_json(request, ChatBody, BODY_LIMIT)
        lang = preferred_language(request)
        if self.enforcer is not None:
            mute = await self.enforcer.mute_of(Person(web.account_id))
            if mute is not None:  # O5: a muted person's lines do not reach the room either
                raise ApiError(403, "muted", notice_text(mute, lang))
        try:
            await self.rooms.say(web.room, web.member, body.text)
        except RoomError as exc:
            message = text(
                f"rooms.error.{exc.code}",
                lang,
                get_world(world_ids()[0]),
                max=self.rooms.max_chars(),
            )
            return JSONResponse({"error": exc.code, "message": message}, status_code=400)
        return JSONResponse(self._state(token, web))

    async def listen(self, request: Request) -> Response:
        token, web = self._member(request)
        body = await read_json(request, ListenBody, BODY_LIMIT)
        if body.listening and self.enforcer is not None:
            denied = await self.enforcer.check(Person(web.account_id), SPECTATE)
            if denied is not None:
                return JSONResponse(
                    denial_json(denied, preferred_language(request)), status_code=403
                )
        web.room.set_listening(web.member, body.listening)
        return JSONResponse(self._state(token, web))

    async def operator(self, request: Request) -> Response:
        _, web = self._member(request)
        body = await read_json(request, OperatorBody, BODY_LIMIT)
        if self.enforcer is None:
            raise ApiError(503, "no_moderation", "moderation is not running")
        if body.reason is not None and body.reason not in range(1, 5):
            raise ApiError(400, "invalid_request", "reason is 1 to 4")
        accused = body.accused if body.accused in web.room.members else None
        message = await self.rooms.call_operator(
            web.room,
            web.member,
            enforcer=self.enforcer,
            reason=body.reason,
            accused=accused if body.reason is not None else None,
            lang=preferred_language(request),
        )
        return JSONResponse({"message": message})

    async def open_voice(self, request: Request) -> Response:
        """The page's WebRTC offer (its candidates inside): the answer, with all of the
        service's candidates. The peer is this member's line in the room's own mixer: it
        hears everyone who talks there and is heard while it talks (not muted, not only
        listening, not muted by the moderators)."""
        token, web = self._member(request)
        body = await read_json(request, VoiceBody, 64 * 1024)
        voice = self.voice()
        if voice is None:
            raise ApiError(503, "voice_disabled", "browser voice is not running")
        self._hang_up(web)  # a new offer replaces the old voice
        slot = web.member.slot
        line = LineId(web.room.notice_key, slot, slot, ConferenceSeat(web.room.voice, slot))
        person = Person(web.account_id)
        enforcer = self.enforcer

        def muted() -> bool:
            return enforcer is not None and enforcer.muted_now(person)

        try:
            web.peer, sdp = await voice.open(line, body.sdp, None, muted)
        except VoiceError as exc:
            raise ApiError(400, exc.code, str(exc)) from exc
        if self.members.get(token) is not web:  # left meanwhile
            self._hang_up(web)
            raise ApiError(404, "not_in_room", "left the room")
        return JSONResponse({"sdp": sdp})

    async def leave(self, request: Request) -> Response:
        token, web = self._member(request)
        self._drop(token, web)
        return JSONResponse({"left": True})


def _line(line: ChatLine) -> dict[str, object]:
    return {"seq": line.seq, "slot": line.slot, "name": line.name, "text": line.text}


async def start_rooms(
    app: Starlette,
    hub: Hub,
    sessions: Sessions,
    settings: Settings,
    enforcer: Enforcer,
    guard: Guard,
) -> ConferenceRecorder:
    """The service's conference rooms (the operator's ``[rooms]`` settings), their browser
    API in front of the static files, and the recorder that follows alarms from rooms (O2);
    the app's lifespan closes the recorder."""
    install_conference_rooms(hub, await shared_rooms(hub, settings.rooms))
    api = RoomsApi(hub, sessions, enforcer, voice=lambda: getattr(app.state, "voice", None))
    for route in api.routes(guard):
        app.router.routes.insert(0, route)
    app.state.rooms_api = api
    recorder = ConferenceRecorder(
        hub, enforcer.moderation, notice_wait_s=settings.moderation.recording_notice_wait_s
    )
    await recorder.start()
    return recorder
