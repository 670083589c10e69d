"""A real service for the service tests: uvicorn in this process, real HTTP and WebSocket clients.

Nothing is mocked: the app, its store (SQLite file or a PostgreSQL schema), the game actors
and the sockets are the ones `vollmond serve` runs. Kept out of conftest so tests can import
the helpers and their types.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import ssl
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.routing import BaseRoute
from websockets.asyncio.client import ClientConnection, connect

from tests.store.templates import seed_sqlite
from vollmond.server import build_app
from vollmond.service.config import DATABASE_FILE, Settings
from vollmond.service.enforce import Enforcer
from vollmond.service.hub import Hub
from vollmond.service.policy import Policy
from vollmond.service.web.app import HubMaker, create_app
from vollmond.service.web.auth import CSRF_COOKIE

PASSWORD = "correct horse battery staple"
WS_MAX_SIZE = 8192  # what `vollmond serve` gives uvicorn
CLIENT_TLS = ssl.create_default_context()
"""One TLS context for every test client: httpx would build one per client, loading the CA
bundle each time (30 ms of CPU; thousands of clients in the suite). The tests speak plain HTTP."""
CLIENT_LIMITS = httpx.Limits(keepalive_expiry=2.0)
"""A client drops an idle connection before uvicorn does (after 5 s): a request sent on a
connection the server is closing that moment fails with a read error (seen on a loaded machine,
where a player's connection sat idle while the others joined)."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Loopback:
    """A server on 127.0.0.1 at `port`: its HTTP and WebSocket addresses. A subclass has the
    port as a field, or as a property (a worker's own port, read from its server)."""

    if TYPE_CHECKING:

        @property
        def port(self) -> int: ...

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"


@dataclass
class Service(Loopback):
    """One running service: its address, settings and (for setting up standing) its hub."""

    backend: str
    settings: Settings
    port: int
    hub: Hub
    app: Starlette | None = None  # for tests that reach app.state (e.g. the moderation core)
    #: The service's moderation enforcer; `enforcer.moderation` is its one Moderation.
    enforcer: Enforcer | None = None


ServiceFactory = Callable[[Policy], contextlib.AbstractAsyncContextManager["Service"]]


@contextlib.asynccontextmanager
async def running_service(
    backend: str,
    settings: Settings,
    *,
    extra_routes: Sequence[BaseRoute] = (),
    make_hub: HubMaker | None = None,
) -> AsyncIterator[Service]:
    """Start uvicorn on a free port; wait for /healthz; stop it cleanly afterwards.
    `extra_routes` go first (tests that need a handler which fails on purpose); `make_hub`:
    the web service alone around that hub (a node's), without the telephone."""
    if backend == "sqlite" and settings.database_url is None:
        await seed_sqlite(settings.data_dir / DATABASE_FILE)
    app = build_app(settings) if make_hub is None else create_app(settings, make_hub=make_hub)
    for route in extra_routes:
        app.router.routes.insert(0, route)
    # The socket is bound here and handed to uvicorn: a port picked free and bound later may
    # be taken in between by another test process (seen: "address already in use").
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port: int = listener.getsockname()[1]
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        ws_max_size=WS_MAX_SIZE,
        proxy_headers=False,  # as `vollmond serve`: the app decides whom to believe
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[listener]))
    try:
        deadline = time.monotonic() + 60  # a liveness bound (migrations on a loaded machine)
        while not server.started:
            if task.done():
                task.result()  # raises the start-up failure
                raise RuntimeError("uvicorn stopped before it started")
            if time.monotonic() > deadline:
                raise TimeoutError("the service did not start within 60 s")
            await asyncio.sleep(0.02)
        yield Service(
            backend,
            settings,
            port,
            cast(Hub, app.state.hub),
            app=app,
            enforcer=app.state.enforcer,
        )
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 30)
        listener.close()


class ApiClient:
    """A browser stand-in: keeps cookies and echoes the CSRF cookie on every POST."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self.http = httpx.AsyncClient(
            base_url=service.base_url, timeout=30, verify=CLIENT_TLS, limits=CLIENT_LIMITS
        )
        self.account_id: int | None = None
        self.name: str | None = None

    async def close(self) -> None:
        await self.http.aclose()

    async def csrf(self) -> str:
        if CSRF_COOKIE not in self.http.cookies:
            await self.http.get("/api/me")
        return self.http.cookies[CSRF_COOKIE]

    async def post(self, path: str, body: Any = None) -> httpx.Response:
        token = await self.csrf()
        return await self.http.post(
            path, json=body if body is not None else {}, headers={"X-CSRF-Token": token}
        )

    async def get(self, path: str, **params: str) -> httpx.Response:
        return await self.http.get(path, params=params)

    async def signup(self, name: str, password: str = PASSWORD) -> dict[str, Any]:
        response = await self.post("/api/signup", {"name": name, "password": password})
        assert response.status_code == 200, response.text
        account: dict[str, Any] = response.json()["account"]
        self.account_id = int(account["id"])
        self.name = name
        return account

    async def found(self, **options: Any) -> dict[str, Any]:
        response = await self.post("/api/games", options)
        assert response.status_code == 201, response.text
        founded: dict[str, Any] = response.json()
        return founded

    async def join(self, game_id: str) -> dict[str, Any]:
        response = await self.post(f"/api/games/{game_id}/join")
        assert response.status_code == 201, response.text
        joined: dict[str, Any] = response.json()
        return joined


@dataclass
class WsClient:
    """One WebSocket with every frame it ever received, in order."""

    ws: ClientConnection
    frames: list[dict[str, Any]] = field(default_factory=list)

    async def send(self, message: Any) -> None:
        await self.ws.send(message if isinstance(message, str | bytes) else json.dumps(message))

    async def recv(self, timeout: float = 10.0) -> dict[str, Any]:
        raw = await asyncio.wait_for(self.ws.recv(), timeout)
        frame: dict[str, Any] = json.loads(raw)
        self.frames.append(frame)
        return frame

    async def expect(self, kind: str, timeout: float = 10.0) -> dict[str, Any]:
        """The next frame of this type (frames in between are kept in `frames`)."""
        deadline = time.monotonic() + timeout
        while True:
            frame = await self.recv(max(0.01, deadline - time.monotonic()))
            if frame["type"] == kind:
                return frame

    async def quiet(self, seconds: float = 0.3) -> list[dict[str, Any]]:
        """Everything that arrives within `seconds` (for "nothing else came")."""
        out: list[dict[str, Any]] = []
        with contextlib.suppress(TimeoutError):
            while True:
                out.append(await self.recv(seconds))
        return out

    async def close(self) -> None:
        await self.ws.close()


async def open_ws(service: Service) -> WsClient:
    """A socket the caller closes (`WsClient.close`). Its reader never pauses (`max_queue`
    unbounded): a socket left unread while the game went on stopped reading at sixteen frames,
    never saw the server's close at shutdown, and the shutdown waited ten seconds for it."""
    return WsClient(await connect(service.ws_url, max_size=2**20, max_queue=None))


@contextlib.asynccontextmanager
async def ws_client(service: Service) -> AsyncIterator[WsClient]:
    client = await open_ws(service)
    try:
        yield client
    finally:
        await client.close()


async def hello(
    client: WsClient, game: str, token: str | None = None, **extra: Any
) -> dict[str, Any]:
    """Say hello and return the welcome (or the error) frame."""
    message: dict[str, Any] = {"type": "hello", "game": game, **extra}
    if token is not None:
        message["token"] = token
    await client.send(message)
    while True:
        frame = await client.recv()
        if frame["type"] in ("welcome", "error"):
            return frame


async def seated_table(
    make: Callable[[], ApiClient], players: int, prefix: str, **options: Any
) -> tuple[str, list[ApiClient], list[str]]:
    """A public game founded by the first of `players` new accounts and joined by the rest,
    so it starts when full; returns the game, the clients and their seat tokens in house order."""
    clients = [make() for _ in range(players)]
    for i, client in enumerate(clients):
        await client.signup(f"{prefix}{i + 1}")
    founded = await clients[0].found(size=players, **options)
    tokens = [str(founded["token"])]
    for client in clients[1:]:
        tokens.append(str((await client.join(founded["game"]))["token"]))
    return str(founded["game"]), clients, tokens
