"""Endpoints of the browser table (issue 12), kept apart from the lobby and client APIs.

- ``GET /api/errors?lang=de``: every error code with its sentence (`error_catalogue`), so the
  page renders any refusal in its own language.
- ``GET /api/front?lang=de``: what this is, the rules in 30 seconds per world (in each world's
  names) and where to call in (operator settings ``[web] phone_number``, ``sip_address``).
- ``POST /api/guest`` ``{name}``: play as a guest — an account with that name and a random
  password nobody knows, signed in at once; its seats are kept by seat tokens like any other.
- ``GET /api/my-games``: the signed-in account's seats in games not yet finished ("Meine
  Spiele" on any device; `account_seats`).
- ``POST /api/balance`` (the founding body): simulated win rates of that deck (`balance`),
  with the world's side names; a custom deck is checked as at founding first.
- ``POST /api/games/{id}/rematch`` ``{token?}``: after the end, a player of that game founds
  the same setup again (same rule set, options, privacy; the clicker hosts and sits), or joins
  the rematch another player founded first. ``GET`` of the same path tells the game's players
  whether there is one (the end screen's offer to join).
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable
from typing import Annotated

import msgspec
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from vollmond.engine.ruleset import OptionsDecodeError
from vollmond.i18n import text
from vollmond.service.balance import BalancePreview
from vollmond.service.deck_check import custom_deck_problem
from vollmond.service.hub import Hub, LobbyError
from vollmond.service.web.account_seats import account_seat, open_seats
from vollmond.service.web.auth import Sessions
from vollmond.service.web.client_api import Guard
from vollmond.service.web.edge import ApiError, read_json
from vollmond.service.web.error_catalogue import error_sentences
from vollmond.service.web.limits import DEFAULT_WORLD, LOGIN, WebLimits, client_address
from vollmond.service.web.schema import FoundingBody
from vollmond.settings import WebSettings
from vollmond.store.accounts import create_account, get_account
from vollmond.store.errors import InvalidAccountNameError, NameTakenError
from vollmond.worlds import LANGUAGES, get_world, world_ids

RefuseBanned = Callable[[Request, int, str, bool], Awaitable[None]]
"""Raises if the account is banned from a round of that world (private or not)."""


def _lang(value: str | None) -> str:
    return value if value in LANGUAGES else "de"


class TableApi:
    """The table's own routes; state lives in the hub and the store, never here."""

    def __init__(
        self,
        hub: Hub,
        sessions: Sessions,
        web: WebSettings,
        limits: WebLimits,
        refuse_banned: RefuseBanned,
    ) -> None:
        self.hub = hub
        self.sessions = sessions
        self.web = web
        self.refuse_banned = refuse_banned
        # Guests count against the same budget as sign-ups (policy: login attempts/minute).
        self.limits = limits
        # Finished game -> its rematch. In memory (docs/decisions.md "Rematch"): an offer is
        # for the minutes after the end; after a restart a new click founds a new one.
        self.rematches: dict[str, str] = {}
        self.balance = BalancePreview()
        self._rematch_lock = asyncio.Lock()

    def routes(self, guard: Guard) -> list[Route]:
        return [
            Route("/api/errors", guard(self.errors, csrf=False)),
            Route("/api/my-games", guard(self.my_games, csrf=False)),
            Route("/api/front", guard(self.front, csrf=False)),
            Route("/api/guest", guard(self.guest), methods=["POST"]),
            Route("/api/balance", guard(self.balance_preview), methods=["POST"]),
            Route("/api/games/{game_id}/rematch", guard(self.rematch), methods=["POST"]),
            Route(
                "/api/games/{game_id}/rematch",
                guard(self.rematch_offer, csrf=False),
                methods=["GET"],
            ),
        ]

    async def errors(self, request: Request) -> Response:
        lang = _lang(request.query_params.get("lang"))
        return JSONResponse(
            {"lang": lang, "errors": dict(error_sentences(lang))},
            headers={"Cache-Control": "max-age=3600"},
        )

    async def my_games(self, request: Request) -> Response:
        account_id = self.sessions.account_id(request)
        if account_id is None:
            raise ApiError(401, "login_required", "please sign in")
        seats = await open_seats(self.hub, account_id)
        return JSONResponse({"games": [seat.to_json() for seat in seats]})

    async def front(self, request: Request) -> Response:
        lang = _lang(request.query_params.get("lang"))
        default = get_world(DEFAULT_WORLD)
        call = []
        if self.web.phone_number:
            call.append(text("web.front.call_number", lang, default, number=self.web.phone_number))
        if self.web.sip_address:
            call.append(text("web.front.call_sip", lang, default, address=self.web.sip_address))
        return JSONResponse(
            {
                "lang": lang,
                "what": text("web.front.what", lang, default),
                "rules": {w: text("web.front.rules", lang, get_world(w)) for w in world_ids()},
                "call": call,
                "phone_number": self.web.phone_number or None,
                "sip_address": self.web.sip_address or None,
            }
        )

    async def guest(self, request: Request) -> Response:
        if not await self.limits.allow(LOGIN, "guest:" + client_address(request)):
            raise ApiError(429, "rate_limited", "too many attempts; wait a minute")
        body = await read_json(request, GuestBody, MAX_GUEST_BODY)
        try:
            account = await create_account(self.hub.sessions, body.name, secrets.token_urlsafe(24))
        except NameTakenError as exc:
            raise ApiError(409, "name_taken", "this name is taken") from exc
        except InvalidAccountNameError as exc:
            raise ApiError(400, "guest_name", str(exc)) from exc
        response = JSONResponse({"account": {"id": account.id, "name": account.name}})
        await self.sessions.login(request, response, account.id)
        return response

    async def balance_preview(self, request: Request) -> Response:
        """Win rates of a deck from bot games (signed in: the games cost the server time)."""
        if self.sessions.account_id(request) is None:
            raise ApiError(401, "login_required", "please sign in")
        body = await read_json(request, FoundingBody, MAX_BALANCE_BODY, invalid="invalid_options")
        size = body.players()
        if size is None:
            raise ApiError(400, "size_required", "size must be a whole number")
        try:
            rules = self.hub.ruleset(body.ruleset)
            options = rules.decode_options(body.engine_json(size))
        except LobbyError as exc:
            raise ApiError(400, exc.code, str(exc)) from exc
        except OptionsDecodeError as exc:
            raise ApiError(400, "invalid_options", str(exc)) from exc
        problem = custom_deck_problem(rules, options, size, self.hub.policy)
        if problem is not None:
            raise ApiError(400, problem, "this custom deck does not make a fair game")
        report = await self.balance.preview(rules, options, size)
        names = get_world(options.world).names_in(_lang(request.query_params.get("lang")))
        sides = {"village": names.village, "evil": names.evil_group, "fox": names.roles["fox"]}
        return JSONResponse(
            {**report.to_json(), "sides": {s: sides.get(s, s) for s in report.win_rates}}
        )

    async def _player_of(self, request: Request, game_id: str, token: str | None) -> int:
        """The signed-in account that played `game_id` (by its seat token or its account)."""
        account_id = self.sessions.account_id(request)
        if account_id is None:
            raise ApiError(401, "login_required", "please sign in")
        if token is not None:
            seat = await self.hub.seat_for(game_id, token)
            if seat is not None and seat.house is not None and seat.account_id == account_id:
                return account_id
        if await account_seat(self.hub, game_id, account_id) is None:
            raise ApiError(403, "rematch_not_player", "only the game's players start its rematch")
        return account_id

    async def rematch_offer(self, request: Request) -> Response:
        game_id = request.path_params["game_id"]
        await self._player_of(request, game_id, request.query_params.get("token"))
        return JSONResponse({"game": self.rematches.get(game_id)})

    async def rematch(self, request: Request) -> Response:
        game_id = request.path_params["game_id"]
        body = await read_json(request, RematchBody, MAX_GUEST_BODY)
        account_id = await self._player_of(request, game_id, body.token)
        actor = await self.hub.readable(game_id)
        if actor is None or not actor.is_over:
            raise ApiError(409, "not_over", "a rematch is founded after the end")
        table = await self.hub.table(game_id)
        # Founding the rematch and joining it touch the same areas as founding and joining
        # that round anew (its world, a private round): a ban there holds here too.
        await self.refuse_banned(request, account_id, table.game.world, table.game.private)
        name = (await get_account(self.hub.sessions, account_id)).name
        async with self._rematch_lock:  # two clicks at once found one game
            new_id = self.rematches.get(game_id)
            if new_id is None:
                founded = await self.hub.found(
                    actor.options,
                    ruleset=actor.ruleset.id,
                    private=table.game.private,
                    host_account_id=account_id,
                    host_name=name,
                )
                self.rematches[game_id] = founded.game.id
                return JSONResponse(
                    {"game": founded.game.id, "token": founded.token, "founded": True},
                    status_code=201,
                )
        seated = any(seat.account_id == account_id for seat in await self.hub.seats(new_id))
        if seated:  # already seated (a second click): the account takes the seat
            return JSONResponse({"game": new_id, "token": None, "founded": False})
        joined = await self.hub.join(new_id, account_id=account_id, name=name)
        return JSONResponse(
            {"game": new_id, "token": joined.token, "founded": False}, status_code=201
        )


class RematchBody(msgspec.Struct, forbid_unknown_fields=True):
    token: Annotated[str, msgspec.Meta(max_length=200)] | None = None


class GuestBody(msgspec.Struct, forbid_unknown_fields=True):
    name: Annotated[str, msgspec.Meta(max_length=200)]


MAX_GUEST_BODY = 1024
MAX_BALANCE_BODY = 16 * 1024
