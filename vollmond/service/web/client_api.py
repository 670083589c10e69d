"""Small JSON endpoints the browser client needs beyond the lobby API.

- ``GET /api/worlds/{world}/text?lang=de``: role explanations and room names of one world.
- ``GET /api/games/{id}/clock``: the running phase and the seconds left on its timer (from
  the actor's scheduled timers, in memory: no log read per call).
- ``POST /api/games/{id}/history`` ``{token?, lang}``: the events this seat may see (or the
  public ones, without a token), rendered in the language — the per-player replay.
- ``POST /api/games/{id}/operator`` ``{token?, reason?, player?}``: the web's operator button
  (O1): a persisted alarm in the moderation queue (`Enforcer.raise_alarm`), answered with the
  confirmation to show; past the misuse limit `429 operator_rate_limited` with the time a call
  is possible again. A seat (alive or dead) calls with its token; a signed-in spectator of a
  public round calls without one (then the caller is their account, no house).
- ``GET/POST /api/phone``: the signed-in account's phone ID; set its PIN; ask to link a number
  (answered with a one-time code to type when calling from that number — docs/security.md);
  link a phone-only identity by its phone ID and PIN (``link_id``, ``link_pin``: the PIN is
  checked like a caller's, with its lockout and the limit per source), which merges its
  ledgers into the account once (issue 10, docs/community.md).

Secrecy stays where it is: history goes through ``actor.history_for`` (event audiences),
never through a filter of its own; a private round's history and clock are shown only to its
players (`access.visible_table`, the same check as ``GET /api/games/{id}``).
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Protocol

import msgspec
import structlog
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from vollmond.engine.core import Viewer
from vollmond.i18n import render_event, role_explanation, ruleset_role_help
from vollmond.service.enforce import Enforcer, Person
from vollmond.service.hub import Hub
from vollmond.service.web.access import visible_table
from vollmond.service.web.auth import Sessions
from vollmond.service.web.edge import read_body
from vollmond.service.web.limits import WebLimits, client_address, preferred_language
from vollmond.service.web.schema import HistoryRequest, OperatorRequest
from vollmond.settings import IdentitySettings
from vollmond.store.errors import (
    InvalidPhoneNumberError,
    InvalidPinError,
    PhoneIdentityLinkedError,
)
from vollmond.store.phone import (
    PinOutcome,
    account_identity,
    check_pin,
    link_identity,
    normalize_number,
    set_account_pin,
)
from vollmond.store.phone_numbers import LinkRateLimitedError, pending_link, request_number_link
from vollmond.store.types import utcnow
from vollmond.worlds import LANGUAGES, ROLE_KEYS, UnknownWorldError, get_world
from vollmond.worlds.loader import STANDARD_RULESET

log = structlog.get_logger(__name__)

Handler = Callable[[Request], Awaitable[Response]]
MAX_BODY_BYTES = 4096
OPERATOR_REASONS = (1, 2, 3, 4)


class Guard(Protocol):
    def __call__(self, handler: Handler, *, csrf: bool = True) -> Handler: ...


class PhoneRequest(msgspec.Struct, forbid_unknown_fields=True):
    """Set the PIN and/or ask to link a number (the number is linked only once the caller
    typed the answer's code when calling from it)."""

    number: Annotated[str, msgspec.Meta(max_length=40)] | None = None
    pin: Annotated[str, msgspec.Meta(max_length=12)] | None = None
    # Link a phone-only identity to this account, proven by its PIN (issue 10): its karma,
    # credit, premium and grants are merged into the account once.
    link_id: Annotated[int, msgspec.Meta(ge=1, lt=10**12)] | None = None
    link_pin: Annotated[str, msgspec.Meta(max_length=12)] | None = None


def _error(status: int, code: str, message: str = "") -> JSONResponse:
    return JSONResponse({"error": code, "message": message or code}, status_code=status)


async def _body(request: Request, kind: type[Any]) -> Any:
    """The body as `kind`, or None if it does not decode; 413 once it passes the limit."""
    body = await read_body(request, MAX_BODY_BYTES)
    try:
        return msgspec.json.decode(body or b"{}", type=kind)
    except msgspec.DecodeError:
        return None


def _lang(value: str | None) -> str:
    return value if value in LANGUAGES else "de"


class ClientApi:
    """Routes for the browser client; guarded (CSRF, error mapping) by the main API's guard."""

    def __init__(
        self,
        hub: Hub,
        sessions: Sessions,
        limits: WebLimits,
        identity: IdentitySettings | None = None,
    ) -> None:
        self.hub = hub
        self.sessions = sessions
        self.limits = limits
        self.identity = identity or IdentitySettings()
        self.enforcer: Enforcer | None = None  # set in the lifespan (moderation, O1)

    def routes(self, guard: Guard) -> list[Route]:
        return [
            Route("/api/worlds/{world_id}/text", guard(self.world_text, csrf=False)),
            Route("/api/games/{game_id}/clock", guard(self.clock, csrf=False)),
            Route("/api/games/{game_id}/history", guard(self.history), methods=["POST"]),
            Route("/api/games/{game_id}/operator", guard(self.operator), methods=["POST"]),
            Route("/api/phone", guard(self.phone), methods=["GET", "POST"]),
        ]

    async def world_text(self, request: Request) -> Response:
        try:
            world = get_world(request.path_params["world_id"])
        except UnknownWorldError:
            return _error(404, "unknown_world")
        lang = _lang(request.query_params.get("lang"))
        names = world.names_in(lang)
        if world.ruleset == STANDARD_RULESET:
            roles = {key: names.roles.get(key, key) for key in ROLE_KEYS}
            help_ = {key: role_explanation(key, lang, world) for key in ROLE_KEYS}
        else:
            # A world of another rule set names that rule set's own roles; role help is in
            # its rule-set catalogue where the catalogue has it (`<ruleset>.role_help.<key>`).
            roles = dict(names.roles)
            help_ = {key: ruleset_role_help(world.ruleset, key, lang, world) for key in roles}
        return JSONResponse(
            {
                "world": world.id,
                "ruleset": world.ruleset,
                "lang": lang,
                "night_room": names.night_room,
                "evil_group": names.evil_group,
                "village": names.village,
                "roles": roles,
                "help": help_,
            }
        )

    async def clock(self, request: Request) -> Response:
        """Seconds left in the current phase, from the actor's scheduled phase timer."""
        game_id = request.path_params["game_id"]
        await visible_table(self.hub, game_id, self.sessions.account_id(request))
        actor = await self.hub.running_actor(game_id)
        if actor is None or actor.state is None:
            return _error(404, "not_running")
        rules, state = actor.ruleset, actor.state
        phase_seq = rules.phase_seq(state)
        due = actor.phase_deadline(phase_seq)
        remaining = None if due is None else max(0.0, due - actor.clock())
        return JSONResponse(
            {"phase": rules.phase_name(state), "phase_seq": phase_seq, "remaining": remaining}
        )

    async def _seat(self, game_id: str, token: str | None) -> int | None:
        if token is None:
            return None
        seat = await self.hub.seat_for(game_id, token)
        return None if seat is None else seat.house

    async def history(self, request: Request) -> Response:
        game_id = request.path_params["game_id"]
        body = await _body(request, HistoryRequest)
        if body is None:
            return _error(400, "invalid_request")
        await visible_table(self.hub, game_id, self.sessions.account_id(request), body.token)
        actor = await self.hub.readable(game_id)  # a finished game's history: from its log
        if actor is None or actor.state is None:
            return _error(404, "not_running")
        viewer = Viewer.spectator()
        if body.token is not None:
            house = await self._seat(game_id, body.token)
            if house is None:
                return _error(403, "bad_token")
            viewer = Viewer.player(house)
        lang = _lang(body.lang)
        world = get_world(actor.options.world)
        events = [
            {
                "seq": seq,
                "code": event.code,
                "params": dict(event.params),
                "text": render_event(event, lang, world, actor.ruleset.id),
            }
            for seq, event in await actor.history_for(viewer, 0)
        ]
        return JSONResponse({"game": game_id, "seat": viewer.seat, "events": events})

    async def operator(self, request: Request) -> Response:
        game_id = request.path_params["game_id"]
        body = await _body(request, OperatorRequest)
        if body is None:
            return _error(400, "invalid_request")
        account_id = self.sessions.account_id(request)
        house: int | None = None
        if body.token is not None:
            seat = await self.hub.seat_for(game_id, body.token)
            if seat is None or seat.house is None:
                return _error(403, "bad_token")
            house = seat.house
            account_id = seat.account_id if seat.account_id is not None else account_id
        elif account_id is None:
            return _error(403, "bad_token")
        else:
            # A signed-in spectator: only of a round they may see (a private one: its players).
            await visible_table(self.hub, game_id, account_id)
        if body.reason is not None and body.reason not in OPERATOR_REASONS:
            return _error(400, "bad_reason")
        actor = await self.hub.running_actor(game_id)
        if actor is None or actor.state is None:
            return _error(404, "not_running")
        if body.player is not None and not actor.state.has_seat(body.player):
            return _error(400, "bad_player")
        lang = preferred_language(request)
        if self.enforcer is None:
            return _error(503, "starting")
        result = await self.enforcer.raise_alarm(
            game_id,
            person=Person(account_id),
            house=house,
            reason=body.reason,
            accused=body.player,
            lang=lang,
        )
        if not result.ok:
            assert result.retry_at is not None
            return JSONResponse(
                {
                    "error": "operator_rate_limited",
                    "message": result.message,
                    "retry_at": result.retry_at.isoformat(),
                },
                status_code=429,
            )
        return JSONResponse(
            {"ok": True, "reason": body.reason, "player": body.player, "message": result.message}
        )

    async def phone(self, request: Request) -> Response:
        """The account's phone identity; POST sets the PIN and/or starts linking a number.

        The answer to a link request is the same whether or not the number belongs to someone
        else (the code simply never links a number someone else proved first by a stronger
        means), so this endpoint reveals no one's number."""
        account_id = self.sessions.account_id(request)
        if account_id is None:
            return _error(401, "login_required", "please sign in")
        if request.method == "GET":
            return JSONResponse(await self._phone_state(account_id))
        body = await _body(request, PhoneRequest)
        if (
            body is None
            or (body.number is None and body.pin is None and body.link_id is None)
            or (body.link_id is None) != (body.link_pin is None)
        ):
            return _error(400, "invalid_request")
        sessions = self.hub.sessions
        if body.link_id is not None and body.link_pin is not None:
            refused = await self._link(request, account_id, body.link_id, body.link_pin)
            if refused is not None:
                return refused
        try:
            normalized = None if body.number is None else normalize_number(body.number)
            if body.pin is not None:
                await set_account_pin(sessions, account_id, body.pin, settings=self.identity)
        except InvalidPinError:
            return _error(400, "invalid_pin", "a PIN is 4 to 12 digits")
        except InvalidPhoneNumberError:
            return _error(400, "invalid_phone", "not a phone number")
        state = await self._phone_state(account_id)
        if normalized is not None:
            try:
                claim = await request_number_link(
                    sessions, account_id, normalized, settings=self.identity
                )
            except LinkRateLimitedError as exc:
                retry = str(math.ceil(exc.retry_after_s))
                response = _error(429, "too_many_requests", "too many link requests")
                response.headers["Retry-After"] = retry
                return response
            state["pending"] = {
                "number": claim.number,
                "code": claim.code,
                "expires_in": round((claim.expires_at - utcnow()).total_seconds()),
            }
        return JSONResponse(state)

    async def _link(
        self, request: Request, account_id: int, identity_id: int, pin: str
    ) -> Response | None:
        """Link a phone identity the user proves by its PIN; None when linked (or already
        linked to this account), else the refusal. The PIN check is the telephone's own
        (lockout per identity, limit per source: here the client's address)."""
        checked = await check_pin(
            self.hub.sessions,
            identity_id,
            pin,
            source="web:" + client_address(request),
            settings=self.identity,
        )
        if checked.outcome is not PinOutcome.OK:
            locked = checked.outcome is not PinOutcome.WRONG
            response = _error(
                429 if locked else 403,
                "phone_locked" if locked else "wrong_phone_pin",
                "too many wrong PINs" if locked else "phone ID and PIN do not match",
            )
            if checked.until is not None:
                response.headers["Retry-After"] = str(
                    max(1, math.ceil((checked.until - utcnow()).total_seconds()))
                )
            return response
        try:
            await link_identity(self.hub.sessions, identity_id, account_id)
        except PhoneIdentityLinkedError:
            return _error(409, "phone_linked", "this phone ID belongs to another account")
        log.info("phone_identity_linked", account=account_id, phone=identity_id)
        return None

    async def _phone_state(self, account_id: int) -> dict[str, Any]:
        identity = await account_identity(self.hub.sessions, account_id)
        pending = await pending_link(self.hub.sessions, account_id)
        return {
            "phone_id": None if identity is None else identity.id,
            "has_pin": identity is not None and identity.has_pin,
            "number": None if identity is None else identity.number,
            "pending": None
            if pending is None
            else {
                "number": pending.number,
                "expires_in": round((pending.expires_at - utcnow()).total_seconds()),
            },
        }
