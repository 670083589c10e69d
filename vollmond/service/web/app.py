"""The ASGI application: JSON API, WebSocket, health, metrics, and the browser client.

Around the routes sit the edge wrappers (outermost first): the catch-all that answers a JSON
error instead of a traceback, the client address (trusted proxies only), the URL check (no
control characters), the security headers and the session lookup (`middleware`, `auth`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import structlog
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket

from vollmond.engine.ruleset import (
    AnyRuleSet,
    CommandDecodeError,
    OptionsDecodeError,
    get_ruleset,
    ruleset_ids,
)
from vollmond.moderation import PRIVATE, WEB, Area, Moderation
from vollmond.service.conference import conference_rooms
from vollmond.service.conference_recorder import ConferenceRecorder
from vollmond.service.config import Settings
from vollmond.service.deck_check import custom_deck_problem
from vollmond.service.enforce import Enforcer, Person, denial_json
from vollmond.service.hub import Hub, LobbyError
from vollmond.service.lobby_sweeper import LobbySweeper
from vollmond.service.metrics import Metrics
from vollmond.service.recorder import TableRecorder
from vollmond.service.web.access import visible_table
from vollmond.service.web.auth import CSRF_COOKIE, SessionMiddleware, Sessions
from vollmond.service.web.client_api import ClientApi
from vollmond.service.web.community_api import community_stop, mount_community
from vollmond.service.web.connection import Connection
from vollmond.service.web.edge import ApiError, error_response, read_json
from vollmond.service.web.limits import (
    CODE,
    LOGIN,
    WebLimits,
    client_address,
    preferred_language,
    web_text,
)
from vollmond.service.web.middleware import ClientAddress, RejectControlCharacters, SecurityHeaders
from vollmond.service.web.moderation_api import ModerationApi
from vollmond.service.web.rooms_api import start_rooms
from vollmond.service.web.schema import Credentials, FoundingBody, JoinByCode, SeatToken
from vollmond.service.web.table_api import TableApi
from vollmond.store import (
    GameNotFoundError,
    InvalidAccountNameError,
    NameTakenError,
    StoreError,
    WeakPasswordError,
    create_account,
    get_account,
    karma_history,
    open_store,
    verify_password,
)
from vollmond.store.db import Sessions as StoreSessions
from vollmond.store.db import database_answers
from vollmond.store.hashing import invitation_key
from vollmond.voice.browser import BrowserVoice
from vollmond.voice.rooms import VoiceRooms
from vollmond.worlds import LANGUAGES, load_worlds

log = structlog.get_logger(__name__)
STATIC_DIR = Path(__file__).resolve().parent / "static"

Handler = Callable[[Request], Awaitable[Response]]


class BannedError(Exception):
    """A banned person's request: answered 403 with reason and expiry (O5)."""

    def __init__(self, body: dict[str, str | int | None]) -> None:
        super().__init__(body["message"])
        self.body = body


def _game_areas(world: str, private: bool) -> tuple[Area, ...]:
    """The areas founding or joining a round of `world` touches (docs/moderation.md)."""
    return (WEB, Area.in_world(world), *((PRIVATE,) if private else ()))


async def _no_channel(*_: Any) -> None:
    return None


@dataclass(frozen=True, slots=True)
class Channels:
    """The channels besides the web (the telephone), plugged in by `vollmond.server`, so the
    service never imports them. `start` runs after the hub has resumed its games (with the
    service's moderation enforcer and the voice rooms every channel mixes in) and returns
    a handle (None: no such channel); `stop` gets that handle back at shutdown. A handle with
    a `uas` is the SIP server whose counters `/metrics` shows."""

    start: Callable[[Hub, Settings, Enforcer, VoiceRooms], Awaitable[Any]] = _no_channel
    stop: Callable[[Any], Awaitable[None]] = _no_channel


WEB_ONLY = Channels()

KARMA_HISTORY_SHOWN = 50
"""How many of the newest karma changes a player's page lists."""


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


def _has_chat(rules: AnyRuleSet) -> bool:
    """Whether a rule set's players may type to each other (its codec knows `Say`): the page
    shows its chat only then."""
    try:
        rules.decode_command({"type": "Say", "actor": 1, "text": "?"}, players_only=True)
    except CommandDecodeError:
        return False
    return True


class Api:
    """The JSON endpoints; state lives in the hub and the store, never here."""

    def __init__(
        self, hub: Hub, sessions: Sessions, metrics: Metrics, settings: Settings, limits: WebLimits
    ) -> None:
        self.hub = hub
        self.sessions = sessions
        self.metrics = metrics
        self.max_body_bytes = settings.web.max_body_bytes
        self.limits = limits  # sign-ups, sign-ins and codes per address (one budget)
        self.enforcer: Enforcer | None = None  # set in the lifespan (moderation, O5)

    async def _read(self, request: Request, kind: type[Any]) -> Any:
        return await read_json(request, kind, self.max_body_bytes)

    def routes(self) -> list[Route]:
        r = self._guard
        return [
            Route("/api/me", r(self.me, csrf=False)),
            Route("/api/me/karma", r(self.my_karma, csrf=False)),
            Route("/api/worlds", r(self.worlds, csrf=False)),
            Route("/api/rulesets", r(self.rulesets, csrf=False)),
            Route("/api/signup", r(self.signup), methods=["POST"]),
            Route("/api/login", r(self.login), methods=["POST"]),
            Route("/api/logout", r(self.logout, ban_check=False), methods=["POST"]),
            Route("/api/games", r(self.list_games, csrf=False), methods=["GET"]),
            Route("/api/games", r(self.found_game), methods=["POST"]),
            Route("/api/games/{game_id}", r(self.game, csrf=False), methods=["GET"]),
            Route("/api/games/{game_id}/join", r(self.join), methods=["POST"]),
            Route("/api/games/{game_id}/start", r(self.start), methods=["POST"]),
            Route("/api/games/{game_id}/bots", r(self.bots), methods=["POST"]),
            Route("/api/games/{game_id}/leave", r(self.leave), methods=["POST"]),
            Route("/api/games/{game_id}/abort", r(self.abort), methods=["POST"]),
            Route("/api/join", r(self.join_by_code), methods=["POST"]),
        ]

    def _guard(self, handler: Handler, *, csrf: bool = True, ban_check: bool = True) -> Handler:
        async def guarded(request: Request) -> Response:
            if csrf and request.method == "POST" and not self.sessions.csrf_ok(request):
                return error_response(403, "csrf", "missing or wrong X-CSRF-Token header")
            try:
                if ban_check:
                    await self._refuse_banned(request, self.sessions.account_id(request))
                response = await handler(request)
            except BannedError as exc:
                response = JSONResponse(exc.body, status_code=403)
            except ApiError as exc:
                response = error_response(exc.status, exc.code, str(exc))
            except LobbyError as exc:
                response = error_response(409, exc.code, str(exc))
            except GameNotFoundError:
                response = error_response(404, "no_such_game")
            except StoreError as exc:
                response = error_response(400, type(exc).__name__, str(exc))
            self.sessions.ensure_csrf(response, request.cookies.get(CSRF_COOKIE), request)
            return response

        return guarded

    async def _refuse_banned(self, request: Request, account_id: int | None, *areas: Area) -> None:
        """O5: a signed-in account banned from the web (or from `areas`) is refused with the
        ban's reason and expiry in its language (every API action goes through here)."""
        if account_id is None or self.enforcer is None:
            return
        denied = await self.enforcer.check(Person(account_id), *(areas or (WEB,)))
        if denied is not None:
            raise BannedError(denial_json(denied, preferred_language(request)))

    async def refuse_banned_from_round(
        self, request: Request, account_id: int, world: str, private: bool
    ) -> None:
        """Founding or joining a round of `world` (private or not): refused where banned."""
        await self._refuse_banned(request, account_id, *_game_areas(world, private))

    async def _account_id(self, request: Request) -> int:
        account_id = self.sessions.account_id(request)
        if account_id is None:
            raise ApiError(401, "login_required", "please sign in")
        return account_id

    def _client(self, request: Request) -> str:
        return client_address(request)

    # -- accounts --------------------------------------------------------------------------
    async def me(self, request: Request) -> Response:
        account_id = self.sessions.account_id(request)
        if account_id is None:
            return JSONResponse({"account": None})
        account = await get_account(self.hub.sessions, account_id)
        standing = await self.hub.standing(account_id)
        return JSONResponse(
            {
                "account": {
                    "id": account.id,
                    "name": account.name,
                    "role": account.role.value,
                    "premium": standing.premium,
                    "credit": standing.credit,
                    "karma": standing.karma,
                    "karma_unlock_until": _iso(standing.karma_unlock_until),
                }
            }
        )

    async def my_karma(self, request: Request) -> Response:
        """The signed-in player's own karma: total, the running unlock and the newest
        changes with their reason codes (the page names them from its catalogue)."""
        account_id = await self._account_id(request)
        standing = await self.hub.standing(account_id)
        history = await karma_history(self.hub.sessions, account_id, limit=KARMA_HISTORY_SHOWN)
        return JSONResponse(
            {
                "karma": standing.karma,
                "unlock_until": _iso(standing.karma_unlock_until),
                "history": [
                    {
                        "amount": entry.amount,
                        "reason": entry.reason,
                        "game_id": entry.game_id,
                        "at": entry.created_at.isoformat(),
                    }
                    for entry in history
                ],
            }
        )

    async def worlds(self, request: Request) -> Response:
        """Every world of every rule set; each names its rule set (the founding form offers a
        rule set's own worlds, the game page themes any game by its world)."""
        out = []
        every = [w for rs in ruleset_ids() for w in load_worlds(rs).values()]
        for world in every:
            out.append(
                {
                    "id": world.id,
                    "ruleset": world.ruleset,
                    "colors": {
                        "primary": world.colors.primary,
                        "accent": world.colors.accent,
                        "background": world.colors.background,
                    },
                    "names": {
                        lang: {
                            "world": world.names_in(lang).world,
                            "place": world.names_in(lang).place,
                            "tagline": world.names_in(lang).tagline,
                            "roles": dict(world.names_in(lang).roles),
                            "decks": dict(world.names_in(lang).decks),
                        }
                        for lang in LANGUAGES
                    },
                }
            )
        return JSONResponse({"worlds": out})

    async def rulesets(self, request: Request) -> Response:
        """What the founding form offers per rule set: its table sizes and its founding
        options with their defaults, in the options' own JSON form (`encode_options`), so the
        page builds each rule set's form from data instead of knowing its options."""
        out = []
        for ruleset_id in ruleset_ids():
            rules = get_ruleset(ruleset_id)
            low = max(rules.min_players, self.hub.policy.min_players)
            high = min(rules.max_players, self.hub.policy.max_players)
            defaults = rules.encode_options(rules.decode_options({"players": max(low, 8)}))
            out.append(
                {
                    "id": rules.id,
                    "min_players": low,
                    "max_players": high,
                    "defaults": defaults,
                    "worlds": list(load_worlds(ruleset_id)),
                    "chat": _has_chat(rules),
                }
            )
        return JSONResponse({"rulesets": out})

    async def signup(self, request: Request) -> Response:
        if not await self.limits.allow(LOGIN, "signup:" + self._client(request)):
            raise ApiError(429, "rate_limited", "too many attempts; wait a minute")
        creds = await self._read(request, Credentials)
        try:
            account = await create_account(self.hub.sessions, creds.name, creds.password)
        except NameTakenError as exc:
            raise ApiError(409, "name_taken", "this name is taken") from exc
        except InvalidAccountNameError as exc:
            raise ApiError(400, "invalid_name", str(exc)) from exc
        except WeakPasswordError as exc:
            raise ApiError(400, "password_rule", str(exc)) from exc
        response = JSONResponse({"account": {"id": account.id, "name": account.name}})
        await self.sessions.login(request, response, account.id)
        return response

    async def login(self, request: Request) -> Response:
        if not await self.limits.allow(LOGIN, "login:" + self._client(request)):
            raise ApiError(429, "rate_limited", "too many attempts; wait a minute")
        creds = await self._read(request, Credentials)
        account = await verify_password(self.hub.sessions, creds.name, creds.password)
        if account is None:
            raise ApiError(401, "bad_credentials", "name or password is wrong")
        await self._refuse_banned(request, account.id)
        response = JSONResponse({"account": {"id": account.id, "name": account.name}})
        await self.sessions.login(request, response, account.id)
        return response

    async def logout(self, request: Request) -> Response:
        response = JSONResponse({"ok": True})
        await self.sessions.logout(request, response)
        return response

    # -- lobby -----------------------------------------------------------------------------
    async def list_games(self, request: Request) -> Response:
        world = request.query_params.get("world")
        tables = await self.hub.public_tables(world)
        return JSONResponse({"games": [t.to_json(include_names=False) for t in tables]})

    async def found_game(self, request: Request) -> Response:
        account_id = await self._account_id(request)
        account = await get_account(self.hub.sessions, account_id)
        body = await read_json(
            request, FoundingBody, self.max_body_bytes, invalid="invalid_options"
        )
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
        await self.refuse_banned_from_round(request, account_id, options.world, body.private)
        deck_problem = custom_deck_problem(rules, options, size, self.hub.policy)
        if deck_problem is not None:
            raise ApiError(400, deck_problem, "this custom deck does not make a fair game")
        founded = await self.hub.found(
            options,
            ruleset=rules.id,
            private=body.private,
            host_account_id=account_id,
            host_name=account.name if body.join else None,
        )
        return JSONResponse(
            {
                "game": founded.game.id,
                "invitation_code": founded.invitation_code,
                "token": founded.token,
            },
            status_code=201,
        )

    async def game(self, request: Request) -> Response:
        game_id = request.path_params["game_id"]
        table = await visible_table(self.hub, game_id, self.sessions.account_id(request))
        return JSONResponse({"game": table.to_json()})

    async def join(self, request: Request) -> Response:
        account_id = await self._account_id(request)
        game_id = request.path_params["game_id"]
        table = await self.hub.table(game_id)
        if table.game.private:
            raise ApiError(404, "no_such_game")
        await self.refuse_banned_from_round(request, account_id, table.game.world, False)
        return await self._join(game_id, account_id)

    async def _join(self, game_id: str, account_id: int) -> Response:
        account = await get_account(self.hub.sessions, account_id)
        joined = await self.hub.join(game_id, account_id=account_id, name=account.name)
        return JSONResponse(
            {"game": game_id, "token": joined.token, "started": joined.started}, status_code=201
        )

    async def join_by_code(self, request: Request) -> Response:
        if not await self.limits.allow(CODE, "code:" + self._client(request)):
            raise ApiError(429, "rate_limited", "too many attempts; wait a minute")
        account_id = await self._account_id(request)
        body = await self._read(request, JoinByCode)
        game = await self.hub.find_by_invitation(body.code)
        if game is None:
            raise ApiError(404, "bad_code", "no round with this invitation code")
        await self.refuse_banned_from_round(request, account_id, game.world, game.private)
        return await self._join(game.id, account_id)

    async def start(self, request: Request) -> Response:
        account_id = await self._account_id(request)
        await self.hub.start(request.path_params["game_id"], by_account_id=account_id)
        return JSONResponse({"ok": True})

    async def bots(self, request: Request) -> Response:
        """The host fills the free seats of a lobby with bots; the full table starts."""
        account_id = await self._account_id(request)
        added = await self.hub.fill_with_bots(
            request.path_params["game_id"], by_account_id=account_id
        )
        return JSONResponse({"ok": True, "bots": added})

    async def leave(self, request: Request) -> Response:
        await self._account_id(request)
        body = await self._read(request, SeatToken)
        await self.hub.leave_lobby(request.path_params["game_id"], body.token)
        return JSONResponse({"ok": True})

    async def abort(self, request: Request) -> Response:
        """The host calls off a round that has not started; a founding charge is refunded."""
        account_id = await self._account_id(request)
        game_id = request.path_params["game_id"]
        table = await self.hub.table(game_id)
        if table.game.host_account_id != account_id:
            raise ApiError(403, "only_host_aborts", "only the host can call off this round")
        await self.hub.abort(game_id)
        return JSONResponse({"ok": True})


def _mount_moderation(
    app: Starlette, hub: Hub, cookie_sessions: Sessions, settings: Settings, api: Api
) -> None:
    """The moderation console (issue 9): its JSON API under /api/mod and its live feed on
    /ws/mod, on the one `Moderation` of this service (`app.state.moderation`)."""
    moderation: Moderation = app.state.moderation  # built by _start_moderation
    console = ModerationApi(hub, cookie_sessions, moderation, settings.web.max_body_bytes)
    for route in console.routes(api._guard):
        app.router.routes.insert(0, route)
    app.router.routes.insert(0, WebSocketRoute("/ws/mod", console.socket))


async def _start_moderation(
    app: Starlette, hub: Hub, store_sessions: StoreSessions, settings: Settings
) -> Enforcer:
    """The one Moderation of this service (docs/moderation.md "Wiring"), its enforcement loop
    and the retention job; both loops end in `_stop_moderation`."""
    moderation = Moderation(store_sessions, settings.moderation, settings.data_dir)
    enforcer = Enforcer(moderation, hub)
    app.state.moderation = moderation
    app.state.enforcer = enforcer
    interval = settings.moderation.retention_interval_s
    app.state.moderation_tasks = [
        asyncio.create_task(moderation.run_retention(interval), name="moderation-retention"),
        asyncio.create_task(enforcer.run(), name="moderation-enforce"),
    ]
    await enforcer.ready()
    return enforcer


async def _stop_moderation(app: Starlette) -> None:
    tasks: list[asyncio.Task[None]] = getattr(app.state, "moderation_tasks", [])
    for task in tasks:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
    enforcer: Enforcer | None = getattr(app.state, "enforcer", None)
    if enforcer is not None:
        await enforcer.close()


async def _mount_apis(
    app: Starlette,
    hub: Hub,
    cookie_sessions: Sessions,
    metrics: Metrics,
    settings: Settings,
    limits: WebLimits,
) -> tuple[Api, ClientApi]:
    """The JSON API and the client API, in front of the static files; `/metrics` reads the
    hub's node figures from now on."""
    metrics.watch_node(hub.node_stats)
    api = Api(hub, cookie_sessions, metrics, settings, limits)
    for route in api.routes():
        app.router.routes.insert(0, route)
    client_api = ClientApi(hub, cookie_sessions, limits, settings.identity)
    for route in client_api.routes(api._guard):
        app.router.routes.insert(0, route)
    tables = TableApi(hub, cookie_sessions, settings.web, limits, api.refuse_banned_from_round)
    for route in tables.routes(api._guard):
        app.router.routes.insert(0, route)
    await mount_community(app, hub, cookie_sessions, settings, api)  # mailbox and friends (X3, X4)
    return api, client_api


@dataclass(frozen=True, slots=True)
class _Recorders:
    """The games' recorder and the conference rooms' (closed together)."""

    tables: TableRecorder
    rooms: ConferenceRecorder

    async def close(self) -> None:
        await self.tables.close()
        await self.rooms.close()
        await conference_rooms(self.rooms.hub).close()


async def start_recorder(
    app: Starlette, hub: Hub, settings: Settings, cookie_sessions: Sessions, api: Api
) -> _Recorders:
    """The live recording after alarms (O2-O4, vollmond/service/recorder.py), fed by the one
    Moderation object of the service (`app.state.moderation`, built by _start_moderation);
    and the conference rooms (X2: vollmond/service/web/rooms_api.py) with their recorder."""
    moderation: Moderation = app.state.moderation
    recorder = TableRecorder(
        hub, moderation, notice_wait_s=settings.moderation.recording_notice_wait_s
    )
    await recorder.start()
    app.state.recorder = recorder
    rooms = await start_rooms(app, hub, cookie_sessions, settings, app.state.enforcer, api._guard)
    return _Recorders(recorder, rooms)


async def _start_channels(
    app: Starlette,
    channels: Channels,
    hub: Hub,
    settings: Settings,
    enforcer: Enforcer,
    metrics: Metrics,
) -> tuple[VoiceRooms, Any]:
    """The voice rooms (one mixer per game for every channel's lines: telephone calls and
    browser peers alike, following the tables' recording notices), the browser's voice, and
    the channels besides the web (the telephone), whose SIP counters `/metrics` shows."""
    rooms = VoiceRooms(hub, hub.notices)
    rooms.relay = await hub.start_voice_relay(rooms)  # workers and nodes: see voice/relay.py
    rooms.followed = hub.followed_games  # a relayed browser peer's place: the mirror's state
    rooms.conference = conference_rooms(hub).hosted_voice  # other processes' room members
    app.state.voice = BrowserVoice(rooms, settings.voice)  # the sockets, tests, benchmark
    phone = await channels.start(hub, settings, enforcer, rooms)
    app.state.phone = phone  # None when settings.sip_port is 0 or there is no telephone
    metrics.watch_sip(phone.uas if phone is not None else None)
    return rooms, phone


async def _stop_channels(app: Starlette, channels: Channels, phone: Any, rooms: VoiceRooms) -> None:
    await app.state.voice.close()
    await channels.stop(phone)
    if rooms.relay is not None:
        await rooms.relay.close()
    rooms.close()
    await community_stop(app.state.hub)  # the mailbox's retention job


HubMaker = Callable[[StoreSessions, Settings, bytes], Awaitable[Hub]]


async def _share(hub: Hub, limits: WebLimits, metrics: Metrics) -> None:
    """`/metrics` watching this process's games, event loop and log writer; where the games
    are sharded over processes, one budget per limit for all of them, and `/metrics`
    answering for all the workers of the port (service/shards)."""
    metrics.watch_games(hub.running_games)
    metrics.loop_lag.start()
    hub.log_writer.on_waited = metrics.log_append_wait.observe
    limits.shared = await hub.share_limits(limits.table)
    metrics.watch_limits(limits.shared)
    metrics.group = await hub.gather_metrics(metrics.render)


async def _unshare(limits: WebLimits, metrics: Metrics) -> None:
    metrics.loop_lag.stop()
    await limits.close()
    if metrics.group is not None:
        await metrics.group.close()


def _healthz(state: dict[str, Any]) -> Handler:
    """`ok` once the games are resumed and while the database answers; 503 otherwise (a load
    balancer takes such a node out; every command would fail there)."""

    async def healthz(request: Request) -> Response:
        if not state.get("ready"):
            return PlainTextResponse("starting", status_code=503)
        hub: Hub = request.app.state.hub
        if not await database_answers(hub.sessions):
            return PlainTextResponse("database unreachable", status_code=503)
        return PlainTextResponse("ok")

    return healthz


"""Builds the service's hub from the store, the settings and the invitation key."""


async def local_hub(sessions: StoreSessions, settings: Settings, key: bytes) -> Hub:
    """The hub of a service that runs every game itself (one process: the default)."""
    return Hub(sessions, settings.policy, invitation_key=key, karma=settings.karma)


def create_app(
    settings: Settings, *, channels: Channels = WEB_ONLY, make_hub: HubMaker = local_hub
) -> Starlette:
    """The web application; the whole program (with the telephone) is `vollmond.server`.
    `make_hub`: a worker among several gives its sharded hub (vollmond/workers.py)."""
    metrics = Metrics()
    state: dict[str, Any] = {}

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with open_store(
            settings.database(), schema=settings.database_schema
        ) as store_sessions:
            hub = await make_hub(store_sessions, settings, invitation_key(secret))
            await _share(hub, limits, metrics)
            cookie_sessions.store = store_sessions
            app.state.hub = hub  # for the handlers below, in-process tests and tools
            api, client_api = await _mount_apis(
                app, hub, cookie_sessions, metrics, settings, limits
            )
            enforcer = await _start_moderation(app, hub, store_sessions, settings)
            api.enforcer = client_api.enforcer = enforcer
            _mount_moderation(app, hub, cookie_sessions, settings, api)
            await hub.boot()
            recorder = await start_recorder(app, hub, settings, cookie_sessions, api)
            sweeper = LobbySweeper.started(hub, settings.web.empty_lobby_grace_s)
            rooms, phone = await _start_channels(app, channels, hub, settings, enforcer, metrics)
            state["ready"] = True
            log.info("service_ready", port=settings.port)
            try:
                yield
            finally:
                state["ready"] = False
                await sweeper.stop()
                await _stop_channels(app, channels, phone, rooms)
                await recorder.close()
                await _stop_moderation(app)
                await _unshare(limits, metrics)
                await hub.close()

    settings.secure_data_dir()  # before the first file: the key, the database, the cache
    secret = settings.secret_key()
    cookie_sessions = Sessions(settings.web)
    limits = WebLimits(settings.web, settings.policy)

    async def metrics_endpoint(request: Request) -> Response:
        return Response(await metrics.scrape(), media_type="text/plain; version=0.0.4")

    async def websocket(ws: WebSocket) -> None:
        enforcer = getattr(ws.app.state, "enforcer", None)
        voice = getattr(ws.app.state, "voice", None)
        await Connection(ws, ws.app.state.hub, metrics, limits, voice, enforcer=enforcer).run()

    async def internal_error(conn: HTTPConnection, exc: Exception) -> Response:
        """The catch-all: whatever escaped the handlers is logged here and answered as a
        JSON error; the client never sees a traceback (ServerErrorMiddleware calls this)."""
        log.error("unhandled_request_error", path=conn.url.path, error=repr(exc))
        lang = preferred_language(conn)
        return error_response(500, "internal", web_text("internal", lang))

    routes: list[Route | WebSocketRoute | Mount] = [
        Route("/healthz", _healthz(state)),
        Route("/metrics", metrics_endpoint),
        WebSocketRoute("/ws", websocket),
    ]
    if STATIC_DIR.is_dir():
        routes.append(Mount("/", StaticFiles(directory=STATIC_DIR, html=True), name="static"))
    middleware = [
        Middleware(ClientAddress, trusted_proxies=settings.web.trusted_proxies),
        Middleware(SecurityHeaders, settings=settings.web),
        Middleware(RejectControlCharacters),
        Middleware(SessionMiddleware, sessions=cookie_sessions),
    ]
    app = Starlette(
        routes=routes,
        middleware=middleware,
        exception_handlers={Exception: internal_error},
        lifespan=lifespan,
    )
    app.state.metrics = metrics  # a worker adds what it alone knows (its hand-overs)
    return app
