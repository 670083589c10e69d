"""The mailbox (X3) and friends (X4) in the browser: JSON endpoints for a signed-in account.

- ``GET /api/community``: what the page header shows (unread messages, open invitations and
  friend requests); asked every few seconds by an open page, which also counts as being online.
- ``GET /api/mail``; ``POST /api/mail {to, text, reply_to?}``; ``POST /api/mail/{id}/read``,
  ``/keep {kept}``, ``/delete``, ``/reply {text}``; ``GET /api/mail/{id}/audio``: a voice
  message as WAV for the page's ``<audio>`` (only to its recipient, with the session cookie).
- ``GET /api/friends``; ``POST /api/friends {who}`` asks (an account name or phone ID);
  ``POST /api/friends/{accept,remove,block,unblock} {who}`` (who: the list's key);
  ``POST /api/friends/invite {who, game}``; ``POST /api/invitations/{id}/accept`` seats (an
  invitation into a conference room is entered on the rooms page: ``POST /api/rooms/enter
  {invitation}``, and calling a friend into a room is ``POST /api/rooms/call``, rooms_api.py).

Bans: the mailbox's endpoints are refused to a person banned from the area ``mailbox``, the
friends' to one banned from ``friends`` (O5), with reason and expiry as everywhere.
"""

from __future__ import annotations

import io
import wave
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Protocol

import msgspec
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from vollmond.moderation import FRIENDS, MAILBOX, Area
from vollmond.service.community import (
    Community,
    CommunityError,
    Named,
    ToTable,
    attach,
    community_of,
    find_person,
    names,
)
from vollmond.service.community.mailbox import SAMPLE_RATE
from vollmond.service.hub import Hub, Owner
from vollmond.service.shards.community import shared_community
from vollmond.service.web.auth import Sessions
from vollmond.service.web.edge import NO_NUL, ApiError, Short, read_json
from vollmond.store import get_account
from vollmond.store.community import Mail

Handler = Callable[[Request], Awaitable[Response]]
RefuseArea = Callable[..., Awaitable[None]]
RefuseRound = Callable[[Request, int, str, bool], Awaitable[None]]
MAX_BODY_BYTES = 16384

#: A message's text at the edge (the operators' own limit is checked by the mailbox).
Text = Annotated[str, msgspec.Meta(max_length=10000, pattern=NO_NUL)]


class Guard(Protocol):
    def __call__(self, handler: Handler, *, csrf: bool = True) -> Handler: ...


class SendBody(msgspec.Struct, forbid_unknown_fields=True):
    to: Short
    text: Text
    reply_to: Annotated[int, msgspec.Meta(ge=1, le=2**53)] | None = None


class TextBody(msgspec.Struct, forbid_unknown_fields=True):
    text: Text


class KeepBody(msgspec.Struct, forbid_unknown_fields=True):
    kept: bool = True


class WhoBody(msgspec.Struct, forbid_unknown_fields=True):
    who: Short


class InviteBody(msgspec.Struct, forbid_unknown_fields=True):
    who: Short
    game: Short


def wav(pcm: bytes) -> bytes:
    """8 kHz 16-bit mono PCM as a WAV file (what every browser's <audio> plays)."""
    out = io.BytesIO()
    with wave.open(out, "wb") as file:
        file.setnchannels(1)
        file.setsampwidth(2)
        file.setframerate(SAMPLE_RATE)
        file.writeframes(pcm)
    return out.getvalue()


class CommunityApi:
    def __init__(
        self, hub: Hub, sessions: Sessions, refuse: RefuseArea, refuse_round: RefuseRound
    ) -> None:
        self.hub = hub
        self.sessions = sessions
        self.refuse = refuse
        self.refuse_round = refuse_round

    @property
    def community(self) -> Community:
        return community_of(self.hub)

    def routes(self, guard: Guard) -> list[Route]:
        g = guard
        return [
            Route("/api/community", g(self.summary, csrf=False)),
            Route("/api/mail", g(self.inbox, csrf=False), methods=["GET"]),
            Route("/api/mail", g(self.send), methods=["POST"]),
            Route("/api/mail/{mail_id:int}/audio", g(self.audio, csrf=False)),
            Route("/api/mail/{mail_id:int}/{action}", g(self.mail_action), methods=["POST"]),
            Route("/api/friends", g(self.friends, csrf=False), methods=["GET"]),
            Route("/api/friends", g(self.ask), methods=["POST"]),
            Route("/api/friends/{action}", g(self.friend_action), methods=["POST"]),
            Route(
                "/api/invitations/{invitation_id:int}/accept",
                g(self.accept_invitation),
                methods=["POST"],
            ),
        ]

    # -- who asks --------------------------------------------------------------------------
    async def _me(self, request: Request, area: Area) -> Owner:
        account_id = self.sessions.account_id(request)
        if account_id is None:
            raise ApiError(401, "login_required", "please sign in")
        await self.refuse(request, account_id, area)
        me = Owner.account(account_id)
        self.community.online.seen(me)
        return me

    @staticmethod
    def _error(exc: CommunityError) -> Response:
        return JSONResponse(
            {"error": exc.code, "message": exc.code, "params": exc.params}, status_code=exc.status
        )

    async def _run(self, step: Awaitable[Response]) -> Response:
        try:
            return await step
        except CommunityError as exc:
            return self._error(exc)

    # -- header ----------------------------------------------------------------------------
    async def summary(self, request: Request) -> Response:
        account_id = self.sessions.account_id(request)
        if account_id is None:
            return JSONResponse({"account": None})
        me = Owner.account(account_id)
        self.community.online.seen(me)
        invitations = self.community.friends.invitations(me)
        asking = [f for f in await self.community.friends.listing(me) if f.state.value == "asking"]
        return JSONResponse(
            {
                "unread": await self.community.mail.unread(me),
                "invitations": [i.to_json() for i in invitations],
                "requests": len(asking),
            }
        )

    # -- the mailbox -----------------------------------------------------------------------
    async def _mail_json(self, mails: list[Mail]) -> list[dict[str, Any]]:
        named = await names(self.hub.sessions, [m.sender for m in mails])
        return [
            {
                "id": m.id,
                "kind": m.kind.value,
                "from": named[m.sender].to_json(),
                "text": m.body,
                "duration_ms": m.duration_ms,
                "unread": m.unread,
                "kept": m.kept,
                "reply_to": m.reply_to,
                "at": m.created_at.isoformat(),
            }
            for m in mails
        ]

    async def inbox(self, request: Request) -> Response:
        me = await self._me(request, MAILBOX)
        mails = await self.community.mail.inbox(me)
        return JSONResponse({"messages": await self._mail_json(mails)})

    async def send(self, request: Request) -> Response:
        me = await self._me(request, MAILBOX)
        body = await read_json(request, SendBody, MAX_BODY_BYTES)

        async def step() -> Response:
            to = await find_person(self.hub.sessions, body.to)
            mail = await self.community.mail.send_text(me, to, body.text, reply_to=body.reply_to)
            return JSONResponse({"id": mail.id}, status_code=201)

        return await self._run(step())

    async def mail_action(self, request: Request) -> Response:
        me = await self._me(request, MAILBOX)
        mail_id = int(request.path_params["mail_id"])
        action = request.path_params["action"]
        box = self.community.mail

        async def step() -> Response:
            if action == "read":
                await box.read(me, mail_id)
            elif action == "keep":
                kept = (await read_json(request, KeepBody, MAX_BODY_BYTES)).kept
                await box.keep(me, mail_id, kept)
            elif action == "delete":
                await box.delete(me, mail_id)
            elif action == "reply":
                text = (await read_json(request, TextBody, MAX_BODY_BYTES)).text
                reply = await box.reply_text(me, mail_id, text)
                return JSONResponse({"id": reply.id}, status_code=201)
            else:
                raise ApiError(404, "no_such_action", "no such action")
            return JSONResponse({"ok": True})

        return await self._run(step())

    async def audio(self, request: Request) -> Response:
        me = await self._me(request, MAILBOX)
        try:
            pcm = await self.community.mail.audio(me, int(request.path_params["mail_id"]))
        except CommunityError as exc:
            return self._error(exc)
        return Response(
            wav(pcm), media_type="audio/wav", headers={"Cache-Control": "private, no-store"}
        )

    # -- friends ---------------------------------------------------------------------------
    async def friends(self, request: Request) -> Response:
        me = await self._me(request, FRIENDS)
        friends = self.community.friends
        blocked: list[Named] = await friends.blocked(me)
        return JSONResponse(
            {
                "friends": [f.to_json() for f in await friends.listing(me)],
                "blocked": [b.to_json() for b in blocked],
                "invitations": [i.to_json() for i in friends.invitations(me)],
            }
        )

    async def ask(self, request: Request) -> Response:
        me = await self._me(request, FRIENDS)
        body = await read_json(request, WhoBody, MAX_BODY_BYTES)

        async def step() -> Response:
            other = await find_person(self.hub.sessions, body.who)
            state = await self.community.friends.ask(me, other)
            return JSONResponse({"state": state.value}, status_code=201)

        return await self._run(step())

    async def friend_action(self, request: Request) -> Response:
        me = await self._me(request, FRIENDS)
        action = request.path_params["action"]
        friends = self.community.friends

        async def step() -> Response:
            if action == "invite":
                invite = await read_json(request, InviteBody, MAX_BODY_BYTES)
                other = await find_person(self.hub.sessions, invite.who)
                invitation = await friends.invite(me, other, invite.game)
                return JSONResponse({"invitation": invitation.id}, status_code=201)
            body = await read_json(request, WhoBody, MAX_BODY_BYTES)
            other = await find_person(self.hub.sessions, body.who)
            actions = {
                "accept": friends.accept,
                "remove": friends.remove,
                "block": friends.block,
                "unblock": friends.unblock,
            }
            act = actions.get(action)
            if act is None:
                raise ApiError(404, "no_such_action", "no such action")
            await act(me, other)
            return JSONResponse({"ok": True})

        return await self._run(step())

    async def accept_invitation(self, request: Request) -> Response:
        """Take the seat a friend invited me to (a private round needs no code then)."""
        me = await self._me(request, FRIENDS)
        assert me.account_id is not None
        friends = self.community.friends
        invitation_id = int(request.path_params["invitation_id"])
        try:
            invitation = friends.invitation(me, invitation_id)
        except CommunityError as exc:
            return self._error(exc)
        table = invitation.to
        if not isinstance(table, ToTable):  # a room is entered on the rooms page (rooms_api)
            return self._error(CommunityError("invitation_room"))
        await self.refuse_round(request, me.account_id, table.world, table.private)
        account = await get_account(self.hub.sessions, me.account_id)
        joined = await self.hub.join(table.game_id, account_id=me.account_id, name=account.name)
        friends.take(me, invitation_id)  # used only once it seated (a full table keeps it)
        return JSONResponse(
            {"game": table.game_id, "token": joined.token, "started": joined.started},
            status_code=201,
        )


async def mount_community(app: Any, hub: Hub, sessions: Sessions, settings: Any, api: Any) -> None:
    """The one hook of the app (`_mount_apis`): the hub's Community with the operator's
    `[mailbox]` and `[friends]` settings and its retention job, and the routes above (where
    processes share the service, its whereabouts and invitations shared by them)."""
    community = attach(
        await shared_community(
            hub, settings.data_dir, mailbox=settings.mailbox, friends=settings.friends
        )
    )
    community.start()
    routes = CommunityApi(hub, sessions, api._refuse_banned, api.refuse_banned_from_round)
    for route in routes.routes(api._guard):
        app.router.routes.insert(0, route)


async def community_stop(hub: Hub) -> None:
    await community_of(hub).close()
