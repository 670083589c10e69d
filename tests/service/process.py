"""`vollmond serve` as a real child process, for tests that kill it with SIGKILL and start it again.

The in-process server of support.py cannot be killed hard; a crash test needs the real thing:
the installed command, its own interpreter, its database, and a signal nobody can catch.
Players are stand-ins for browsers: cookie jars for the API, WebSockets that keep every frame.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC
from pathlib import Path
from typing import IO, Any, Protocol

import httpx
from websockets.asyncio.client import ClientConnection, connect

from tests.store.support import POSTGRES_URL
from vollmond.engine.core import Audience, AudienceKind, Viewer
from vollmond.service.web.auth import CSRF_COOKIE
from vollmond.store import open_store, read_events
from vollmond.store.gamelog import StoredCommand, StoredEvent, read_commands
from vollmond.store.leases import Lease, get_lease

from .support import CLIENT_LIMITS, CLIENT_TLS, PASSWORD, Loopback, free_port

#: The machine's NATS server, which the node tests share (each under a namespace of its own).
NATS_URL = os.environ.get("VOLLMOND_TEST_NATS_URL", "nats://127.0.0.1:4222")

SERVE = Path(sys.executable).parent / "vollmond"
START_TIMEOUT_S = 30.0


class Endpoint(Protocol):
    """Where a client reaches the server: its port, or one worker's own port."""

    @property
    def base_url(self) -> str: ...

    @property
    def ws_url(self) -> str: ...


def free_ports(count: int, kind: int = socket.SOCK_STREAM) -> int:
    """A base port with `count` free ports of socket type `kind` from it (the workers' own
    ports of `--worker-port-base`, their SIP ports of `--sip-port`)."""
    while True:
        with socket.socket(socket.AF_INET, kind) as probe:
            probe.bind(("127.0.0.1", 0))
            base: int = probe.getsockname()[1]
        if base + count > 65535:
            continue
        try:
            for port in range(base, base + count):
                with socket.socket(socket.AF_INET, kind) as sock:
                    sock.bind(("127.0.0.1", port))
        except OSError:
            continue
        return base


@dataclass(frozen=True)
class WorkerPort(Loopback):
    """One worker's own port (`vollmond serve --workers N --worker-port-base P`): read from
    its server each time, since a start that lost a port to another process is tried again on
    other ports."""

    server: ServerProcess = field(compare=False)
    index: int

    @property
    def port(self) -> int:
        assert self.server.worker_port_base is not None, "a server without workers' ports"
        return self.server.worker_port_base + self.index


PORT_ATTEMPTS = 3


class PortTakenError(Exception):
    """Another process bound a port (the web port, a worker's own) that was found free
    before the server bound it."""


def _lost_a_port(log: str, ports: Sequence[int]) -> bool:
    """Whether the server's log shows it exited because one of its ports was taken: the bind
    failed, and some other socket holds one of them now."""
    if "Address already in use" not in log:
        return False
    for port in ports:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                return True
    return False


@dataclass
class ServerProcess(Loopback):
    """One `vollmond serve` on a fixed port and data directory, started as often as wanted.

    `database_url`/`schema` select PostgreSQL (a fresh schema per test); without them the
    server uses SQLite in `data_dir`, as `vollmond serve` does by default.
    """

    data_dir: Path
    database_url: str | None = None
    schema: str | None = None
    extra_env: Mapping[str, str] = field(default_factory=dict)
    extra_args: Sequence[str] = ()
    start_timeout_s: float = START_TIMEOUT_S
    port: int = field(default_factory=free_port)
    #: SIP/UDP port of the telephone channel; 0 (the default here): no telephone.
    sip_port: int = 0
    #: The operator's settings file (`--config`), if any.
    config: Path | None = None
    #: With `--workers N`: that many workers, each also alone on a port of its own from
    #: `worker_port_base` (`--worker-port-base`; found free, again at a retried start).
    worker_ports: int = 0
    worker_port_base: int | None = None
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0
    _log: IO[bytes] | None = None

    @property
    def store_url(self) -> str:
        return self.database_url or f"sqlite+aiosqlite:///{self.data_dir / 'vollmond.sqlite3'}"

    async def start(self, *, ready: Sequence[Endpoint] = ()) -> float:
        """Start the server and wait until /healthz answers (also on `ready`: each worker's own
        port); returns that moment (time.time).

        `free_port` only found the web port free a moment ago: another test's process can take
        it before this server binds it. Then this server exits, and that other server answers
        /healthz — a suite run took a dead node for a running one and waited a minute for its
        SIP. So only this server's own log saying it is ready counts, and a start that lost its
        web port is tried again on another."""
        for attempt in range(1, PORT_ATTEMPTS + 1):
            try:
                return await self._start_once(ready)
            except PortTakenError:
                if attempt == PORT_ATTEMPTS:
                    raise
                self.kill()
                self.port = free_port()
                if self.worker_ports:
                    self.worker_port_base = free_ports(self.worker_ports)
        raise AssertionError("unreachable")

    def _own_ports(self) -> list[int]:
        base = self.worker_port_base
        return [self.port, *(() if base is None else range(base, base + self.worker_ports))]

    async def _start_once(self, ready: Sequence[Endpoint]) -> float:
        assert self.process is None, "already running"
        env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
        env.update(self.extra_env)
        if self.database_url is not None:
            env["DATABASE_URL"] = self.database_url
        if self.schema is not None:
            env["VOLLMOND_DATABASE_SCHEMA"] = self.schema
        self.starts += 1
        self._log = (self.data_dir.parent / f"serve-{self.starts}.log").open("wb")
        args = [str(SERVE), "serve", "--port", str(self.port), "--data-dir", str(self.data_dir)]
        args += ["--sip-port", str(self.sip_port)]
        if self.config is not None:
            args += ["--config", str(self.config)]
        if self.worker_ports:
            if self.worker_port_base is None:
                self.worker_port_base = free_ports(self.worker_ports)
            args += ["--workers", str(self.worker_ports)]
            args += ["--worker-port-base", str(self.worker_port_base)]
        elif "--workers" not in self.extra_args:
            args += ["--workers", "1"]  # one process unless the test is about workers
        args += list(self.extra_args)
        self.process = subprocess.Popen(args, env=env, stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + self.start_timeout_s
        waiting = [self.base_url, *(e.base_url for e in ready)]
        own_log = self.data_dir.parent / f"serve-{self.starts}.log"
        said_ready = False
        async with httpx.AsyncClient(timeout=2) as http:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    if _lost_a_port(own_log.read_text(errors="replace"), self._own_ports()):
                        raise PortTakenError(self.port)
                    raise RuntimeError(f"vollmond serve exited early:\n{self.log_text()}")
                said_ready = said_ready or '"service_ready"' in own_log.read_text(errors="replace")
                if not said_ready:
                    await asyncio.sleep(0.05)  # whoever answers on the port, it is not this one
                    continue
                with contextlib.suppress(httpx.TransportError):
                    if (await http.get(waiting[0] + "/healthz")).status_code == 200:
                        waiting.pop(0)
                        if not waiting:
                            return time.time()
                        continue
                await asyncio.sleep(0.05)
        wait_s = self.start_timeout_s
        raise TimeoutError(f"vollmond serve not ready in {wait_s} s:\n{self.log_text()}")

    def kill(self, sig: signal.Signals = signal.SIGKILL) -> None:
        """Send `sig` to the server (SIGKILL: no shutdown code runs) and reap it."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(sig)
        self.process.wait(timeout=30)
        self.process = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def log_text(self) -> str:
        return "\n".join(
            p.read_text(errors="replace") for p in sorted(self.data_dir.parent.glob("serve-*.log"))
        )

    async def events(self, game_id: str) -> list[StoredEvent]:
        """The game's event log as stored."""
        async with open_store(self.store_url, schema=self.schema, migrate_to_head=False) as db:
            return await read_events(db, game_id)

    async def logged_at(self, game_id: str, code: str) -> float:
        """When the server logged the game's first event with this code (time.time scale):
        the moment its timer fired, free of the clients' own delays."""
        return logged_moment(next(e for e in await self.events(game_id) if e.kind == code))

    async def lease(self, game_id: str) -> Lease | None:
        """The game's lease as the store holds it (`--ownership leases`): the store is the
        deployment's, so any node's answer is the same, a dead node's too."""
        async with open_store(self.store_url, schema=self.schema, migrate_to_head=False) as db:
            return await get_lease(db, game_id)

    async def commands(self, game_id: str, after_seq: int = 0) -> list[StoredCommand]:
        """The game's command log after `after_seq`."""
        async with open_store(self.store_url, schema=self.schema, migrate_to_head=False) as db:
            return await read_commands(db, game_id, after_seq)

    async def visible_log(self, game_id: str, seat: int) -> list[tuple[int, str, Any]]:
        """The game's event log as the player in `seat` may see it: (seq, code, params)."""
        out: list[tuple[int, str, Any]] = []
        for event in await self.events(game_id):
            raw = event.audience
            assert isinstance(raw, dict)
            seats = raw.get("seats", [])
            assert isinstance(seats, list)
            audience = Audience(
                AudienceKind(str(raw["kind"])), frozenset(int(str(s)) for s in seats)
            )
            if audience.includes(Viewer.player(seat)):
                out.append((event.seq, event.kind, json.loads(json.dumps(event.payload))))
        return out


def logged_moment(event: StoredEvent) -> float:
    """When the server logged `event` (time.time scale; the store may hand back naive UTC)."""
    moment = event.created_at
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


class Browser:
    """A browser stand-in for the API: its own cookies, the CSRF cookie echoed on POSTs."""

    def __init__(self, server: Endpoint) -> None:
        self.server = server
        self.http = httpx.AsyncClient(
            base_url=server.base_url, timeout=30, verify=CLIENT_TLS, limits=CLIENT_LIMITS
        )
        self.account_id: int | None = None

    async def close(self) -> None:
        await self.http.aclose()

    async def post(self, path: str, body: Any = None) -> httpx.Response:
        if CSRF_COOKIE not in self.http.cookies:
            await self.http.get("/api/me")
        headers = {"X-CSRF-Token": self.http.cookies[CSRF_COOKIE]}
        return await self.http.post(path, json=body if body is not None else {}, headers=headers)

    async def signup(self, name: str) -> None:
        response = await self.post("/api/signup", {"name": name, "password": PASSWORD})
        assert response.status_code == 200, response.text
        self.account_id = int(response.json()["account"]["id"])

    async def found(self, **options: Any) -> tuple[str, str]:
        response = await self.post("/api/games", options)
        assert response.status_code == 201, response.text
        return str(response.json()["game"]), str(response.json()["token"])

    async def join(self, game_id: str) -> str:
        response = await self.post(f"/api/games/{game_id}/join")
        assert response.status_code == 201, response.text
        return str(response.json()["token"])


@dataclass
class Player:
    """One seat's WebSocket: every frame received, stamped with its arrival (time.time)."""

    game: str
    token: str
    seat: int = 0
    ws: ClientConnection | None = None
    frames: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    view: dict[str, Any] = field(default_factory=dict)

    @property
    def last_seq(self) -> int:
        return max((f["seq"] for _, f in self.frames if f["type"] == "event"), default=0)

    def events(self) -> list[tuple[int, str, Any]]:
        return [
            (int(f["seq"]), str(f["code"]), f["params"])
            for _, f in self.frames
            if f["type"] == "event"
        ]

    async def connect(self, server: Endpoint, *, route: bool = False) -> dict[str, Any]:
        """Open a socket, say hello with the last seq seen, and return the welcome frame.
        `route`: name the game in the URL, as the page does, so that it reaches the owner."""
        url = f"{server.ws_url}?game={self.game}" if route else server.ws_url
        self.ws = await connect(url, max_size=2**20, max_queue=None)
        await self.send(
            {"type": "hello", "game": self.game, "token": self.token, "after": self.last_seq}
        )
        frame = await self.expect("welcome")
        self.seat = int(frame["seat"])
        self.view = frame["view"]
        return frame

    async def send(self, message: dict[str, Any]) -> None:
        assert self.ws is not None
        await self.ws.send(json.dumps(message))

    async def recv(self, timeout: float) -> dict[str, Any]:
        assert self.ws is not None
        frame: dict[str, Any] = json.loads(await asyncio.wait_for(self.ws.recv(), timeout))
        self.frames.append((time.time(), frame))
        if frame["type"] in ("view", "welcome"):
            self.view = frame["view"]
        if frame["type"] == "error":
            raise AssertionError(f"seat {self.seat} got an error: {frame}")
        return frame

    async def expect(self, kind: str, timeout: float = 10.0, **match: Any) -> dict[str, Any]:
        """Read until a frame of this type (an event: with this code and params) arrives."""
        deadline = time.monotonic() + timeout
        while True:
            frame = await self.recv(max(0.01, deadline - time.monotonic()))
            if frame["type"] != kind:
                continue
            if kind == "event" and any(
                (frame["code"] if k == "code" else frame["params"].get(k)) != v
                for k, v in match.items()
            ):
                continue
            return frame

    async def drain(self, seconds: float = 0.3) -> None:
        """Read whatever arrives until the socket has been quiet for `seconds`."""
        with contextlib.suppress(TimeoutError):
            while True:
                await self.recv(seconds)

    async def command(self, **command: Any) -> dict[str, Any]:
        """Send a command for this seat and wait for its acknowledgement."""
        await self.send({"type": "command", "command": {"actor": self.seat, **command}, "id": 1})
        return await self.expect("ack")

    async def fresh_view(self) -> dict[str, Any]:
        """Ask for the current view (sync) and return it."""
        await self.drain(0.2)
        await self.send({"type": "sync"})
        view: dict[str, Any] = (await self.expect("view"))["view"]
        return view

    async def close(self) -> None:
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await self.ws.close()
            self.ws = None


def workers_server(
    data_dir: Path, workers: int, **options: Any
) -> tuple[ServerProcess, list[WorkerPort]]:
    """`vollmond serve --workers N` (not yet started) with worker i also alone on a port of
    its own, so a test decides which worker each client reaches; `options` as ServerProcess
    takes them (database, SIP port, config)."""
    server = ServerProcess(
        data_dir,
        worker_ports=workers,
        worker_port_base=free_ports(workers),
        start_timeout_s=120.0,
        **options,
    )
    # A client made before the start keeps these ports; one made after a retried start (which
    # picks new ones) reaches the new.
    return server, [WorkerPort(server, i) for i in range(workers)]


def json_lines(text: str) -> list[dict[str, Any]]:
    """The structured entries of a server's log (`log_text`): one JSON object a line; the
    other lines (uvicorn's own, a traceback's) are left out."""
    out: list[dict[str, Any]] = []
    for line in text.splitlines():
        if line.startswith("{"):
            with contextlib.suppress(ValueError):
                out.append(json.loads(line))
    return out


@contextlib.asynccontextmanager
async def serving(server: ServerProcess) -> AsyncIterator[ServerProcess]:
    """Start the server; whatever happens, leave no child process behind."""
    try:
        await server.start()
        yield server
    finally:
        server.kill()


async def assert_each_seat_saw_its_log(
    server: ServerProcess, players: Sequence[Player], where: Callable[[Player], str]
) -> None:
    """Every seat received the store's log as its audience may see it: each event once, in
    order (the events still on their way are awaited first). The log is judged as far as it
    was written when read, so a game that plays on meanwhile (its bots, its timers) can be
    judged too: what a seat got beyond that point is the next read's business. `where` names
    the seat's connection in a failure."""
    for player in players:
        expected = await server.visible_log(player.game, player.seat)
        upto = expected[-1][0]
        while player.last_seq < upto:
            await player.expect("event", timeout=30)
        seen = [event for event in player.events() if event[0] <= upto]
        assert seen == expected, f"seat {player.seat}{where(player)}"


async def wait_for_lease(
    server: ServerProcess, game_id: str, held: Callable[[Lease], bool], within_s: float
) -> Lease:
    """The game's lease once `held` says yes to it (looked at every 0.1 s); fails after
    `within_s` with the lease as it was."""
    deadline = time.monotonic() + within_s
    while True:
        lease = await server.lease(game_id)
        if lease is not None and held(lease):
            return lease
        assert time.monotonic() < deadline, f"{game_id}: lease {lease} after {within_s} s"
        await asyncio.sleep(0.1)


def nats_node(
    root: Path,
    node: str,
    nodes: Sequence[str],
    *,
    namespace: str,
    schema: str | None,
    nats_url: str = NATS_URL,
    database_url: str = POSTGRES_URL,
    extra_args: Sequence[str] = (),
    sip_port: int = 0,
    config: str | None = None,
) -> ServerProcess:
    """One node of a deployment over NATS (`--nats-url --node-id --nodes`), in `root/<node>`,
    on the shared PostgreSQL schema; `extra_args` such as the lease options, `config` the text
    of its operator's settings file (`--config`)."""
    home = root / node
    home.mkdir(parents=True)
    settings = None
    if config is not None:
        settings = home / "vollmond.toml"
        settings.write_text(config)
    return ServerProcess(
        home / "data",
        database_url=database_url,
        schema=schema,
        sip_port=sip_port,
        config=settings,
        extra_args=[
            *("--nats-url", nats_url, "--node-id", node, "--nodes", ",".join(nodes)),
            *("--nats-namespace", namespace),
            *extra_args,
        ],
        start_timeout_s=120.0,
    )


async def start_one_deployment(servers: Sequence[ServerProcess]) -> None:
    """Start the first node, give the others its keys (sessions, seat tokens, the vaults: one
    deployment's), then start them, side by side."""
    first, *others = servers
    await first.start()
    for other in others:
        other.data_dir.mkdir(mode=0o700, exist_ok=True)
        for key in first.data_dir.glob("*.key"):
            shutil.copy2(key, other.data_dir / key.name)
    await asyncio.gather(*(other.start() for other in others))
