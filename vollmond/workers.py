"""`vollmond serve --workers N`: the games and the conference rooms sharded over N worker
processes (docs/scaling.md); one per core by default.

The supervisor (this process) prepares what must happen once — the data directory, the
service key, the migrations — then binds N listening sockets to the one port with
SO_REUSEPORT (the kernel spreads new connections over them), starts the local bus
(`service/shards/localbus.py`) and one worker process per socket. Each worker is the whole web
service with a `ShardedHub`: it owns the games the ownership function gives it, follows the
others through mirrors, and any worker serves any client — but a game's WebSocket that names
its game in the URL is handed to the game's owner before it is answered
(`service/shards/socket_handoff.py`), so mirrors serve only the sockets that do not. If a
worker dies the supervisor stops them all and exits non-zero: crash-only, the service manager
restarts it and every running game resumes from its log (taking over a dead worker's games
alive is issue 15).

The telephone: worker i answers SIP on its own port, ``--sip-port`` + i (Kamailio's dispatcher
in front lists them all, deploy/kamailio/). A call stays on the worker it reached; when its
game is owned by another worker, its session follows the game through a mirror and its voice
joins the game's room on the owner through the voice relay (`vollmond/voice/relay.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import multiprocessing
import os
import shutil
import signal
import socket
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from multiprocessing.connection import wait
from multiprocessing.process import BaseProcess
from typing import Any

import structlog

from vollmond.service.config import Settings
from vollmond.service.hub import Hub
from vollmond.service.shards.localbus import Broker, LocalTransport
from vollmond.service.shards.ownership import HashOwnership, Ownership, worker_names
from vollmond.service.shards.sharded_hub import ShardedHub
from vollmond.service.shards.socket_handoff import SocketHandoff
from vollmond.service.shards.transport import Transport
from vollmond.service.web.app import HubMaker, create_app
from vollmond.store import open_store
from vollmond.store.db import Sessions

log = structlog.get_logger(__name__)

UVICORN_OPTIONS: dict[str, Any] = {
    "log_level": "warning",
    "ws_max_size": 8192,
    # The app believes X-Forwarded-For only from the operator's trusted proxies
    # (settings `[web] trusted_proxies`); uvicorn's own handling trusts any local peer.
    "proxy_headers": False,
    # Game messages are small; compressing each costs the server more than it saves.
    "ws_per_message_deflate": False,
    "loop": "uvloop",
    # No WebSocket keepalive ping from the transport: uvicorn pings every socket 20 s after it
    # opened, so sockets that opened together (a tournament, a restart's reconnects) are
    # pinged together — at 5,000 players one stall of the event loop of a second and more
    # every 20 s (py-spy: `send_keepalive_ping` alone on the loop for 1.4 s), the largest
    # stall left. A dead connection is found without it: the page pings every 3 s and is
    # timed by `ws_heartbeat_timeout_s`, and the kernel's TCP keepalive (`listening_socket`)
    # closes the dead connection of a client that never pings, at no cost to the loop.
    "ws_ping_interval": None,
}
STOP_WAIT_S = 30.0


def default_workers() -> int:
    """One worker per core: what `vollmond serve` runs without ``--workers`` (issue 16)."""
    return os.cpu_count() or 1


class WorkersError(ValueError):
    """A worker setup that cannot run (shown to the operator)."""


@dataclass(frozen=True, slots=True)
class WorkerSpec:
    """What a worker process is started with (pickled to it)."""

    settings: Settings
    node: str
    nodes: tuple[str, ...]
    bus_path: str


def sharded_hub_maker(spec: WorkerSpec) -> HubMaker:
    """The worker's hub: connected to the local bus, answering calls about its games."""
    # Without the bus (the supervisor died) a worker stops: no orphan keeps the port.
    return hub_maker(
        spec.node,
        spec.nodes,
        lambda: LocalTransport.connect(spec.bus_path, on_lost=stop_this_process),
        group=True,
    )


def hub_maker(
    node: str,
    nodes: tuple[str, ...],
    connect: Callable[[], Awaitable[Transport]],
    ownership: Callable[[Sessions], Ownership] | None = None,
    *,
    group: bool = False,
) -> HubMaker:
    """A sharded hub for `node` among `nodes`, on the transport `connect` opens; ownership is
    the rendezvous hash over `nodes` unless `ownership` makes another (the nodes' leases);
    `group`: `nodes` are the workers of one port (their `/metrics` answered together)."""

    async def make(sessions: Sessions, settings: Settings, key: bytes) -> Hub:
        transport = await connect()
        hub = ShardedHub(
            sessions,
            settings.policy,
            node=node,
            ownership=HashOwnership(nodes) if ownership is None else ownership(sessions),
            transport=transport,
            invitation_key=key,
            karma=settings.karma,
            group=nodes if group else (),
        )
        await hub.serve_calls()
        return hub

    return make


def stop_this_process() -> None:
    log.error("bus_lost_stopping")
    os.kill(os.getpid(), signal.SIGTERM)


# The kernel's TCP keepalive on every connection (Linux hands the listening socket's options
# to the connections it accepts): after this long without a packet it probes, and a peer that
# answers none of the probes is dropped — a client gone without a goodbye (a phone that lost
# its network, a crashed script) within 60 + 3 × 10 s, with no work on the event loop.
KEEPALIVE_IDLE_S = 60
KEEPALIVE_INTERVAL_S = 10
KEEPALIVE_PROBES = 3


def listening_socket(host: str, port: int, *, reuse_port: bool) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, KEEPALIVE_IDLE_S)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL, KEEPALIVE_INTERVAL_S)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT, KEEPALIVE_PROBES)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def serve_app(app: Any, settings: Settings) -> None:
    """Serve `app` on the settings' address in this process, on a socket of our own making
    (`listening_socket`: the kernel's keepalive), until a signal."""
    serve_on(app, [listening_socket(settings.host, settings.port, reuse_port=False)])


GC_YOUNG_THRESHOLD = 10_000
"""Allocations between two collections of the youngest generation (CPython's default: 700).

A fan-out allocates per socket (the messages, the views' dicts and lists) and most of it is
freed within the same loop turn; at the default threshold a collection found much of that
still alive and moved it to an older generation, whose collections then ran more often and
scanned the long-lived heap (thousands of sockets, the games' states): `perf` of the server at
2,000 players put the collector at 7–14 % of its samples (docs/decisions.md, "Fan-out")."""


def tune_gc() -> None:
    """Before serving: what exists now (modules, the app) is moved out of the collector's
    reach (`gc.freeze`: never freed, never scanned again), and the youngest generation is
    collected less often (`GC_YOUNG_THRESHOLD`). Cycles are still collected; only later."""
    gc.collect()
    gc.freeze()
    _, middle, oldest = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, middle, oldest)


def serve_on(app: Any, sockets: list[socket.socket], handoff: SocketHandoff | None = None) -> None:
    """Serve `app` with the service's uvicorn options on listening `sockets`, until a signal;
    with `handoff`, a game's WebSocket goes on to the worker that owns the game."""
    import uvicorn  # noqa: PLC0415 - only the processes that serve need it

    tune_gc()
    config = uvicorn.Config(app, **UVICORN_OPTIONS)
    if handoff is None:
        uvicorn.Server(config).run(sockets=sockets)
        return
    from vollmond.service.shards.uvicorn_handoff import HandoffServer  # noqa: PLC0415

    HandoffServer(config, handoff).run(sockets=sockets)


def run_worker(spec: WorkerSpec, sockets: list[socket.socket]) -> None:
    """A worker process: the web service with its sharded hub on the sockets it was given,
    and the telephone on its own SIP port (if any)."""
    from vollmond.server import TELEPHONE  # noqa: PLC0415
    from vollmond.service.logs import configure_logging  # noqa: PLC0415

    configure_logging()
    structlog.contextvars.bind_contextvars(node=spec.node)
    app = create_app(spec.settings, channels=TELEPHONE, make_hub=sharded_hub_maker(spec))
    handoff = SocketHandoff(spec.node, HashOwnership(spec.nodes), os.path.dirname(spec.bus_path))
    app.state.metrics.watch_handoff(handoff)
    serve_on(app, sockets, handoff)


def serve_workers(settings: Settings, count: int, *, worker_port_base: int | None = None) -> int:
    """Run `count` workers on the settings' port until a signal or a worker's end; returns the
    exit code. `worker_port_base`: worker i also listens alone on that port + i (tests and a
    front that pins clients)."""
    if count < 2:
        raise WorkersError("the worker processes are for two or more workers")
    if settings.sip_port and settings.sip_port + count - 1 > 65535:
        raise WorkersError("--sip-port + the number of workers goes beyond port 65535")
    settings.secure_data_dir()
    settings.secret_key()
    asyncio.run(_migrate(settings))  # once, before any worker opens the store
    nodes = tuple(worker_names(count))
    bus_dir = tempfile.mkdtemp(prefix="vollmond-bus-")  # mode 0700: only this user connects
    bus_path = os.path.join(bus_dir, "bus.sock")
    try:
        return asyncio.run(_supervise(settings, nodes, bus_path, worker_port_base))
    finally:
        shutil.rmtree(bus_dir, ignore_errors=True)


def worker_settings(settings: Settings, index: int) -> Settings:
    """Worker `index`'s settings: its own SIP port (`--sip-port` + index; 0 stays 0). Why
    not one shared port (SO_REUSEPORT): the kernel would spread a caller's datagrams by its
    address, so which worker answers a call could not be chosen or known by a proxy; a port
    per worker lets Kamailio's dispatcher (or a test) send each call to a known worker."""
    if not settings.sip_port:
        return settings
    return dataclasses.replace(settings, sip_port=settings.sip_port + index)


async def _migrate(settings: Settings) -> None:
    async with open_store(settings.database(), schema=settings.database_schema):
        pass


async def _supervise(
    settings: Settings, nodes: tuple[str, ...], bus_path: str, port_base: int | None
) -> int:
    broker = Broker(bus_path)
    await broker.start()
    # Spawned, each importing everything again. Forking them from a forkserver that imported
    # their modules once saved 1.1-1.3 CPU s a worker, but was taken back in session 15: whole
    # suites with it missed a real-audio level across workers in 2 of 3 runs
    # (docs/decisions.md, "Start-up").
    context = multiprocessing.get_context("spawn")
    workers: list[BaseProcess] = []
    try:
        for index, node in enumerate(nodes):
            sockets = [listening_socket(settings.host, settings.port, reuse_port=True)]
            if port_base is not None:
                sockets.append(listening_socket(settings.host, port_base + index, reuse_port=False))
            spec = WorkerSpec(worker_settings(settings, index), node, nodes, bus_path)
            worker = context.Process(target=run_worker, args=(spec, sockets), name=node)
            worker.start()
            for sock in sockets:
                sock.close()  # the worker has its own copy
            workers.append(worker)
        log.info("workers_started", workers=len(workers), port=settings.port)
        return await _until_stopped(workers)
    finally:
        # Off the loop: the broker keeps serving the workers while they shut down (their
        # unsubscribes wait for its answer).
        await asyncio.get_running_loop().run_in_executor(None, _stop, workers)
        await broker.close()


async def _until_stopped(workers: list[BaseProcess]) -> int:
    """0 after SIGTERM or SIGINT; 1 as soon as any worker ends by itself."""
    loop = asyncio.get_running_loop()
    stopped = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopped.set)
    sentinels = [w.sentinel for w in workers]
    ended: asyncio.Future[Any] = loop.run_in_executor(None, wait, sentinels)
    signalled: asyncio.Future[Any] = asyncio.ensure_future(stopped.wait())
    done, _ = await asyncio.wait([ended, signalled], return_when=asyncio.FIRST_COMPLETED)
    if signalled in done:
        return 0
    signalled.cancel()
    gone = [w.name for w in workers if not w.is_alive()]
    log.error("worker_ended", workers=gone)
    return 1


def _stop(workers: list[BaseProcess]) -> None:
    for worker in workers:
        if worker.is_alive() and worker.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(worker.pid, signal.SIGTERM)
    for worker in workers:
        worker.join(STOP_WAIT_S)
        if worker.is_alive():
            worker.kill()
            worker.join()
