"""WebSocket load: many players in many games play complete games against the real server.

    .venv/bin/python -m benchmarks.ws_load --players 1000 --duration 60
    .venv/bin/python -m benchmarks.ws_load --steps 500,1000,2000,5000 --duration 60
    .venv/bin/python -m benchmarks.ws_load --players 1000 --database-url postgresql://...
    .venv/bin/python -m benchmarks.ws_load --players 500 --open-loop [--rate 0.15] --json-out F
    .venv/bin/python -m benchmarks.ws_load --open-loop --nodes 3 --nodes-baseline \
        --database-url postgresql://postgres@127.0.0.1:5432/test [--nats-url nats://...]

For each step it starts `vollmond serve` on a free port with a fresh data directory (SQLite
by default; `--database-url` must name a scratch PostgreSQL database: games left running when
the server is stopped resume at its next start), signs up one account per seat of a game (the
accounts are reused at every table: each signup costs ~0.1 s of argon2 and is rate-limited per
address, and the load under test is play, not signup), founds `players / group` public games
and seats everyone over the JSON API, opens one real WebSocket per player from one or more
client processes, starts the games, and lets every client play: after a think time it sends a
random legal command from the `me.legal` of its latest view and waits for the answer.

`--open-loop` is the honest mode: every player sends at a fixed mean rate (`--rate`, default
0.15 commands/s, about what a real game offers a player; Poisson arrivals) whether or not its
earlier commands were answered, so a slow server cannot slow its own load down. Rejected
answers count in the latency figures like accepted ones, answers slower than `--late-ms` are
counted as late, and commands never answered count with the time they waited. The window
lasts until every game is over (at most `--duration`, default 600 s in this mode).

Measured in a window that opens once every game has started and every client is welcomed:
players connected, games completed, commands per second, command-to-event latency (from
sending a command to the first event it caused, or its ack if this seat sees no event of it),
messages per second received by the clients, CPU and memory of the server (from /proc) and
CPU of the client processes.

Side by side, the BARE baseline: a minimal websockets server (in this file) that forwards every
message of a client to the clients of its group, driven by the same client processes with the
same number of clients, the same groups, the same command rate and messages padded to the mean
size the real server sent; both servers run on uvloop. Ratios are real / bare, including the
server CPU per command. `--json-out FILE` appends one JSON line per step (benchmarks/jsonline.py).

`--chat`: by day, a living player whose view offers no command says a line on the market
place instead of skipping the send (`[web] chat_messages_per_seat_per_minute` still limits
him; its refusals count as answers). Free text never runs out, so with a high `--rate` this
is the saturating load that shows what one worker or several can carry.

The games start together by default, as in a tournament (a few seconds apart): with the short
phases of the benchmark (`--phase-s`, 6 s) their first phases then end in the same few
seconds, and those seconds hold the slowest answers (at 5,000 players the slowest 1 % fell in
seconds 5-10 of the window, docs/scaling.md). `--start-spread-s S` starts each game at a
random moment of S seconds instead, as tables that fill one by one do.

The clients say hello with `batch: true`, as the page does (`--no-batch`: one frame per
message, as older clients). `--ping-s 3` adds the page's heartbeat (a ping every 3 s from each
client; off by default, as when issue 16 was filed); its pongs count as messages received.

Each socket's URL names its game (`/ws?game=<id>`), as the page's does, so that with
`--workers 2` or more the worker that accepts it hands it to the game's owner; `--no-route`
leaves the game out (the socket is served where it lands, through a mirror), as before.

`--nodes N` (issue 15) runs N `vollmond serve --nats-url ... --ownership leases` node processes
instead of one server, on the scratch PostgreSQL database of `--database-url` in a schema made
for the step and dropped after it, and on the NATS server of `--nats-url` under a namespace of
the step's own, so that steps and runs never meet. Game k is founded on node k mod N (its lease,
read from the database, names the owner), its seat i joins and opens its socket on node
(k + i) mod N, so about (N-1)/N of the sockets (6 of 10 seats with 3 nodes) sit on a node that
does not own their game, and their commands and events cross NATS. Each step then reports,
beside the figures above (the server's CPU and memory summed over the nodes), the latency of
the commands sent from sockets on the owner and from the others — the difference is the cost
per command of crossing nodes — and the CPU per command of the machine's NATS and PostgreSQL
processes (whoever else uses them). `--nodes-baseline` runs the same step on one such node
(every socket on the owner) in the same run; the bare baseline is run as well unless
`--no-baseline`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import msgspec
import uvloop
import websockets
from prometheus_client.parser import text_string_to_metric_families
from websockets.asyncio.client import ClientConnection, connect
from websockets.asyncio.server import ServerConnection, broadcast, serve

from benchmarks.jsonline import append_json_line
from benchmarks.nodes import (
    HOST,
    NATS_URL,
    Cluster,
    cpu_seconds,
    engines_cpu_seconds,
    free_port,
    load_average,
    machine_busy_s,
    memory_mb,
    stop_all,
    tree_cpu_seconds,
    wait_healthy,
)

PASSWORD = "benchmark-password-42"  # a throw-away account on a throw-away server
SETUP_CONCURRENCY = 16
CONNECT_CONCURRENCY = 100
START_CONCURRENCY = 8
COMMAND_TIMEOUT_S = 30.0
ANSWER_GRACE_S = 30.0
SETUP_TIMEOUT_S = 900.0
# How keen a client is on each kind of command (RandomBot-like: calls and interjections rare).
WEIGHTS = {"PlaceCall": 0.05, "Interject": 0.05, "HangUp": 0.3, "ToggleCallMode": 0.05}

_decode = msgspec.json.Decoder().decode
_encoder = msgspec.json.Encoder()
_PING = '{"type":"ping"}'


def _encode(message: dict[str, Any]) -> str:
    """Text frames: the protocol is JSON text (a browser sends text, never binary)."""
    return _encoder.encode(message).decode()


def _log(text: str) -> None:
    sys.stderr.write(f"[ws_load {time.strftime('%H:%M:%S')}] {text}\n")
    sys.stderr.flush()


def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def raise_fd_limit() -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = hard if hard != resource.RLIM_INFINITY else 65536
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    return want


# -- the bare baseline server -----------------------------------------------------------------
async def bare_server(port: int, duration_s: float) -> None:
    """Forward each message of a client to every client of its group (itself included)."""
    groups: dict[str, set[ServerConnection]] = {}

    async def handler(ws: ServerConnection) -> None:
        with contextlib.suppress(websockets.ConnectionClosed):  # clients end abruptly
            group = str(await ws.recv())
            members = groups.setdefault(group, set())
            members.add(ws)
            try:
                async for message in ws:
                    broadcast(members, message)
            finally:
                members.discard(ws)

    async with serve(handler, HOST, port, max_size=2**20, ping_interval=None, backlog=4096):
        await asyncio.sleep(duration_s)


LATE_MS = 1000.0  # an answer slower than this is late (counted, and still in the latencies)


# -- client processes ---------------------------------------------------------------------------
@dataclass
class Totals:
    """What one client process measured inside the window."""

    latencies_ms: list[float] = field(default_factory=list)
    # With --nodes: the same latencies by where the socket sits, "owner" (on the node that
    # owns the game) or "cross" (on another node: commands and events cross NATS).
    side_latencies_ms: dict[str, list[float]] = field(default_factory=dict)
    sent: int = 0
    acked: int = 0
    rejected: int = 0
    unanswered: int = 0
    late: int = 0
    skipped: int = 0  # open loop: a send was due but the view offered no command
    received: int = 0
    frames: int = 0  # WebSocket frames received: fewer than messages with `batch` frames
    received_bytes: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    by_type: dict[str, int] = field(default_factory=dict)
    games_over: set[str] = field(default_factory=set)
    connected: int = 0
    failed: int = 0
    dropped: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "latencies_ms": self.latencies_ms,
            "side_latencies_ms": self.side_latencies_ms,
            "sent": self.sent,
            "acked": self.acked,
            "rejected": self.rejected,
            "unanswered": self.unanswered,
            "late": self.late,
            "skipped": self.skipped,
            "received": self.received,
            "frames": self.frames,
            "received_bytes": self.received_bytes,
            "errors": self.errors,
            "by_type": self.by_type,
            "games_over": sorted(self.games_over),
            "connected": self.connected,
            "failed": self.failed,
            "dropped": self.dropped,
        }


class Window:
    def __init__(self) -> None:
        self.t0 = float("inf")
        self.t1 = float("inf")
        self.opened = asyncio.Event()

    def inside(self, t: float) -> bool:
        return self.t0 <= t < self.t1


class Player:
    """One seat of one game, on one WebSocket, choosing random legal commands."""

    def __init__(
        self,
        game: str,
        token: str,
        think_s: float,
        rng: random.Random,
        totals: Totals,
        rate: float = 0.0,
        late_ms: float = LATE_MS,
        ws_url: str = "",
        side: str | None = None,
        chat: bool = False,
    ) -> None:
        self.game = game
        self.chat = chat
        self.ws_url = ws_url
        self.side = side
        self.rate = rate
        self.late_ms = late_ms
        self.token = token
        self.think_s = think_s
        self.rng = rng
        self.totals = totals
        self.ws: ClientConnection | None = None
        self.view: dict[str, Any] | None = None
        self.fresh = asyncio.Event()
        self.answered = asyncio.Event()
        self.pending: tuple[int, float] | None = None
        self.first_event_at: dict[int, float] = {}
        self.next_id = 1
        self.over = False
        self.in_flight: dict[int, float] = {}  # open loop: command id -> sent at

    def _answered(self, sent_at: float, answered_at: float, window: Window) -> None:
        if not window.inside(sent_at):
            return
        latency_ms = (answered_at - sent_at) * 1000
        self._record(latency_ms)
        if latency_ms > self.late_ms:
            self.totals.late += 1

    def _record(self, latency_ms: float) -> None:
        self.totals.latencies_ms.append(latency_ms)
        if self.side is not None:
            self.totals.side_latencies_ms.setdefault(self.side, []).append(latency_ms)

    def choose(self) -> dict[str, Any] | None:
        me = (self.view or {}).get("me") or {}
        legal: list[dict[str, Any]] = me.get("legal") or []
        by_type: dict[str, list[dict[str, Any]]] = {}
        for command in legal:
            by_type.setdefault(str(command["type"]), []).append(command)
        kinds = [k for k in by_type if self.rng.random() < WEIGHTS.get(k, 1.0)]
        if not kinds:
            return self._chat_line(me)
        command = dict(self.rng.choice(by_type[self.rng.choice(kinds)]))
        command.pop("actor", None)
        return command

    def _chat_line(self, me: dict[str, Any]) -> dict[str, Any] | None:
        """With `--chat`: a line said on the market place, where the view offers nothing else
        by day (the living hear it; a player writes far more often than the rules ask him to
        act). Free text is in no `legal` list, so this is the one command not taken from it."""
        if not self.chat or not me.get("alive") or (self.view or {}).get("phase") != "day":
            return None
        return {"type": "Say", "text": f"Ich sage {self.rng.randrange(1000)}, und du?"}

    async def receive(self, window: Window) -> None:
        assert self.ws is not None
        totals = self.totals
        async for raw in self.ws:
            now = time.time()
            inside = window.inside(now)
            frame = _decode(raw)
            # A `batch` frame (the hello asks for them unless --no-batch) holds several
            # messages; they count one by one, as the bare baseline's messages do.
            messages = frame["messages"] if frame.get("type") == "batch" else [frame]
            if inside:
                totals.frames += 1
                totals.received += len(messages)
                totals.received_bytes += len(raw)
            for message in messages:
                self._take(message, now, inside, window)

    def _take(self, message: dict[str, Any], now: float, inside: bool, window: Window) -> None:
        totals = self.totals
        kind = str(message.get("type"))
        if inside:
            totals.by_type[kind] = totals.by_type.get(kind, 0) + 1
        if kind == "event":
            if self.pending is not None or self.in_flight:
                self.first_event_at.setdefault(int(message["seq"]), now)
        elif kind in ("view", "welcome"):
            self.view = message["view"]
            if message["view"].get("phase") == "over":
                self.over = True
                if inside:
                    totals.games_over.add(self.game)
            self.fresh.set()
        elif kind == "ack" and message["id"] in self.in_flight:
            sent_at = self.in_flight.pop(message["id"])
            if window.inside(sent_at):
                totals.acked += 1
            self._answered(sent_at, self.first_event_at.get(int(message["seq"]), now), window)
            if not self.in_flight:
                self.first_event_at.clear()
        elif kind == "ack" and self.pending is not None and message["id"] == self.pending[0]:
            sent_at = self.pending[1]
            answered_at = self.first_event_at.get(int(message["seq"]), now)
            if window.inside(sent_at):
                totals.acked += 1
                self._record((answered_at - sent_at) * 1000)
            self._answer()
        elif kind == "error":
            code = str(message.get("code"))
            if inside:
                totals.errors[code] = totals.errors.get(code, 0) + 1
            if message.get("id") in self.in_flight:
                sent_at = self.in_flight.pop(message["id"])
                if window.inside(sent_at):
                    totals.rejected += 1
                self._answered(sent_at, now, window)  # a rejection is an answer too
            elif self.pending is not None and message.get("id") == self.pending[0]:
                if window.inside(self.pending[1]):
                    totals.rejected += 1
                self._answer()

    def _answer(self) -> None:
        self.pending = None
        self.first_event_at.clear()
        self.answered.set()

    async def act_open(self, window: Window) -> None:
        """Open loop: send at Poisson times of mean rate `self.rate`, answered or not."""
        assert self.ws is not None
        await window.opened.wait()
        due = time.time() + self.rng.expovariate(self.rate)
        while not self.over:
            await asyncio.sleep(max(0.0, due - time.time()))
            due += self.rng.expovariate(self.rate)  # the schedule does not wait for answers
            if self.over or time.time() >= window.t1:
                break
            command = self.choose()
            if command is None:
                self.totals.skipped += 1
                continue
            command_id = self.next_id
            self.next_id += 1
            sent_at = time.time()
            self.in_flight[command_id] = sent_at
            await self.ws.send(_encode({"type": "command", "id": command_id, "command": command}))
            if window.inside(sent_at):
                self.totals.sent += 1

    async def heartbeat(self, every_s: float) -> None:
        """Ping every `every_s` as the page does (its heartbeat: every 3 s), from a random
        phase, so that the server's cost of 5,000 pages' heartbeats is in the figures."""
        assert self.ws is not None
        await asyncio.sleep(self.rng.uniform(0, every_s))
        with contextlib.suppress(websockets.ConnectionClosed):
            while True:  # also after the game: the server times a silent pinger out
                await self.ws.send(_PING)
                await asyncio.sleep(every_s)

    def give_up(self, window: Window, now: float) -> None:
        """Commands never answered: counted, and in the latencies with the time they waited."""
        for sent_at in self.in_flight.values():
            if window.inside(sent_at):
                self.totals.unanswered += 1
                self._answered(sent_at, now, window)
        self.in_flight.clear()

    async def act(self, window: Window) -> None:
        if self.rate > 0:
            await self.act_open(window)
            return
        assert self.ws is not None
        await window.opened.wait()
        while not self.over and time.time() < window.t1:
            await self.fresh.wait()
            self.fresh.clear()
            await asyncio.sleep(self.think_s * self.rng.uniform(0.5, 1.5))
            if self.over or time.time() >= window.t1:
                break
            command = self.choose()
            if command is None:
                continue
            command_id = self.next_id
            self.next_id += 1
            self.answered.clear()
            sent_at = time.time()
            self.pending = (command_id, sent_at)
            await self.ws.send(_encode({"type": "command", "id": command_id, "command": command}))
            if window.inside(sent_at):
                self.totals.sent += 1
            try:
                await asyncio.wait_for(self.answered.wait(), COMMAND_TIMEOUT_S)
            except TimeoutError:
                if window.inside(sent_at):
                    self.totals.unanswered += 1
                self.pending = None


class BarePlayer:
    """One client of the bare server: sends padded messages at a fixed mean rate."""

    def __init__(self, name: str, interval_s: float, pad: int, rng: random.Random) -> None:
        self.name = name
        self.interval_s = interval_s
        self.pad = "x" * pad
        self.rng = rng
        self.ws: ClientConnection | None = None
        self.sent_at: dict[int, float] = {}

    async def receive(self, window: Window, totals: Totals) -> None:
        assert self.ws is not None
        prefix = self.name + ":"
        async for raw in self.ws:
            now = time.time()
            if window.inside(now):
                totals.received += 1
                totals.frames += 1
                totals.received_bytes += len(raw)
            text = raw if isinstance(raw, str) else raw.decode()
            if text.startswith(prefix):
                number = int(text.split(":", 2)[1])
                sent_at = self.sent_at.pop(number, None)
                if sent_at is not None and window.inside(sent_at):
                    totals.acked += 1
                    totals.latencies_ms.append((now - sent_at) * 1000)

    async def act(self, window: Window, totals: Totals) -> None:
        assert self.ws is not None
        await window.opened.wait()
        number = 0
        while time.time() < window.t1:
            await asyncio.sleep(self.rng.expovariate(1 / self.interval_s))
            if time.time() >= window.t1:
                break
            number += 1
            sent_at = time.time()
            self.sent_at[number] = sent_at
            await self.ws.send(f"{self.name}:{number}:{self.pad}")
            if window.inside(sent_at):
                totals.sent += 1


async def _read_line() -> dict[str, Any]:
    line = await asyncio.to_thread(sys.stdin.readline)
    if not line:
        raise SystemExit("the benchmark went away")
    data: dict[str, Any] = json.loads(line)
    return data


def _say(data: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(data) + "\n")
    sys.stdout.flush()


async def _open(url: str, limit: asyncio.Semaphore) -> ClientConnection:
    async with limit:
        return await connect(url, max_size=2**22, ping_interval=None, open_timeout=60)


@dataclass
class Clients:
    """The clients of one process, once connected: their sockets and running tasks."""

    totals: Totals = field(default_factory=Totals)
    window: Window = field(default_factory=Window)
    sockets: list[ClientConnection] = field(default_factory=list)
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    players: list[Player] = field(default_factory=list)

    def all_over(self) -> bool:
        return bool(self.players) and all(p.over for p in self.players if p.ws is not None)


async def _real_clients(job: dict[str, Any], rng: random.Random, clients: Clients) -> None:
    totals, window = clients.totals, clients.window
    limit = asyncio.Semaphore(CONNECT_CONCURRENCY)
    players = [
        Player(
            g["id"],
            token,
            job["think_s"],
            random.Random(rng.random()),
            totals,
            rate=job["rate"],
            chat=job.get("chat", False),
            late_ms=job["late_ms"],
            ws_url=ws_url,
            side=side,
        )
        for g in job["games"]
        for token, ws_url, side in zip(g["tokens"], g["ws_urls"], g["sides"], strict=True)
    ]
    clients.players = players
    opened = await asyncio.gather(
        *(_open(p.ws_url, limit) for p in players), return_exceptions=True
    )
    for player, ws in zip(players, opened, strict=True):
        if isinstance(ws, ClientConnection):
            player.ws = ws
            clients.sockets.append(ws)
            # Read from the start: a client that does not read is one the server must drop.
            clients.tasks.append(asyncio.create_task(player.receive(window)))
        else:
            totals.failed += 1
    _say({"ready": len(clients.sockets), "failed": totals.failed})
    await _read_line()  # go: start the games and say hello
    await _start_games(job, players)
    live = [p for p in players if p.ws is not None]
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(60):
            await asyncio.gather(*(p.fresh.wait() for p in live))
    _say({"playing": sum(p.view is not None for p in live)})
    for p in live:
        clients.tasks.append(asyncio.create_task(p.act(window)))
        if job["ping_s"] > 0:
            clients.tasks.append(asyncio.create_task(p.heartbeat(job["ping_s"])))


async def _bare_clients(job: dict[str, Any], rng: random.Random, clients: Clients) -> None:
    totals, window = clients.totals, clients.window
    limit = asyncio.Semaphore(CONNECT_CONCURRENCY)
    bare = [
        BarePlayer(f"{group}.{i}", job["interval_s"], job["pad"], random.Random(rng.random()))
        for group, size in job["groups"]
        for i in range(size)
    ]
    opened = await asyncio.gather(
        *(_open(job["ws_url"], limit) for _ in bare), return_exceptions=True
    )
    for client, ws in zip(bare, opened, strict=True):
        if isinstance(ws, ClientConnection):
            client.ws = ws
            clients.sockets.append(ws)
            await ws.send(client.name.split(".")[0])
        else:
            totals.failed += 1
    _say({"ready": len(clients.sockets), "failed": totals.failed})
    await _read_line()
    _say({"playing": len(clients.sockets)})
    for client in bare:
        if client.ws is not None:
            clients.tasks.append(asyncio.create_task(client.receive(window, totals)))
            clients.tasks.append(asyncio.create_task(client.act(window, totals)))


async def worker() -> None:
    """A client process: reads its job from stdin, reports on stdout (one JSON per line)."""
    raise_fd_limit()
    job = await _read_line()
    rng = random.Random(job["seed"])
    clients = Clients()
    if job["mode"] == "real":
        await _real_clients(job, rng, clients)
    else:
        await _bare_clients(job, rng, clients)
    window = clients.window
    times = await _read_line()
    window.t0, window.t1 = float(times["t0"]), float(times["t1"])
    window.opened.set()
    while time.time() < window.t1 and not clients.all_over():
        await asyncio.sleep(0.2)
    finished = time.time()
    # Commands sent inside the window still count when their answer comes later (bounded).
    while (
        any(p.pending or p.in_flight for p in clients.players)
        and time.time() < window.t1 + ANSWER_GRACE_S
    ):
        await asyncio.sleep(0.2)
    totals = clients.totals
    late = [p for p in clients.players if p.pending and clients.window.inside(p.pending[1])]
    totals.unanswered += len(late)
    gave_up_at = time.time()
    for p in clients.players:
        p.give_up(window, gave_up_at)
    totals.connected = sum(1 for ws in clients.sockets if ws.state is websockets.State.OPEN)
    totals.dropped = len(clients.sockets) - totals.connected
    result = totals.to_json()
    result["finished"] = finished
    for task in clients.tasks:
        task.cancel()
    await asyncio.gather(*clients.tasks, return_exceptions=True)
    _say(result)
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(10):
            await asyncio.gather(*(ws.close() for ws in clients.sockets), return_exceptions=True)


async def _start_games(job: dict[str, Any], players: list[Player]) -> None:
    """Start this process's games one by one, each followed at once by its players' hellos
    (each game on the node that owns it, with --nodes)."""
    by_game: dict[str, list[Player]] = {}
    for p in players:
        by_game.setdefault(p.game, []).append(p)
    start_at = {str(g["id"]): str(g["http_url"]) for g in job["games"]}
    limit = asyncio.Semaphore(START_CONCURRENCY)
    no_reuse = httpx.Limits(max_keepalive_connections=0)
    async with httpx.AsyncClient(timeout=60, limits=no_reuse) as http:
        http.cookies.update(job["host_cookies"])
        headers = {"X-CSRF-Token": job["host_cookies"]["vollmond_csrf"]}

        spread_s = float(job.get("start_spread_s", 0.0))
        rng = random.Random(job["seed"])

        async def start(game: str, seated: list[Player]) -> None:
            # With --start-spread-s, games start at random moments of that span, as tables
            # that fill one by one do; at 0 (the default) all start at once, like a tournament.
            await asyncio.sleep(rng.uniform(0.0, spread_s))
            async with limit:
                url = f"{start_at[game]}/api/games/{game}/start"
                response = await http.post(url, headers=headers)
                if response.status_code != 200:
                    # Counted, not fatal: its players stay silent and are not "playing".
                    sys.stderr.write(f"start {game}: {response.status_code} {response.text}\n")
                    return
                for p in seated:
                    if p.ws is not None:
                        hello: dict[str, Any] = {
                            "type": "hello",
                            "game": game,
                            "token": p.token,
                            "lang": "en",
                        }
                        if job["batch"]:
                            hello["batch"] = True  # as the browser's page says hello
                        await p.ws.send(_encode(hello))

        await asyncio.gather(*(start(g, seated) for g, seated in by_game.items()))


# -- the coordinator ----------------------------------------------------------------------------
@dataclass
class Step:
    players: int
    mode: str
    connected: int = 0
    failed: int = 0
    dropped: int = 0
    games: int = 0
    games_completed: int = 0
    window_s: float = 0.0
    commands: int = 0
    acked: int = 0
    rejected: int = 0
    unanswered: int = 0
    late: int = 0
    skipped: int = 0
    commands_per_s: float = 0.0
    p50_ms: float = float("nan")
    p99_ms: float = float("nan")
    max_ms: float = float("nan")
    received_per_s: float = 0.0
    frames_per_s: float = 0.0  # fewer than received_per_s when the server sends `batch` frames
    server_us_per_message: float = 0.0
    mean_message_bytes: float = 0.0
    server_cpu: float = 0.0
    server_rss_mb: float = 0.0
    server_peak_mb: float = 0.0
    client_cpu: float = 0.0
    others_cpu: float = 0.0
    load_average: float = 0.0
    server_ms_per_command: float = 0.0
    setup_s: float = 0.0
    errors: dict[str, int] = field(default_factory=dict)
    received_by_type: dict[str, int] = field(default_factory=dict)
    healthz_p50_ms: float = float("nan")
    healthz_max_ms: float = float("nan")
    # The server's event loop lag in the window (its `/metrics`, vollmond/service/loop_lag.py,
    # summed over workers): ticks sampled, how many ran 50 ms and 100 ms late or more, and the
    # histogram bucket that holds the 99th percentile (an upper bound).
    loop_ticks: int = 0
    loop_late_50ms: int = 0
    loop_late_100ms: int = 0
    loop_lag_p99_ms: float = float("nan")
    # The same of the log appends' waits for their commit (a command's events wait for it).
    log_appends: int = 0
    log_wait_100ms: int = 0
    log_wait_p99_ms: float = float("nan")
    # With --nodes: how many node processes, the share of sockets on their game's owner, and
    # the latencies of the commands sent from owner sockets and from the others ("cross").
    nodes: int = 0
    owner_share: float = float("nan")
    owner_answers: int = 0
    cross_answers: int = 0
    owner_p50_ms: float = float("nan")
    owner_p99_ms: float = float("nan")
    cross_p50_ms: float = float("nan")
    cross_p99_ms: float = float("nan")
    # CPU of the machine's NATS server and PostgreSQL processes per command (with --nodes).
    nats_ms_per_command: float = float("nan")
    postgres_ms_per_command: float = float("nan")


class Workers:
    """Client processes, each this module run with `--worker`."""

    def __init__(self, count: int) -> None:
        self.procs = [
            subprocess.Popen(
                [sys.executable, "-m", "benchmarks.ws_load", "--worker"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                cwd=Path(__file__).resolve().parent.parent,
            )
            for _ in range(count)
        ]

    def send(self, index: int, data: dict[str, Any]) -> None:
        stdin = self.procs[index].stdin
        assert stdin is not None
        stdin.write(json.dumps(data) + "\n")
        stdin.flush()

    def send_all(self, data: dict[str, Any]) -> None:
        for i in range(len(self.procs)):
            self.send(i, data)

    async def read_all(self, timeout_s: float) -> list[dict[str, Any]]:
        async def one(proc: subprocess.Popen[str]) -> dict[str, Any]:
            assert proc.stdout is not None
            line = await asyncio.to_thread(proc.stdout.readline)
            if not line:
                raise RuntimeError(f"client process {proc.pid} died")
            data: dict[str, Any] = json.loads(line)
            return data

        async with asyncio.timeout(timeout_s):
            return list(await asyncio.gather(*(one(p) for p in self.procs)))

    def cpu(self) -> float:
        return sum(cpu_seconds(p.pid) for p in self.procs if p.poll() is None)

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(10)
            if proc.poll() is None:
                proc.kill()


def _split(items: Sequence[Any], parts: int) -> list[list[Any]]:
    return [list(items[i::parts]) for i in range(parts)]


async def _probe(url: str, until: float, lags_ms: list[float]) -> None:
    """GET /healthz every 0.5 s: how long the server's event loop keeps a request waiting."""
    async with httpx.AsyncClient(timeout=60) as http:
        while time.time() < until:
            started = time.perf_counter()
            with contextlib.suppress(httpx.HTTPError):
                await http.get(url)
                lags_ms.append((time.perf_counter() - started) * 1000)
            await asyncio.sleep(0.5)


LOOP_LAG = "vollmond_event_loop_lag_seconds"
LOG_WAIT = "vollmond_log_append_wait_seconds"
Buckets = dict[float, float]  # cumulative counts by upper bound


async def _histograms(base_urls: Sequence[str]) -> dict[str, Buckets]:
    """The servers' loop lag and log wait histograms, summed over the processes (a worker's
    `/metrics` carries every worker's, labelled; nodes one URL each)."""
    found: dict[str, Buckets] = {LOOP_LAG: {}, LOG_WAIT: {}}
    async with httpx.AsyncClient(timeout=60) as http:
        for url in base_urls:
            text = (await http.get(f"{url}/metrics")).text
            for family in text_string_to_metric_families(text):
                buckets = found.get(family.name)
                if buckets is None:
                    continue
                for sample in family.samples:
                    if sample.name == f"{family.name}_bucket":
                        bound = float(sample.labels["le"])
                        buckets[bound] = buckets.get(bound, 0.0) + sample.value
    return found


def _in_window(before: Buckets, after: Buckets) -> tuple[int, int, int, float]:
    """What a histogram counted between two reads: how many, how many at least 50 ms and at
    least 100 ms, and the upper bound of the bucket that holds the 99th percentile (ms)."""
    window = {bound: after[bound] - before.get(bound, 0.0) for bound in sorted(after)}
    if not window:
        return 0, 0, 0, float("nan")
    total = window[float("inf")]
    from_50 = total - max((n for b, n in window.items() if b < 0.05), default=0)
    from_100 = total - max((n for b, n in window.items() if b < 0.1), default=0)
    p99 = next((1000 * b for b, n in window.items() if n >= 0.99 * total), float("nan"))
    return int(total), int(from_50), int(from_100), p99


def _timings(step: Step, before: dict[str, Buckets], after: dict[str, Buckets]) -> None:
    """The window's share of the servers' loop lag and log wait histograms."""
    lag = _in_window(before[LOOP_LAG], after[LOOP_LAG])
    step.loop_ticks, step.loop_late_50ms, step.loop_late_100ms, step.loop_lag_p99_ms = lag
    wait = _in_window(before[LOG_WAIT], after[LOG_WAIT])
    step.log_appends, _, step.log_wait_100ms, step.log_wait_p99_ms = wait


def _sides(step: Step, results: list[dict[str, Any]]) -> None:
    """Owner sockets against sockets on other nodes: the gap is what crossing costs."""
    for side in ("owner", "cross"):
        values = [x for r in results for x in r["side_latencies_ms"].get(side, [])]
        setattr(step, f"{side}_answers", len(values))
        if values:
            setattr(step, f"{side}_p50_ms", statistics.median(values))
            setattr(step, f"{side}_p99_ms", percentile(values, 0.99))


def _count(step: Step, results: list[dict[str, Any]]) -> None:
    """The fates of the commands sent in the window, summed over the client processes."""
    step.commands = sum(r["sent"] for r in results)
    step.acked = sum(r["acked"] for r in results)
    step.rejected = sum(r["rejected"] for r in results)
    step.unanswered = sum(r["unanswered"] for r in results)
    step.late = sum(r["late"] for r in results)
    step.skipped = sum(r["skipped"] for r in results)


@dataclass(frozen=True)
class Meter:
    """CPU seconds at one moment: the server's processes, the clients, the whole machine, and
    (with --nodes) the NATS and PostgreSQL processes."""

    server: float
    clients: float
    machine: float
    engines: dict[str, float]

    @classmethod
    def read(cls, server_pids: Sequence[int], workers: Workers, engines: bool) -> Meter:
        return cls(
            sum(tree_cpu_seconds(pid) for pid in server_pids),
            workers.cpu(),
            machine_busy_s(),
            engines_cpu_seconds() if engines else {},
        )


def _cpu(step: Step, before: Meter, after: Meter, server_pids: Sequence[int]) -> None:
    """CPU shares over the window, server CPU per command, and the server's memory."""
    server_s = after.server - before.server
    clients_s = after.clients - before.clients
    step.server_cpu = server_s / step.window_s
    step.client_cpu = clients_s / step.window_s
    others = (after.machine - before.machine) - server_s - clients_s
    step.others_cpu = max(0.0, others) / step.window_s
    commands = max(1, step.commands)
    step.server_ms_per_command = 1000 * server_s / commands
    if after.engines:
        nats_s = after.engines["nats-server"] - before.engines["nats-server"]
        step.nats_ms_per_command = 1000 * nats_s / commands
        postgres_s = after.engines["postgres"] - before.engines["postgres"]
        step.postgres_ms_per_command = 1000 * postgres_s / commands
    memories = [memory_mb(pid) for pid in server_pids]
    step.server_rss_mb = sum(rss for rss, _ in memories)
    step.server_peak_mb = sum(peak for _, peak in memories)


async def _drive(
    workers: Workers,
    step: Step,
    server_pids: Sequence[int],
    duration_s: float,
    jobs: list[dict[str, Any]],
    probe_url: str | None = None,
    metrics_urls: Sequence[str] = (),
) -> None:
    """Run one step's window; the server is every process in `server_pids` (with --nodes,
    each node's), its CPU and memory summed; `metrics_urls`: where to read its loop lag."""
    for i, job in enumerate(jobs):
        workers.send(i, job)
    ready = await workers.read_all(SETUP_TIMEOUT_S)
    step.failed = sum(r["failed"] for r in ready)
    workers.send_all({"go": True})
    playing = await workers.read_all(SETUP_TIMEOUT_S)
    step.connected = sum(r["playing"] for r in playing)
    _log(f"{step.mode}: {step.connected} clients playing (server pids {list(server_pids)})")
    t0 = time.time() + 0.5
    t1 = t0 + duration_s
    workers.send_all({"t0": t0, "t1": t1})
    await asyncio.sleep(max(0.0, t0 - time.time()))
    before = Meter.read(server_pids, workers, engines=bool(step.nodes))
    timings_before = await _histograms(metrics_urls)
    lags: list[float] = []
    probe = asyncio.create_task(_probe(probe_url, t1, lags)) if probe_url else None
    results = await workers.read_all(duration_s + 120)
    if probe is not None:
        probe.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await probe
        step.healthz_p50_ms = statistics.median(lags) if lags else float("nan")
        step.healthz_max_ms = max(lags, default=float("nan"))
    finished = max(r["finished"] for r in results)
    after = Meter.read(server_pids, workers, engines=bool(step.nodes))
    _timings(step, timings_before, await _histograms(metrics_urls))
    step.load_average = load_average()
    step.window_s = max(0.001, min(finished, t1) - t0)
    latencies = [x for r in results for x in r["latencies_ms"]]
    _count(step, results)
    _cpu(step, before, after, server_pids)
    _sides(step, results)
    step.dropped = sum(r["dropped"] for r in results)
    step.connected = min(step.connected, sum(r["connected"] for r in results))
    step.games_completed = len({g for r in results for g in r["games_over"]})
    step.commands_per_s = step.commands / step.window_s
    received = sum(r["received"] for r in results)
    step.received_per_s = received / step.window_s
    step.frames_per_s = sum(r["frames"] for r in results) / step.window_s
    step.server_us_per_message = 1e6 * step.server_cpu * step.window_s / max(1, received)
    step.mean_message_bytes = sum(r["received_bytes"] for r in results) / max(1, received)
    for r in results:
        for code, n in r["errors"].items():
            step.errors[code] = step.errors.get(code, 0) + n
        for kind, n in r["by_type"].items():
            step.received_by_type[kind] = step.received_by_type.get(kind, 0) + n
    if latencies:
        step.p50_ms = statistics.median(latencies)
        step.p99_ms = percentile(latencies, 0.99)
        step.max_ms = max(latencies)


def durations(phase_s: float) -> dict[str, float]:
    return {
        "night_s": phase_s,
        "day_s": phase_s,
        "vote_s": phase_s * 0.75,
        "morning_s": phase_s * 0.25,
        "steal_s": phase_s * 0.5,
        "floor_s": phase_s * 0.5,
    }


async def _setup_games(
    http_urls: Sequence[str], games: int, group: int, phase_s: float
) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Sign up one account per seat, found `games` public games and seat everyone.

    With several nodes (`http_urls`, one per node) game k is founded on node k and its seat i
    joined on node k + i (round robin); each game's "nodes" lists its seats' nodes, where
    their sockets will be opened too."""
    n = len(http_urls)
    # No keep-alive: under load an idle pooled connection can be closed by the server just as
    # it is reused, which loses a (non-idempotent) join.
    no_reuse = httpx.Limits(max_keepalive_connections=0)
    clients = [
        httpx.AsyncClient(base_url=http_urls[0], timeout=120, limits=no_reuse) for _ in range(group)
    ]
    try:
        headers: list[dict[str, str]] = []
        for i, client in enumerate(clients):
            (await client.get("/api/me")).raise_for_status()
            headers.append({"X-CSRF-Token": client.cookies["vollmond_csrf"]})
            body = {"name": f"Last{i + 1:02d}", "password": PASSWORD}
            (await client.post("/api/signup", json=body, headers=headers[i])).raise_for_status()
            # Signing in hands out a fresh CSRF token (docs/security.md, "Web").
            headers[i] = {"X-CSRF-Token": client.cookies["vollmond_csrf"]}
        limit = asyncio.Semaphore(SETUP_CONCURRENCY)
        founding = {
            "world": "werwolf",
            "size": group + 1,  # one seat spare: the host starts the game once clients wait
            "durations": durations(phase_s),
        }

        async def found(k: int) -> dict[str, Any]:
            nodes = [(k + i) % n for i in range(group)]
            async with limit:
                response = await clients[0].post(
                    f"{http_urls[nodes[0]]}/api/games", json=founding, headers=headers[0]
                )
                if not response.is_success:  # say why: the server's options may have moved
                    raise RuntimeError(f"founding: {response.status_code} {response.text}")
                game = str(response.json()["game"])
                tokens = [str(response.json()["token"])]
                for i in range(1, group):
                    url = f"{http_urls[nodes[i]]}/api/games/{game}/join"
                    r = await clients[i].post(url, headers=headers[i])
                    r.raise_for_status()
                    tokens.append(str(r.json()["token"]))
                return {"id": game, "tokens": tokens, "nodes": nodes}

        created = list(await asyncio.gather(*(found(k) for k in range(games))))
        host_cookies = {name: str(value) for name, value in clients[0].cookies.items()}
        return created, host_cookies
    finally:
        for client in clients:
            await client.aclose()


def _place(
    created: list[dict[str, Any]],
    http_urls: Sequence[str],
    ws_urls: Sequence[str],
    owners: Sequence[int | None] | None = None,
    *,
    route: bool = False,
) -> float:
    """Give every seat its socket's URL (on the node it joined on) and, when the games' owners
    are known (`owners`: each game's owner node, by index), its side: "owner" or "cross".
    A game is started on its owner. Returns the share of seats on their game's owner.
    `route`: the URL names the game (`/ws?game=<id>`), as the page's does, so that a server of
    several workers passes the socket to the game's owner."""
    on_owner = seats = 0
    for k, game in enumerate(created):
        owner = None if owners is None else owners[k]
        hint = f"?game={game['id']}" if route else ""
        game["ws_urls"] = [ws_urls[node] + hint for node in game["nodes"]]
        game["sides"] = [
            None if owner is None else "owner" if node == owner else "cross"
            for node in game["nodes"]
        ]
        game["http_url"] = http_urls[game["nodes"][0] if owner is None else owner]
        on_owner += game["sides"].count("owner")
        seats += len(game["nodes"])
    return on_owner / max(1, seats)


def _real_jobs(
    args: argparse.Namespace, created: list[dict[str, Any]], host_cookies: dict[str, str]
) -> list[dict[str, Any]]:
    """One job per client process: its share of the games, placed (`_place`) beforehand."""
    return [
        {
            "mode": "real",
            "seed": args.seed + i,
            "host_cookies": host_cookies,
            "games": part,
            "think_s": args.think_s,
            "rate": args.rate if args.open_loop else 0.0,
            "chat": args.chat,
            "late_ms": args.late_ms,
            "batch": not args.no_batch,
            "ping_s": args.ping_s,
            "start_spread_s": args.start_spread_s,
        }
        for i, part in enumerate(_split(created, args.client_procs))
    ]


async def _retire_games(database_url: str, game_ids: list[str]) -> None:
    """On a shared database, games this run left running would resume at the next start."""
    from vollmond.store import get_game, open_store, set_game_status  # noqa: PLC0415
    from vollmond.store.models import GameStatus  # noqa: PLC0415

    async with open_store(database_url, migrate_to_head=False) as sessions:
        for game_id in game_ids:
            if (await get_game(sessions, game_id)).status is GameStatus.RUNNING:
                await set_game_status(sessions, game_id, GameStatus.ABORTED)


def _workers_option(program: str, workers: int, env: dict[str, str]) -> list[str]:
    """`--workers N`, left out for a server from before the option existed.

    A before/after comparison runs this benchmark against an older tree (its package first on
    the path); that server is one process, which is what `--workers 1` asks for.
    """
    usage = subprocess.run(
        [program, "serve", "--help"], env=env, capture_output=True, text=True, check=True
    ).stdout
    if "--workers" in usage:
        return ["--workers", str(workers)]
    if workers != 1:
        raise SystemExit("this server has no --workers option: run it with --workers 1")
    return []


async def run_real(args: argparse.Namespace, players: int) -> Step:
    step = Step(players, "real")
    games = max(1, players // args.group)
    step.games = games
    data_dir = Path(tempfile.mkdtemp(prefix="vollmond-load-"))
    port = free_port()
    env = dict(os.environ)
    if args.database_url:
        env["DATABASE_URL"] = args.database_url
    else:
        env.pop("DATABASE_URL", None)
    # Every simulated player connects from this one address: raise the per-address socket
    # limit (docs/security.md, "Web") above the load, as an operator behind a NAT would.
    config = data_dir / "vollmond.toml"
    config.write_text(f"[web]\nws_connections_per_address = {players + 64}\n")
    env["VOLLMOND_CONFIG"] = str(config)
    program = str(Path(sys.executable).parent / "vollmond")
    server = subprocess.Popen(
        [
            program,
            "serve",
            "--host",
            HOST,
            "--port",
            str(port),
            "--data-dir",
            str(data_dir),
            "--sip-port",
            "0",  # no telephone: the SIP port of a test server may be taken
            *_workers_option(program, args.workers, env),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=None if args.server_log else subprocess.DEVNULL,
    )
    workers = Workers(args.client_procs)
    created: list[dict[str, Any]] = []
    try:
        http_url = f"http://{HOST}:{port}"
        wait_healthy(http_url + "/healthz", server)
        started = time.monotonic()
        created, host_cookies = await _setup_games([http_url], games, args.group, args.phase_s)
        _place(created, [http_url], [f"ws://{HOST}:{port}/ws"], route=not args.no_route)
        jobs = _real_jobs(args, created, host_cookies)
        step.setup_s = time.monotonic() - started
        _log(f"real: {games} games founded and seated in {step.setup_s:.0f} s")
        await _drive(
            workers, step, [server.pid], args.duration, jobs, http_url + "/healthz", [http_url]
        )
    finally:
        workers.stop()
        stop_all([server])
        shutil.rmtree(data_dir, ignore_errors=True)
        if args.database_url and created:
            await _retire_games(args.database_url, [g["id"] for g in created])
    return step


async def run_nodes(args: argparse.Namespace, players: int, count: int) -> Step:
    """The step on `count` nodes: games founded round robin over the nodes, seats joined and
    sockets opened round robin too, so about (count-1)/count of them are not on the owner."""
    step = Step(players, "real", nodes=count)
    step.games = max(1, players // args.group)
    cluster = Cluster(count, args.database_url, args.nats_url)
    workers = Workers(args.client_procs)
    try:
        # one client address for all: see run_real
        await cluster.start(
            f"[web]\nws_connections_per_address = {players + 64}\n", show_log=args.server_log
        )
        started = time.monotonic()
        created, host_cookies = await _setup_games(
            cluster.http_urls, step.games, args.group, args.phase_s
        )
        owners = await cluster.owners([game["id"] for game in created])
        if None in owners:
            _log(f"nodes: {owners.count(None)} games without a lease (their sockets: no side)")
        step.owner_share = _place(created, cluster.http_urls, cluster.ws_urls, owners)
        jobs = _real_jobs(args, created, host_cookies)
        step.setup_s = time.monotonic() - started
        _log(
            f"{count} node{'s' if count > 1 else ''}: {step.games} games founded and seated "
            f"in {step.setup_s:.0f} s, {step.owner_share:.0%} of the seats on their game's owner"
        )
        await _drive(
            workers,
            step,
            cluster.pids,
            args.duration,
            jobs,
            cluster.http_urls[0] + "/healthz",
            cluster.http_urls,
        )
    finally:
        workers.stop()
        await cluster.remove()
    return step


async def run_bare(args: argparse.Namespace, players: int, real: Step) -> Step:
    step = Step(players, "bare")
    groups = max(1, players // args.group)
    step.games = groups
    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "benchmarks.ws_load",
            "--bare-server",
            str(port),
            "--duration",
            str(args.duration + SETUP_TIMEOUT_S),
        ],
        cwd=Path(__file__).resolve().parent.parent,
    )
    workers = Workers(args.client_procs)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection((HOST, port), 1):
                break
            await asyncio.sleep(0.1)
        clients = groups * args.group
        # The rate the real run reached (in the open loop below `--rate` by the sends that were
        # due while a player's view offered nothing, e.g. a dead player's): the same load.
        interval = clients / max(real.commands_per_s, 0.01)
        pad = max(0, int(real.mean_message_bytes) - 16)
        jobs = [
            {
                "mode": "bare",
                "seed": args.seed + i,
                "ws_url": f"ws://{HOST}:{port}/",
                "groups": [[g, args.group] for g in part],
                "interval_s": interval,
                "pad": pad,
            }
            for i, part in enumerate(_split(range(groups), args.client_procs))
        ]
        await _drive(workers, step, [server.pid], real.window_s, jobs)
    finally:
        workers.stop()
        if server.poll() is None:
            server.terminate()
            server.wait(10)
    return step


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.1f}×" if b else "–"


@dataclass
class Runs:
    """One step: the run under test and the baselines measured beside it in the same run."""

    real: Step
    bare: Step | None = None
    one_node: Step | None = None  # --nodes-baseline: the same step on one node


def _row(s: Step) -> str:
    games = f"{s.games_completed}/{s.games}" if s.mode == "real" else f"{s.games} grp"
    # (an open-loop p99 includes rejected, late and unanswered commands)
    return (
        f"{s.players:>7} {s.mode:>4} {s.nodes or '–':>5} {s.connected:>5} {games:>9} "
        f"{s.commands_per_s:>6.0f} {s.p50_ms:>7.1f} {s.p99_ms:>7.1f} {s.max_ms:>6.0f} "
        f"{s.received_per_s:>6.0f} {s.mean_message_bytes:>5.0f} {s.server_cpu:>7.0%} "
        f"{s.server_ms_per_command:>6.2f} {s.server_rss_mb:>6.0f} {s.client_cpu:>7.0%} "
        f"{s.others_cpu:>6.0%} {s.load_average:>5.1f}"
    )


def _node_line(s: Step) -> str:
    """Owner sockets against the others: the difference is what crossing nodes costs."""
    line = (
        f"{'':>7} {s.nodes} node{'s' if s.nodes > 1 else ''}: {s.owner_share:.0%} of the "
        f"sockets on their game's owner; owner sockets {s.owner_answers} answers p50 "
        f"{s.owner_p50_ms:.1f} p99 {s.owner_p99_ms:.1f} ms"
    )
    if s.cross_answers:
        line += (
            f", other nodes {s.cross_answers} answers p50 {s.cross_p50_ms:.1f} p99 "
            f"{s.cross_p99_ms:.1f} ms: crossing {s.cross_p50_ms - s.owner_p50_ms:+.1f} ms p50, "
            f"{s.cross_p99_ms - s.owner_p99_ms:+.1f} ms p99"
        )
    return (
        f"{line}; CPU per command of the machine's NATS {s.nats_ms_per_command:.2f} ms, "
        f"PostgreSQL {s.postgres_ms_per_command:.2f} ms"
    )


def report(runs: list[Runs], args_late_ms: float = LATE_MS) -> None:
    print(
        f"{'players':>7} {'mode':>4} {'nodes':>5} {'held':>5} {'games':>9} {'cmd/s':>6} "
        f"{'p50 ms':>7} {'p99 ms':>7} {'max ms':>6} {'msg/s':>6} {'B/msg':>5} {'srv CPU':>7} "
        f"{'ms/cmd':>6} {'srv MB':>6} {'cli CPU':>7} {'others':>6} {'load':>5}"
    )
    for run in runs:
        real, bare, one = run.real, run.bare, run.one_node
        for s in (real, one, bare):
            if s is not None:
                print(_row(s))
        for s in (real, one):
            if s is not None and s.nodes:
                print(_node_line(s))
        if one is not None:
            print(
                f"{'':>7} {real.nodes} nodes / 1 node: p50 {_ratio(real.p50_ms, one.p50_ms)}, "
                f"p99 {_ratio(real.p99_ms, one.p99_ms)}, server CPU per command "
                f"{real.server_ms_per_command:.2f} ms vs {one.server_ms_per_command:.2f} ms "
                f"({real.server_ms_per_command - one.server_ms_per_command:+.2f} ms)"
            )
        if bare is not None:
            print(
                f"{'':>7} real/bare: p50 {_ratio(real.p50_ms, bare.p50_ms)}, "
                f"p99 {_ratio(real.p99_ms, bare.p99_ms)}, "
                f"server CPU {_ratio(real.server_cpu, bare.server_cpu)}, "
                f"server CPU per command {real.server_ms_per_command:.2f} ms vs bare "
                f"{bare.server_ms_per_command:.2f} ms = "
                f"{_ratio(real.server_ms_per_command, bare.server_ms_per_command)}; "
                f"per message {real.server_us_per_message:.0f} µs vs bare "
                f"{bare.server_us_per_message:.0f} µs = "
                f"{_ratio(real.server_us_per_message, bare.server_us_per_message)} "
                f"({real.frames_per_s:.0f} frames/s for {real.received_per_s:.0f} messages/s)"
            )
        print(
            f"{'':>7} window {real.window_s:.0f} s, setup {real.setup_s:.0f} s; "
            f"commands {real.commands}: {real.acked} acked, {real.rejected} rejected, "
            f"{real.unanswered} unanswered, {real.late} late (> {args_late_ms:.0f} ms), "
            f"{real.skipped} due with nothing to send; "
            f"dropped {real.dropped}, failed {real.failed}; "
            f"GET /healthz meanwhile p50 {real.healthz_p50_ms:.0f} ms, "
            f"max {real.healthz_max_ms:.0f} ms; "
            f"event loop lag: {real.loop_ticks} ticks, p99 ≤ {real.loop_lag_p99_ms:.0f} ms, "
            f"{real.loop_late_50ms} ≥ 50 ms, {real.loop_late_100ms} ≥ 100 ms; "
            f"log appends: {real.log_appends}, waited p99 ≤ {real.log_wait_p99_ms:.0f} ms, "
            f"{real.log_wait_100ms} ≥ 100 ms; "
            f"errors {dict(sorted(real.errors.items()))}; "
            f"received {dict(sorted(real.received_by_type.items()))}"
        )


async def coordinate(args: argparse.Namespace) -> list[Runs]:
    steps = [int(x) for x in args.steps.split(",")] if args.steps else [args.players]
    out: list[Runs] = []
    for players in steps:
        if args.nodes:
            run = Runs(await run_nodes(args, players, args.nodes))
            if args.nodes_baseline:
                run.one_node = await run_nodes(args, players, 1)
        else:
            run = Runs(await run_real(args, players))
        if not args.no_baseline:
            run.bare = await run_bare(args, players, run.real)
        out.append(run)
        if not args.json:
            report([run], args.late_ms)
        if args.json_out is not None:
            write_json_line(args, run)
    return out


def write_json_line(args: argparse.Namespace, run: Runs) -> None:
    keys = (
        "players", "connected", "games", "games_completed", "window_s", "commands", "acked",
        "rejected", "unanswered", "late", "skipped", "commands_per_s", "p50_ms", "p99_ms",
        "max_ms", "server_cpu", "server_ms_per_command", "server_rss_mb", "client_cpu",
        "received_per_s", "frames_per_s", "server_us_per_message",
    )  # fmt: skip
    node_keys = (
        "nodes", "owner_share", "owner_answers", "cross_answers", "owner_p50_ms",
        "owner_p99_ms", "cross_p50_ms", "cross_p99_ms", "nats_ms_per_command",
        "postgres_ms_per_command",
    )  # fmt: skip

    def pick(step: Step | None) -> dict[str, Any]:
        if step is None:
            return {}
        values = vars(step)
        wanted = keys + node_keys if step.nodes else keys
        return {k: values[k] if values[k] == values[k] else None for k in wanted}  # NaN: null

    figures = pick(run.real)
    if run.one_node is not None:  # the single-node baseline, beside the nodes' own figures
        figures["one_node"] = pick(run.one_node)
    append_json_line(
        args.json_out,
        "ws_load",
        figures=figures,
        baseline=pick(run.bare),
        parameters={
            "players": run.real.players,
            "open_loop": args.open_loop,
            "rate": args.rate if args.open_loop else None,
            "chat": args.chat,
            "think_s": None if args.open_loop else args.think_s,
            "duration": args.duration,
            "group": args.group,
            "phase_s": args.phase_s,
            "database": "postgresql" if args.database_url else "sqlite",
            "late_ms": args.late_ms,
            "batch": not args.no_batch,
            "ping_s": args.ping_s,
            "start_spread_s": args.start_spread_s,
            "workers": args.workers,
            "nodes": args.nodes or None,
        },
    )


def _check(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Options that do not fit together stop the run before anything starts."""
    if not 4 <= args.group <= 10:
        parser.error("--group must be 4..10 (one signup per seat; signups are rate-limited)")
    if args.nodes and not args.database_url:
        parser.error("--nodes needs --database-url (the nodes share one PostgreSQL database)")
    if args.nodes and args.workers != 1:
        parser.error("--nodes runs one process per node: leave out --workers")
    if args.nodes_baseline and args.nodes < 2:
        parser.error("--nodes-baseline compares --nodes N (2 or more) with one node")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=1000)
    parser.add_argument("--steps", help="comma-separated player counts, e.g. 500,1000,2000,5000")
    parser.add_argument(
        "--duration", type=float, help="measured window, s (60; open loop: at most 600)"
    )
    parser.add_argument(
        "--open-loop", action="store_true", help="send at a fixed rate, answered or not"
    )
    parser.add_argument("--rate", type=float, default=0.15, help="open loop: commands/s/player")
    parser.add_argument("--late-ms", type=float, default=LATE_MS, help="an answer above is late")
    parser.add_argument(
        "--start-spread-s",
        type=float,
        default=0.0,
        help="start each game at a random moment of this many seconds, as tables that fill "
        "one by one (0: all at once, as a tournament; their phase timers then end together)",
    )
    parser.add_argument(
        "--ping-s",
        type=float,
        default=0.0,
        help="each client pings this often, as the page does every 3 s (0: no heartbeat; "
        "the pongs count as messages received)",
    )
    parser.add_argument(
        "--no-batch",
        action="store_true",
        help="clients say hello without `batch`: one frame per message",
    )
    parser.add_argument("--json-out", type=Path, help="append one JSON line per step")
    parser.add_argument("--group", type=int, default=10, help="players per game (at most 10)")
    parser.add_argument("--phase-s", type=float, default=6.0, help="night/day length, s")
    parser.add_argument("--think-s", type=float, default=1.0, help="mean think time, s")
    parser.add_argument("--client-procs", type=int, default=1)
    parser.add_argument(
        "--workers", type=int, default=1, help="`vollmond serve --workers` (the server's processes)"
    )
    parser.add_argument("--database-url", help="a scratch PostgreSQL database instead of SQLite")
    parser.add_argument(
        "--nodes", type=int, default=0, help="N node processes over NATS (needs --database-url)"
    )
    parser.add_argument(
        "--nodes-baseline", action="store_true", help="with --nodes: the same step on one node"
    )
    parser.add_argument("--nats-url", default=NATS_URL, help="with --nodes: the NATS server")
    parser.add_argument(
        "--chat",
        action="store_true",
        help="by day, a player whose view offers nothing says a line on the market place "
        "(a load that does not run out: with a high --rate, a saturating run)",
    )
    parser.add_argument(
        "--no-route",
        action="store_true",
        help="sockets without the game in their URL: with several workers, served where they "
        "land (through a mirror) instead of by the game's owner",
    )
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--server-log", action="store_true", help="show the server's stderr")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--bare-server", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.duration is None:
        args.duration = 600.0 if args.open_loop else 60.0
    raise_fd_limit()
    if args.worker:
        uvloop.run(worker())
        return
    if args.bare_server:  # uvloop, as `vollmond serve` runs: the baseline is not handicapped
        uvloop.run(bare_server(args.bare_server, args.duration))
        return
    _check(parser, args)
    runs = asyncio.run(coordinate(args))
    if args.json:
        out = [
            {
                "real": vars(run.real),
                "bare": vars(run.bare) if run.bare is not None else None,
                "one_node": vars(run.one_node) if run.one_node is not None else None,
            }
            for run in runs
        ]
        print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main()
