"""Telephone load: SIPp callers seated in real games by their keys, against a bare RTP echo.

    .venv/bin/python -m benchmarks.phone_load                      # 300 callers, both modes
    .venv/bin/python -m benchmarks.phone_load --calls 100,200,300 --seconds 20
    .venv/bin/python -m benchmarks.phone_load --mode mix --calls 300 --json
    .venv/bin/python -m benchmarks.phone_load --json-out runs.jsonl  # + one JSON line per run
    PHONE_LOAD_PROFILE=/tmp/p .venv/bin/python -m benchmarks.phone_load --calls 50  # cProfile
    .venv/bin/python -m benchmarks.phone_load --nodes 3 --nodes-baseline --calls 30,90 \
        --database-url postgresql://postgres@127.0.0.1:5432/test [--nats-url nats://...]

Each step starts a server in a child process (so its CPU is its own), then SIPp places
``--calls`` calls at ``--rate`` calls per second; every call streams speech-like PCMU audio
from a pcap (SIPp ``play_pcap_audio``) for the whole window.

MIX (the product), run the way ``vollmond serve`` runs it: the whole program
(:func:`vollmond.server.build_app`: web, hub, SQLite store, moderation, voice rooms and the
telephone with its default sessions and espeak-ng voice) under uvicorn on uvloop, with an
operator file that lets the SIPp host place many calls (``[sip]``: a trusted proxy, high
limits) and the product's media processes (one at real-time priority 20 unless
``--media-processes`` and ``--media-priority`` say otherwise; 0 runs RTP and mixing in the
server's own process). The server founds private games of ``--game-size`` (house 1 is a
silent host) and writes their invitation codes for SIPp; every load caller is a real
:class:`~vollmond.phone.session.PhoneSession` that signs in as a guest and takes its seat by
keys (SIP INFO: ``2``, ``2``, the 16-digit code, ``#``), hears the real prompts, and once the
game has reached the day asks for the status (``#3``), nominates house 1 (a command: accepted
or refused with its spoken reason) and asks who is alive (``#4``). The games run on their own
timers (night 5 s, morning 1 s, day 1 h): the window opens when every call is up, every
caller seated and every game in the day, where everyone hears everyone (the heaviest routing).
Alongside, PROBE calls (a second SIPp) press keys: key-to-first-audio is measured in the
server from the key's arrival to the first non-silent frame of the answer leaving on the
media clock (``2`` = guest: an uncached prompt; ``#1`` = help: a cached prompt).

ECHO (the baseline), on the same loop (uvloop): the same SIP/RTP transport
(:class:`~vollmond.phone.sip.uas.SipUas`, shared 20 ms media clock, G.711 decode and encode)
with a handler that sends every caller its own last received frame back: no hub, no sessions,
no mixer.

Measured in a window of ``--seconds``: server CPU (``time.process_time``) per caller; RTP send
lateness = how late each packet left against its absolute schedule (``start + index * 20 ms``
of the shared clock), p50/p95/p99 over every packet of every call; frames NOT sent =
calls up at the window's start times the clock's frames in the window, minus packets sent
(skipped ticks, refused sends and dropped calls are all failures); also the inter-departure
deviation ``|dt - 20 ms|`` per call. The mixer's own cost per caller is measured in-process
on the same game layout (``GameMixer`` push + pull, no I/O).

NODES (``--nodes N``, issue 15): the product as N nodes of one deployment, each this module's
server given the options of ``vollmond serve --nats-url ... --ownership leases`` and run as
:func:`vollmond.nodes.serve_node` runs a node (the same app, hub and telephone), each
answering SIP on a port of its own, on a fresh PostgreSQL schema and NATS namespace per step
(``benchmarks/nodes.py``, shared with ``ws_load --nodes``). Game g is founded on node g mod N
(it holds the lease); load caller j, seated in game j // 8, dials node j mod N (one SIPp per
node), so about (N-1)/N of the callers land on a node that does not own their game: their
keys and prompts stay there and their voice is relayed over NATS to the owner's room
(vollmond/voice/relay.py). Every node's window opens at one moment the driver sets; the
figures are pooled over the nodes (every packet's lateness in one list; CPU, calls and frames
summed; a frame not sent on any node is a failure), with the relay's counters (lines relayed,
mix frames missing at the landing) and the CPU of the machine's NATS and PostgreSQL processes
over the window. After the window, with the calls still up, ``benchmarks.voice_relay
--nats-only`` measures the relay's added delay under that load (``--relay-seconds``; a click
from one line heard by another, relayed against two lines local to the owner: in a process of
its own, not through the loaded nodes). ``--nodes-baseline`` runs the same step on one such
node (every caller on the owner), and the echo runs as well unless ``--mode mix``. No key
probes run against the nodes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import gc
import itertools
import json
import math
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.jsonline import append_json_line
from benchmarks.nodes import (
    NATS_URL,
    Cluster,
    engines_cpu_seconds,
    free_port,
    free_udp_port,
    load_average,
)

HOST = "127.0.0.1"
SCENARIO_DIR = Path(__file__).parent / "sipp"
FRAME = 0.020


# --- shared helpers --------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return math.nan
    return float(np.percentile(np.asarray(values), q))


def speechlike(seconds: float) -> np.ndarray[Any, np.dtype[np.int16]]:
    """Syllable-rate modulated harmonics: not speech, but never silent and not a pure tone."""
    t = np.arange(int(seconds * 8000)) / 8000
    carrier = sum(np.sin(2 * np.pi * f * t) / k for k, f in enumerate((180, 360, 540, 900), 1))
    envelope = 0.55 + 0.45 * np.sin(2 * np.pi * 4.0 * t)
    samples: np.ndarray[Any, np.dtype[np.int16]] = (3500 * carrier * envelope).astype(np.int16)
    return samples


def write_pcap(path: Path, seconds: float) -> None:
    """PCMU RTP packets of speech-like audio, 20 ms apart, for SIPp ``play_pcap_audio``."""
    import struct  # noqa: PLC0415

    from vollmond.phone.g711 import ULAW  # noqa: PLC0415

    encoded = ULAW.encode(speechlike(seconds))
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)]
    for index in range(len(encoded) // 160):
        rtp = struct.pack("!BBHII", 0x80, 0, index & 0xFFFF, index * 160, 0x5EED)
        rtp += encoded[index * 160 : (index + 1) * 160]
        udp = struct.pack("!HHHH", 4000, 6000, 8 + len(rtp), 0) + rtp
        ip = struct.pack(
            "!BBHHHBBH4s4s",
            0x45,
            0,
            20 + len(udp),
            index & 0xFFFF,
            0,
            64,
            17,
            0,
            socket.inet_aton(HOST),
            socket.inet_aton(HOST),
        )
        frame = b"\x00" * 12 + b"\x08\x00" + ip + udp
        ts = index * 20_000
        out.append(struct.pack("<IIII", ts // 1_000_000, ts % 1_000_000, len(frame), len(frame)))
        out.append(frame)
    path.write_bytes(b"".join(out))


# --- the server (child process) -------------------------------------------------------------


@dataclass
class Probe:
    """Wraps a real session: times each key to the first non-silent frame after it."""

    session: Any
    latencies: list[tuple[str, float]]
    pending: str = ""
    key_at: float | None = None
    #: Seconds a pulled frame waits before it leaves (0: it leaves at once).
    lead: float = 0.0
    #: Every key with its time.monotonic: on a media process the session's prompts are played
    #: there, and a key's answer is the first prompt frame it reports after the key.
    pressed: list[tuple[str, float]] = field(default_factory=list)

    @property
    def prompts(self) -> Any:
        return self.session.prompts

    def prompting(self, busy: bool) -> None:
        self.session.prompting(busy)

    @property
    def game_id(self) -> str | None:
        value: str | None = self.session.game_id
        return value

    @property
    def seat(self) -> int | None:
        value: int | None = self.session.seat
        return value

    @property
    def spectating(self) -> bool:
        return bool(self.session.spectating)

    async def start(self) -> None:
        await self.session.start()

    def on_key(self, key: str) -> None:
        self.pending = key if self.key_at is None else self.pending + key
        self.key_at = time.perf_counter()
        self.pressed.append((self.pending, time.monotonic()))
        self.session.on_key(key)

    def next_frame(self) -> Any:
        frame = self.session.next_frame()
        if self.key_at is not None and frame is not None and np.any(frame):
            self.latencies.append((self.pending, time.perf_counter() - self.key_at + self.lead))
            self.key_at = None
            self.pending = ""
        return frame

    async def close(self) -> None:
        await self.session.close()


@dataclass(eq=False)
class Seated:
    """A minimal session for the in-process cost of the service path: seated, silent."""

    game_id: str | None
    seat: int | None
    spectating: bool = False

    async def start(self) -> None:
        return None

    def on_key(self, key: str) -> None:
        return None

    def next_frame(self) -> None:
        return None

    async def close(self) -> None:
        return None


@dataclass
class Echo:
    """The baseline handler: each caller hears its own last frame."""

    last: dict[Any, Any] = field(default_factory=dict)

    def on_call_started(self, call: Any) -> None:
        call.set_source(lambda: self.last.get(call))

    def on_dtmf(self, call: Any, digit: str) -> None:
        return None

    def on_audio(self, call: Any, samples: Any) -> None:
        self.last[call] = samples

    def on_call_ended(self, call: Any, reason: Any) -> None:
        self.last.pop(call, None)


def game_plan(callers: int, size: int) -> list[int]:
    """How many load callers each game seats: ``size - 1`` (house 1 is the silent host), the
    last game the rest."""
    seats = size - 1
    return [min(seats, callers - first) for first in range(0, callers, seats)]


def on_node(index: int, count: int, items: int) -> range:
    """Round robin over ``count`` nodes: the games node ``index`` founds (game g on node
    g mod N, so it holds g's lease), and the callers that dial it (caller j, seated in game
    j // seats, on node j mod N: with 3 nodes about 2 in 3 land on a node that does not own
    their game)."""
    return range(index, items, count)


async def _private_games(hub: Any, takers: list[int], size: int) -> list[tuple[str, str]]:
    """Private games of ``size``, one per entry of ``takers`` (the load callers it seats), a
    silent host in house 1 of each (and silent guests in the seats no caller takes, so every
    game starts): (game id, the 16 digits a caller keys to join)."""
    from vollmond.engine.standard import GameOptions  # noqa: PLC0415
    from vollmond.engine.standard.options import Durations  # noqa: PLC0415
    from vollmond.service.invitation_digits import phone_code  # noqa: PLC0415

    durations = Durations(night_s=5.0, morning_s=1.0, day_s=3600.0, vote_s=60.0)
    games = []
    for taking in takers:
        options = GameOptions(players=size, durations=durations)
        founded = await hub.found(options, private=True, host_account_id=None, host_name="b1")
        assert founded.invitation_code is not None
        for extra in range(size - 1 - taking):
            await hub.join(founded.game.id, account_id=None, name=f"b{extra + 2}")
        games.append((founded.game.id, phone_code(founded.invitation_code)))
    return games


@dataclass
class SendRecorder:
    """How late each packet left against the shared clock, and how many frames were due.

    The batched media clock reports every tick (``MediaTicker.observer``, with each packet's
    departure stamped); an older per-endpoint clock (``RtpEndpoint.send_frame``) is wrapped
    instead, so the same benchmark measures the code before the batched clock too."""

    uas: Any
    recording: bool = False
    lateness: list[float] = field(default_factory=list)
    intervals: dict[int, list[float]] = field(default_factory=dict)
    ticks: int = 0
    unsent: int = 0
    trace: list[tuple[float, float]] | None = None

    @property
    def ticker(self) -> Any:
        """The in-process clock (``uas.media.ticker``; ``uas._ticker`` before media backends)."""
        media = getattr(self.uas, "media", None)
        return getattr(media, "ticker", None) or self.uas._ticker

    @property
    def clock(self) -> Any:
        return self.ticker._clock

    def install(self) -> None:
        from vollmond.phone.media import RtpEndpoint  # noqa: PLC0415

        ticker = self.ticker
        if hasattr(ticker, "observer"):
            ticker.stamp = True
            ticker.observer = self._tick
            return
        loop = asyncio.get_running_loop()
        original = RtpEndpoint.send_frame  # type: ignore[attr-defined]

        def timed(endpoint: RtpEndpoint, index: int) -> None:
            original(endpoint, index)
            if self.recording:
                now = loop.time()
                late = now - self.clock.deadline(index)
                self.lateness.append(late)
                self.intervals.setdefault(id(endpoint), []).append(now)

        setattr(RtpEndpoint, "send_frame", timed)  # noqa: B010 - benchmark instrumentation

    def _tick(self, report: Any) -> None:
        if not self.recording:
            return
        self.ticks += 1
        self.unsent += report.unsent
        for row, stamp in enumerate(report.sent_at):
            self.lateness.append(stamp - report.deadline)
            self.intervals.setdefault(row, []).append(stamp)
        if self.trace is not None:
            self.trace.append((report.finished, report.finished - report.deadline))

    def deviations(self) -> list[float]:
        """``|dt - 20 ms|`` between the departures of consecutive ticks per row."""
        # Rows of a batched tick are not calls when calls come and go; the departures of
        # consecutive ticks per row are still 20 ms apart on a steady clock.
        return [
            abs((b - a) - FRAME)
            for stamps in self.intervals.values()
            for a, b in itertools.pairwise(stamps)
        ]

    def stats(
        self, cpu: float, wall: float, calls: int, frames_due: int, sent: int
    ) -> dict[str, Any]:
        """``sent``: packets the ``calls`` up at the window's start sent in it (of
        ``frames_due`` each); the lateness covers every packet, the probes' too."""
        return send_figures(
            self.lateness, self.deviations(), cpu, wall, calls, calls * frames_due, sent
        )


def _window_figures(
    cpu: float, wall: float, calls: int, packets: int, due: int, sent: int
) -> dict[str, Any]:
    """CPU and frames over a window of ``wall`` seconds, however the lateness was taken."""
    return {
        "seconds": wall,
        "cpu_s": cpu,
        "cpu_share": cpu / wall,
        "cpu_per_call_pct": 100 * cpu / wall / max(1, calls),
        "packets": packets,
        "packets_per_s": packets / wall,
        "frames_due": due,
        "frames_sent": sent,
        "frames_not_sent": max(0, due - sent),
        "frames_sent_pct": 100 * sent / max(1, due),
        # CPU per frame the calls sent: the cost, less skewed by a starved window
        "cpu_us_per_frame": 1e6 * cpu / max(1, sent),
    }


def send_figures(
    lateness: Sequence[float],
    deviations: Sequence[float],
    cpu: float,
    wall: float,
    calls: int,
    due: int,
    sent: int,
) -> dict[str, Any]:
    """The send clock's figures over a window of ``wall`` seconds: ``lateness`` of every
    packet sent and ``deviations`` of its intervals (seconds), ``due`` frames for the
    ``calls`` up at the window's start of which they ``sent`` ``sent``, ``cpu`` seconds of the
    server. One process's or, pooled, several nodes' (``cpu``, ``calls``, ``due`` and
    ``sent`` summed, every packet's lateness in one list)."""
    return {
        "calls_sending": calls,
        **_window_figures(cpu, wall, calls, len(lateness), due, sent),
        "late_p50_ms": 1000 * percentile(lateness, 50),
        "late_p95_ms": 1000 * percentile(lateness, 95),
        "late_p99_ms": 1000 * percentile(lateness, 99),
        "late_max_ms": 1000 * max(lateness, default=math.nan),
        "interval_dev_p50_ms": 1000 * percentile(deviations, 50),
        "interval_dev_p99_ms": 1000 * percentile(deviations, 99),
    }


def media_cpu(media: Any) -> float:
    """CPU seconds (user + system) the media processes have used so far (0 without any)."""
    if media is None:
        return 0.0
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for process in media.processes:
        if process.pid is None:
            continue
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def measured_figures(measured: list[Any], cpu: float, wall: float) -> dict[str, Any]:
    """The send figures of a window measured in the media processes: their lateness
    histograms (0.1 ms bins: a percentile is its bin's upper edge) and clock counters pooled.
    Frames due are counted per tick for every call on the clock, so a skipped tick's frames
    are due too; ``missing_blocks``: ticks whose frames the signalling process had not sent in
    time (their calls got silence)."""
    from vollmond.phone.mediaproc.protocol import LATENESS_BIN_S  # noqa: PLC0415

    histogram = np.sum([np.asarray(m.histogram) for m in measured], axis=0)
    response = np.sum([np.asarray(m.response) for m in measured], axis=0)
    counters: dict[str, int] = {}
    for m in measured:
        for key, value in m.counters.items():
            counters[key] = counters.get(key, 0) + value
    total = int(histogram.sum())

    def edge(counts: Any, q: float) -> float:
        cumulative = np.cumsum(counts)
        if not cumulative[-1]:
            return math.nan
        return float((np.searchsorted(cumulative, q / 100 * cumulative[-1]) + 1) * LATENESS_BIN_S)

    due, sent = counters.get("frames_due", 0), counters.get("sent", 0)
    return {
        **_window_figures(cpu, wall, counters.get("calls", 1), total, due, sent),
        "late_p50_ms": 1000 * edge(histogram, 50),
        "late_p95_ms": 1000 * edge(histogram, 95),
        "late_p99_ms": 1000 * edge(histogram, 99),
        # how long after its cue a tick's frames came from the signalling process (the lead
        # allows LEAD_TICKS x 20 ms)
        "frames_after_cue_p50_ms": 1000 * edge(response, 50),
        "frames_after_cue_p99_ms": 1000 * edge(response, 99),
        "frames_after_cue_max_ms": 1000 * edge(response, 100),
        "late_max_ms": 1000 * (int(np.flatnonzero(histogram)[-1]) + 1) * LATENESS_BIN_S
        if total
        else math.nan,
        "late_ticks": counters.get("late_ticks"),
        "skipped_ticks": counters.get("skipped_ticks"),
        "missing_blocks": counters.get("missing_blocks"),
        "late_blocks": counters.get("late_blocks"),
    }


OPERATOR_FILE = """
[sip]
# SIPp places every call from 127.0.0.1, as a SIP trunk would from its proxy.
trusted_proxies = ["127.0.0.1"]
max_calls = 5000
invites_per_second = 1000.0
invite_burst = 1000
requests_per_second = 100000.0
request_burst = 100000

[phone]
# No silence reminders: a load caller waits silently at its table until the game fills, and
# the announcer would otherwise say goodbye after three reminders (8 s each) on a slow fill.
silence_s = 0
"""


def operator_file(media_processes: int, media_priority: int = 0) -> str:
    """The operator file of the product's steps, with its media processes (and their
    real-time priority)."""
    return (
        OPERATOR_FILE + f"media_processes = {media_processes}\nmedia_priority = {media_priority}\n"
    )


@dataclass
class Product:
    """The whole program under uvicorn, as ``vollmond serve`` runs it (the loop is uvloop:
    this process runs under ``uvloop.run``); with ``node``, as ``vollmond serve --nats-url``
    runs one node of several (:func:`vollmond.nodes.serve_node`)."""

    data: Path
    sip_port: int
    port: int = 0
    node: Any = None  # vollmond.nodes.NodeSpec
    host: str = HOST
    media_processes: int = 0
    media_priority: int = 0
    server: Any = None
    task: asyncio.Task[None] | None = None

    async def start(self) -> Any:
        import uvicorn  # noqa: PLC0415

        from vollmond.server import build_app  # noqa: PLC0415
        from vollmond.service.config import Settings  # noqa: PLC0415
        from vollmond.service.logs import configure_logging  # noqa: PLC0415

        config_file = self.data / "vollmond.toml"
        config_file.write_text(operator_file(self.media_processes, self.media_priority))
        settings = Settings.from_env(
            config_file,
            host=self.host,
            port=self.port or free_port(),
            sip_port=self.sip_port,
            data_dir=self.data,
        )
        configure_logging()  # JSON lines on stderr (server.log), as `vollmond serve` logs
        if self.node is None:
            app = build_app(settings)
        else:
            import structlog  # noqa: PLC0415

            from vollmond.nodes import node_hub_maker  # noqa: PLC0415
            from vollmond.server import TELEPHONE  # noqa: PLC0415
            from vollmond.service.web.app import create_app  # noqa: PLC0415

            structlog.contextvars.bind_contextvars(node=self.node.node)
            app = create_app(settings, channels=TELEPHONE, make_hub=node_hub_maker(self.node))
        self.server = uvicorn.Server(
            uvicorn.Config(
                app,
                host=settings.host,
                port=settings.port,
                log_level="warning",
                ws_max_size=8192,
                proxy_headers=False,
                ws_per_message_deflate=False,
            )
        )
        self.task = asyncio.create_task(self.server.serve())
        while not self.server.started:
            if self.task.done():
                self.task.result()
                raise RuntimeError("the server stopped while starting")
            await asyncio.sleep(0.05)
        return app

    async def stop(self) -> None:
        if self.server is not None and self.task is not None:
            self.server.should_exit = True
            await asyncio.wait([self.task], timeout=30)


async def _start(
    args: argparse.Namespace, stack: contextlib.AsyncExitStack, latencies: list[tuple[str, float]]
) -> tuple[Any, Any]:
    """The server under test: the product (mix) or the echo baseline; returns its SipUas and
    its hub (None for the echo)."""
    from vollmond.phone.sip.uas import SipUas, UasConfig  # noqa: PLC0415

    if args.serve != "mix":
        from vollmond.settings.sip import SipSettings  # noqa: PLC0415

        table = tomllib.loads(OPERATOR_FILE)["sip"]  # the product's limits
        limits = SipSettings(**table | {"trusted_proxies": tuple(table["trusted_proxies"])})
        config = UasConfig(
            host=HOST,
            port=args.sip_port,
            ring_time=0.0,
            rtp_timeout=120.0,
            settings=limits,
            media_processes=args.media_processes,
            media_priority=args.media_priority,
        )
        uas = await SipUas.start(config, Echo())
        stack.push_async_callback(uas.close)
        return uas, None
    data = Path(args.data)
    node = node_spec(args)
    product = Product(
        data, args.sip_port, args.port, node, args.host, args.media_processes, args.media_priority
    )
    app = await product.start()
    stack.push_async_callback(product.stop)
    hub, phone = app.state.hub, app.state.phone
    assert phone is not None and phone.uas is not None, "the telephone did not start"
    plan = game_plan(args.calls, args.game_size)
    if node is None:
        games = await _private_games(hub, plan, args.game_size)
        write_codes(data / "codes.csv", caller_codes([code for _, code in games], plan))
    else:  # this node founds its share of the games; the driver gives the callers their codes
        mine = on_node(node.nodes.index(node.node), len(node.nodes), len(plan))
        games = await _private_games(hub, [plan[g] for g in mine], args.game_size)
        founded = [[g, game_id, code] for g, (game_id, code) in zip(mine, games, strict=True)]
        write_atomically(data / "games.json", json.dumps(founded))
    factory = phone.session_factory

    def probing(caller: Any) -> Any:
        session = factory(caller)
        return Probe(session, latencies) if caller.number == "probe" else session

    phone.session_factory = probing
    return phone.uas, hub


def node_spec(args: argparse.Namespace) -> Any:
    """The server's node among several (``--node-id`` and the other options of ``vollmond
    serve --nats-url``), or None for the one-process server."""
    if not args.node_id:
        return None
    from vollmond.nodes import NodeSpec  # noqa: PLC0415

    return NodeSpec.parse(
        args.node_id, args.nodes, args.nats_url, args.nats_namespace, args.ownership
    )


def caller_codes(codes: list[str], plan: list[int]) -> list[str]:
    """Caller j's code (the 16 digits of its game), for every load caller in order."""
    return [code for code, taking in zip(codes, plan, strict=True) for _ in range(taking)]


def write_codes(path: Path, codes: list[str]) -> None:
    """The SIPp injection file: one caller a line, each digit a field."""
    path.write_text("SEQUENTIAL\n" + "".join(";".join(code) + "\n" for code in codes))


def write_atomically(path: Path, text: str) -> None:
    """A file the other side polls for: it appears whole or not at all."""
    part = path.with_suffix(".part")
    part.write_text(text)
    part.replace(path)


async def _seated(
    uas: Any, hub: Any, calls: int, timeout: float, stalled: float = 30.0
) -> tuple[int, int, int]:
    """Wait until every load caller has its seat and every game is in the day, or until that
    made no progress for ``stalled`` seconds (a caller lost on the way leaves its game
    unstarted); returns the callers in a game (seated or not), the callers seated (in a
    started game) and the games in the day."""
    from vollmond.engine.standard.types import Phase  # noqa: PLC0415

    deadline = time.monotonic() + timeout
    progress, last = (-1, -1, -1), time.monotonic()
    while True:
        sessions = [line.session for line in _lines(uas)]
        joined = sum(1 for s in sessions if getattr(s, "game_id", None) is not None)
        seated = sum(1 for s in sessions if getattr(s, "seat", None) is not None)
        games = [a for a in hub.actors.values() if a.state is not None]
        day = sum(1 for a in games if a.state.phase is Phase.DAY)
        now = time.monotonic()
        if (joined, seated, day) != progress:
            progress, last = (joined, seated, day), now
        if (seated >= calls and day == len(games)) or now > deadline or now - last > stalled:
            return joined, seated, day
        await asyncio.sleep(0.2)


def _lines(uas: Any) -> list[Any]:
    handler = uas.handler
    return list(getattr(handler, "lines", {}).values())


async def serve(args: argparse.Namespace) -> None:
    latencies: list[tuple[str, float]] = []
    node = node_spec(args)
    async with contextlib.AsyncExitStack() as stack:
        uas, hub = await _start(args, stack, latencies)
        recorder = SendRecorder(uas, trace=[] if os.environ.get("PHONE_LOAD_TRACE") else None)
        print("ready", flush=True)
        expected = args.calls
        if node is not None:
            expected = len(on_node(node.nodes.index(node.node), len(node.nodes), args.calls))
        reached = await _calls_up(uas, expected, args.setup_timeout)
        joined = seated = day = 0
        if hub is not None:
            joined, seated, day = await _seated(uas, hub, reached, args.setup_timeout)
        media = uas.media if args.media_processes else None
        if media is None:
            recorder.install()
        await _open_window(args, node, {"calls_up": reached, "seated": seated, "day": day})
        relay = getattr(getattr(getattr(uas, "handler", None), "voice_rooms", None), "relay", None)
        relay0 = relay_counts(relay)
        calls = len(uas.calls)
        figures = await _window(args, uas, recorder, media)
        answers = figures.pop("key_latency_media", [])
        stats = {
            "mode": args.serve,
            "calls_wanted": expected,
            "calls_up": reached,
            "calls_at_end": len(uas.calls),
            "calls_at_start": calls,
            "joined": joined,
            "seated": seated,
            "games_in_day": day,
            "load_average": os.getloadavg()[0],
            "media_processes": args.media_processes,
            "media_realtime": bool(media and all(proc.realtime for proc in media.processes)),
            **figures,
            "key_latency": latencies + answers,
        }
        if relay is not None:  # the relay's counters over the window (lines: at its end)
            stats |= {k: v - relay0.get(k, 0) for k, v in relay_counts(relay).items()}
            stats |= {k: relay_counts(relay)[k] for k in ("relayed_lines", "hosted_lines")}
        if node is not None:  # every packet's figures, for the driver to pool over the nodes
            np.save(Path(args.data) / "lateness.npy", np.asarray(recorder.lateness))
            np.save(Path(args.data) / "deviations.npy", np.asarray(recorder.deviations()))
        write_atomically(Path(args.stats), json.dumps(stats))
        if recorder.trace:
            Path(args.stats).with_suffix(".trace.json").write_text(json.dumps(recorder.trace))
        print("done", flush=True)
        await _until_stopped()


def _answers(uas: Any, measured: list[Any]) -> list[tuple[str, float]]:
    """Key to answer on media processes: from each probe's key to the first audible frame of a
    prompt that began after it, as the media process reports it (since it started, as the
    in-process probe counts since the service started)."""
    starts: dict[int, list[float]] = {}
    for m in measured:
        for call, at in m.starts:
            starts.setdefault(call, []).append(at)
    latencies = []
    for line in _lines(uas):
        probe = line.session
        if not isinstance(probe, Probe):
            continue
        began = sorted(starts.get(line.call.media.call, []))
        for label, at in _key_groups(probe.pressed):
            after = [t for t in began if t > at]
            if after:
                latencies.append((label, after[0] - at))
    return latencies


def _key_groups(pressed: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """The probe's keys as the in-process probe labels them: keys pressed within a second of
    each other are one entry (``#1``), timed from its last key."""
    groups: list[tuple[str, float]] = []
    last = -math.inf
    for label, at in pressed:
        key = label[-1:]
        if groups and at - last < 1.0:
            groups[-1] = (groups[-1][0] + key, at)
        else:
            groups.append((key, at))
        last = at
    return groups


async def _window(
    args: argparse.Namespace, uas: Any, recorder: SendRecorder, media: Any
) -> dict[str, Any]:
    """The send figures of the window: from the in-process clock's reports (``recorder``), or
    measured in the media processes (``media``), whose CPU is added to this process's."""
    calls = uas.calls
    sent0 = [call.media.packets_sent for call in calls]
    if media is not None:
        await media.measure(True)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    media_cpu0 = media_cpu(media)
    skipped0 = sum(proc.cues_skipped for proc in media.processes) if media is not None else 0
    index0 = recorder.clock.index if media is None else 0
    profile = os.environ.get("PHONE_LOAD_PROFILE")  # a file for the window's cProfile
    profiler = cProfile.Profile(time.process_time) if profile else None
    recorder.recording = True
    if profiler is not None:
        profiler.enable()
    stalls = _StallProbe()
    await asyncio.sleep(args.seconds)
    stalls.stop()
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(f"{profile}.{args.serve}")
    recorder.recording = False
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    if media is not None:
        media_cpu_s = media_cpu(media) - media_cpu0
        measured = await media.measure(False)
        figures = measured_figures(measured, cpu + media_cpu_s, wall)
        return (
            figures
            | {"key_latency_media": _answers(uas, measured)}
            | stalls.figures()
            | {
                "cues_skipped": sum(proc.cues_skipped for proc in media.processes) - skipped0,
                "calls_sending": len(calls),
                "cpu_signalling_share": cpu / wall,
                "cpu_media_share": media_cpu_s / wall,
            }
        )
    frames_due = recorder.clock.index - index0
    sent = sum(call.media.packets_sent - n for call, n in zip(calls, sent0, strict=True))
    ticker = recorder.ticker
    return (
        recorder.stats(cpu, wall, len(calls), frames_due, sent)
        | stalls.figures()
        | {
            "late_ticks": getattr(ticker, "late_ticks", None),
            "skipped_ticks": getattr(ticker, "skipped_ticks", None),
        }
    )


class _StallProbe:
    """The signalling loop's stalls in the window: how late a 5 ms sleep wakes, and the
    garbage collector's pauses (both are candidates for a late answer to a tick)."""

    def __init__(self) -> None:
        self.lags: list[float] = []
        self.gc_pauses: list[tuple[int, float]] = []
        self._gc_start = 0.0
        gc.callbacks.append(self._gc)
        self._task = asyncio.get_running_loop().create_task(self._watch())

    def _gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_start = time.perf_counter()
        else:
            self.gc_pauses.append((int(info["generation"]), time.perf_counter() - self._gc_start))

    async def _watch(self) -> None:
        while True:
            start = time.perf_counter()
            await asyncio.sleep(0.005)
            self.lags.append(time.perf_counter() - start - 0.005)

    def stop(self) -> None:
        self._task.cancel()
        gc.callbacks.remove(self._gc)

    def figures(self) -> dict[str, Any]:
        lags = sorted(self.lags)
        pauses = [d for _, d in self.gc_pauses]
        return {
            "loop_lag_p99_ms": 1000 * percentile(lags, 99) if lags else None,
            "loop_lag_max_ms": 1000 * max(lags) if lags else None,
            "loop_stalls_over_20ms": sum(1 for lag in lags if lag > 0.020),
            "gc_collections": [sum(1 for g, _ in self.gc_pauses if g == n) for n in range(3)],
            "gc_pause_max_ms": 1000 * max(pauses) if pauses else 0.0,
            "gc_pauses_over_10ms": sum(1 for d in pauses if d > 0.010),
        }


async def _open_window(args: argparse.Namespace, node: Any, setup: dict[str, int]) -> None:
    """Alone, the server opens its window a second after its calls are set up; a node says
    it is set up and waits for the moment the driver opens every node's window at."""
    if node is None:
        await asyncio.sleep(1.0)
        print("window", flush=True)
        return
    data = Path(args.data)
    write_atomically(data / "seated.json", json.dumps(setup))
    await _sleep_until(await _poll_json(data / "go.json", args.setup_timeout))


async def _until_stopped() -> None:
    """Keep answering until the parent says stop, so the callers end cleanly (the nodes are
    stopped with SIGINT, as `vollmond serve` is)."""
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(signum, stop.set)
    await stop.wait()


async def _calls_up(uas: Any, expected: int, timeout: float) -> int:
    """Wait until ``expected`` calls are up, or no new one came for 15 s (calls refused or
    lost: the ones that are up are measured); returns how many are up."""
    deadline = time.monotonic() + timeout
    count, changed = 0, time.monotonic()
    while len(uas.calls) < expected and time.monotonic() < deadline:
        if len(uas.calls) != count:
            count, changed = len(uas.calls), time.monotonic()
        elif count and time.monotonic() - changed > 15.0:
            break
        await asyncio.sleep(0.1)
    return len(uas.calls)


def relay_counts(relay: Any) -> dict[str, int]:
    """The voice relay's lines and counters (vollmond/voice/relay.py): lines relayed from here
    to their game's owner, lines hosted here for other nodes, and the landing buffers' mix
    frames missing at a tick (underruns: the caller hears a gap), late and dropped."""
    if relay is None:
        return {}
    stats = relay.stats()  # the counters go on growing when a line ends: deltas hold
    return {
        "relayed_lines": stats.relayed_lines,
        "hosted_lines": stats.hosted_lines,
        "relay_underruns": stats.underruns,
        "relay_late": stats.late,
        "relay_dropped": stats.dropped,
    }


async def _poll_json(path: Path, timeout: float) -> Any:
    """The JSON of a file the other side writes (write_atomically), once it is there."""
    async with asyncio.timeout(timeout):
        while not path.exists():
            await asyncio.sleep(0.05)
    return json.loads(path.read_text())


async def _sleep_until(wall: float) -> None:
    await asyncio.sleep(max(0.0, wall - time.time()))


# --- the driver -----------------------------------------------------------------------------


def mixer_cost(calls: int, size: int, ticks: int = 500) -> float:
    """CPU microseconds of mixer work per caller per 20 ms tick (push + pull, every source
    speaks, so the limiter works too)."""
    from vollmond.engine.standard.routing import Route  # noqa: PLC0415
    from vollmond.voice.mixer import GameMixer  # noqa: PLC0415

    games = []
    for _ in range(math.ceil(calls / size)):
        mixer = GameMixer(size)
        table: dict[int | str, tuple[Route, ...]] = {
            s: tuple(Route(o, 1.0) for o in range(1, size + 1) if o != s)
            for s in range(1, size + 1)
        }
        table["spectators"] = tuple(Route(o, 1.0) for o in range(1, size + 1))
        mixer.set_routing(table)
        games.append(mixer)
    frame = speechlike(0.02)
    started = time.process_time()
    for _ in range(ticks):
        for mixer in games:
            for seat in range(1, size + 1):
                mixer.push(seat, frame)
            for seat in range(1, size + 1):
                mixer.pull(seat)
    elapsed = time.process_time() - started
    return 1e6 * elapsed / ticks / (len(games) * size)


def service_cost(calls: int, size: int, ticks: int = 300) -> float:
    """CPU microseconds per caller per tick of the whole service path without I/O: each
    line's received frame into its game's mixer (``on_audio``) and its outgoing frame
    (``_frame``: session prompt, room pull, overlay), games in the day (everyone hears
    everyone in the market place)."""
    import random  # noqa: PLC0415

    from vollmond.engine.core import Rejection  # noqa: PLC0415
    from vollmond.engine.ruleset import get_ruleset  # noqa: PLC0415
    from vollmond.engine.standard import GameOptions, apply, new_game  # noqa: PLC0415
    from vollmond.engine.standard.commands import PhaseTimeout  # noqa: PLC0415
    from vollmond.engine.standard.types import Phase  # noqa: PLC0415
    from vollmond.phone.service import Line, PhoneService  # noqa: PLC0415

    @dataclass
    class Actor:
        state: Any
        ruleset: Any = field(default_factory=lambda: get_ruleset("standard"))

        @property
        def options(self) -> Any:
            return self.state.options

        def subscribe(self, subscriber: Any) -> None:
            return None

        def unsubscribe(self, subscriber: Any) -> None:
            return None

    @dataclass(eq=False)
    class FakeCall:
        call_id: str

    rng = random.Random(1)
    actors: dict[str, Actor] = {}
    for g in range(math.ceil(calls / size)):
        state = new_game(GameOptions(players=size), rng).state
        while state.phase is not Phase.DAY:
            outcome = apply(state, PhaseTimeout(state.phase_seq), rng)
            assert not isinstance(outcome, Rejection)
            state = outcome.state
        actors[f"g{g}"] = Actor(state)
    hub: Any = type("FakeHub", (), {"actors": actors, "notices": None})()
    service = PhoneService(hub, lambda caller: Seated(None, None))
    lines = []
    for i in range(calls):
        call: Any = FakeCall(str(i))
        game, seat = divmod(i, size)
        line = Line(call, Seated(f"g{game}", seat + 1), "load")
        service.lines[call] = line
        lines.append(line)
    frame = speechlike(0.02)

    def run(count: int) -> None:
        for _ in range(count):
            for line in lines:
                service.on_audio(line.call, frame)
            for line in lines:
                service._frame(line)

    run(5)
    started = time.process_time()
    run(ticks)
    return 1e6 * (time.process_time() - started) / ticks / calls


_INFO = """
  <send>
    <![CDATA[

      INFO sip:[service]@[remote_ip]:[remote_port] SIP/2.0
      Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
      From: load <sip:load@[local_ip]:[local_port]>;tag=[pid]SIPpTag00[call_number]
      To: <sip:[service]@[remote_ip]:[remote_port]>[peer_tag_param]
      Call-ID: [call_id]
      CSeq: {cseq} INFO
      Max-Forwards: 70
      Content-Type: application/dtmf-relay
      Content-Length: [len]

      Signal={signal}
      Duration=160

    ]]>
  </send>

  <recv response="200"/>
"""


def game_scenario(path: Path, settle_ms: int) -> None:
    """The load caller of the product: ``uac_load.xml`` (INVITE, ACK, audio for the whole
    call, BYE) with keys by SIP INFO after the ACK: guest, join by code (its game's 16 digits
    from the injection file), and ``settle_ms`` later, in the day: ``#3``, ``1#``, ``#4``."""
    keys: list[tuple[str, int]] = [("2", 2500), ("2", 2500)]
    keys += [(f"[field{i}]", 150) for i in range(16)]
    keys += [("#", settle_ms), ("#", 150), ("3", 5000), ("1", 150), ("#", 5000)]
    keys += [("#", 150), ("4", 150)]
    steps = ['  <pause milliseconds="1500"/>']
    for cseq, (key, pause) in enumerate(keys, start=2):
        steps.append(_INFO.format(cseq=cseq, signal=key))
        steps.append(f'  <pause milliseconds="{pause}"/>')
    base = (SCENARIO_DIR / "uac_load.xml").read_text()
    head, tail = base.split("  <pause/>", 1)
    tail = tail.replace("CSeq: 2 BYE", f"CSeq: {len(keys) + 2} BYE")
    path.write_text(head + "\n".join(steps) + "\n  <pause/>" + tail)


def server_command(
    mode: str, calls: int, args: argparse.Namespace, media_processes: int = 0
) -> list[str]:
    """This module as the server of a step (at ``--nice``); the caller adds where it listens
    and keeps its data."""
    return [
        *(["nice", "-n", str(args.nice)] if args.nice else []),
        sys.executable, "-m", "benchmarks.phone_load",
        "--serve", mode,
        "--calls", str(calls),
        "--game-size", str(args.game_size),
        "--seconds", str(args.seconds),
        "--media-processes", str(media_processes),
        "--media-priority", str(args.media_priority),
    ]  # fmt: skip


async def run_step(
    mode: str, calls: int, args: argparse.Namespace, work: Path, media_processes: int = 0
) -> dict[str, Any]:
    step = work / f"{mode}-mp{media_processes}-{calls}"
    step.mkdir()
    sip_port = free_udp_port()
    stats_file = step / "stats.json"
    nice = ["nice", "-n", str(args.nice)] if args.nice else []
    server = await asyncio.create_subprocess_exec(
        *server_command(mode, calls, args, media_processes),
        "--sip-port",
        str(sip_port),
        "--stats",
        str(stats_file),
        "--data",
        str(step),
        stdout=asyncio.subprocess.PIPE,
        stderr=(step / "server.log").open("wb"),
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith(("VOLLMOND_", "DATABASE"))},
            "PYTHONUNBUFFERED": "1",
        },
    )
    assert server.stdout is not None

    output = (step / "server.out").open("a")  # the service's own log lines (stdout)

    async def line(expected: str, timeout: float) -> None:
        assert server.stdout is not None
        async with asyncio.timeout(timeout):
            while True:
                raw = await server.stdout.readline()
                if not raw:
                    log = (step / "server.log").read_text(errors="replace")
                    raise RuntimeError(f"server ended early:\n{log[-3000:]}")
                if raw.decode().strip() == expected:
                    return
                output.write(raw.decode(errors="replace"))

    hold_ms = int(1000 * (calls / args.rate + args.seconds + 40))
    sipp: list[asyncio.subprocess.Process] = []
    try:
        await line("ready", 300)
        write_pcap(step / "load.pcap", 2 * calls / args.rate + args.seconds + 60)
        scenario, inject = SCENARIO_DIR / "uac_load.xml", None
        if mode == "mix":
            scenario, inject = step / "uac_game.xml", step / "codes.csv"
            game_scenario(scenario, int(1000 * (calls / args.rate + 12)))
        sipp.append(await _sipp(step, scenario, sip_port, calls, args.rate, hold_ms, nice, inject))
        await line("window", calls / args.rate + 240)
        load = _CpuShare(sipp[0].pid)  # SIPp's callers, on the same cores
        if mode == "mix" and args.probes:
            probe_dir = step / "probe"
            probe_dir.mkdir()
            probe = SCENARIO_DIR / "uac_probe.xml"
            sipp.append(await _sipp(probe_dir, probe, sip_port, args.probes, 1.0, 0, nice))
        await line("done", args.seconds + 60)
        stats: dict[str, Any] = json.loads(stats_file.read_text())
        stats["load_generator_cpu_share"] = load.share()
    finally:
        server.send_signal(signal.SIGTERM)
        for proc in sipp:
            if proc.returncode is None:
                proc.kill()
            await proc.wait()
        try:
            await asyncio.wait_for(server.wait(), 30)
        except TimeoutError:
            server.kill()
            await server.wait()
        output.close()
    return stats


class _CpuShare:
    """Another process's CPU (all its threads, from /proc) since this was made, in cores."""

    def __init__(self, pid: int) -> None:
        self._pid = pid
        self._cpu, self._wall = self._seconds(), time.perf_counter()

    def _seconds(self) -> float:
        fields = Path(f"/proc/{self._pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def share(self) -> float:
        return (self._seconds() - self._cpu) / (time.perf_counter() - self._wall)


async def _sipp(
    workdir: Path,
    scenario: Path,
    port: int,
    calls: int,
    rate: float,
    hold_ms: int,
    nice: list[str],
    inject: Path | None = None,
) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        *nice,
        "sipp",
        f"{HOST}:{port}",
        "-sf",
        str(scenario),
        *(["-inf", str(inject)] if inject is not None else []),
        "-i",
        HOST,
        "-p",
        str(free_udp_port()),
        "-mi",
        HOST,
        "-mp",
        str(free_udp_port()),
        "-s",
        "1234",
        "-m",
        str(calls),
        "-l",
        str(calls),
        "-r",
        str(rate),
        "-d",
        str(max(hold_ms, 1)),
        "-max_socket",
        "2048",
        "-nostdin",
        "-trace_err",
        cwd=workdir,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=(workdir / "sipp.log").open("wb"),
    )


NODES_SETUP_TIMEOUT_S = 300.0
RELAY_PROBE = "voice_relay.jsonl"


async def run_nodes_step(
    calls: int, count: int, args: argparse.Namespace, work: Path
) -> dict[str, Any]:
    """The product on ``count`` nodes over NATS (benchmarks/nodes.py), each answering SIP on
    its own port: node i founds games i, i + N, ... (it holds their leases) and the load
    callers dial round robin (caller j on node j mod N, SIPp per node at ``--rate`` / N), so
    most of them land on a node that does not own their game and their voice is relayed to
    it. Every node's window opens at the same moment; its figures are pooled (every packet's
    lateness in one list, CPU and frames summed), NATS's and PostgreSQL's CPU read from /proc
    over the window; then, with the callers still up, ``benchmarks.voice_relay --nats-only``
    measures the relay's added delay beside them."""
    step = work / f"nodes{count}-{calls}"
    step.mkdir()
    cluster = Cluster(
        count,
        args.database_url,
        args.nats_url,
        program=server_command("mix", calls, args),
        telephone=True,
        label="phone_load",
        home=step / "nodes",
    )
    plan = game_plan(calls, args.game_size)
    extra = 2 * args.relay_seconds + 30 if args.relay_seconds else 0  # the probe, after it
    hold_ms = int(1000 * (calls / args.rate + args.seconds + 40 + extra))
    nice = ["nice", "-n", str(args.nice)] if args.nice else []
    sipp: list[asyncio.subprocess.Process] = []
    try:
        await cluster.start(logs=True)
        founded: list[list[Any]] = []
        for index in range(count):
            games = cluster.data_dir(index) / "games.json"
            founded += await _poll_json(games, NODES_SETUP_TIMEOUT_S)
        founded.sort()
        assert [g for g, _, _ in founded] == list(range(len(plan))), "a node's games are missing"
        codes = caller_codes([code for _, _, code in founded], plan)
        owners = await cluster.owners([game_id for _, game_id, _ in founded])
        game_of = [g for g, taking in enumerate(plan) for _ in range(taking)]
        on_owner = sum(1 for j, g in enumerate(game_of) if owners[g] == j % count)
        write_pcap(step / "load.pcap", 2 * calls / args.rate + args.seconds + 60 + extra)
        sipp += await _dial_round_robin(step, cluster, codes, args, hold_ms)
        for index in range(count):
            seated = cluster.data_dir(index) / "seated.json"
            await _poll_json(seated, calls / args.rate + 2 * NODES_SETUP_TIMEOUT_S)
        t0 = time.time() + 1.0
        for index in range(count):
            write_atomically(cluster.data_dir(index) / "go.json", json.dumps(t0))
        await _sleep_until(t0)
        engines0 = engines_cpu_seconds()
        await _sleep_until(t0 + args.seconds)
        engines1 = engines_cpu_seconds()
        load = load_average()
        nodes = []
        for index in range(count):
            data = cluster.data_dir(index)
            stats = await _poll_json(data / "stats.json", 60.0)
            stats["lateness"] = np.load(data / "lateness.npy").tolist()
            stats["deviations"] = np.load(data / "deviations.npy").tolist()
            nodes.append(stats)
        relay = await _relay_probe(step, args, nice) if args.relay_seconds else {}
    finally:
        for proc in sipp:
            if proc.returncode is None:
                proc.kill()
            await proc.wait()
        for index, name in enumerate(cluster.names):  # keep the logs (PHONE_LOAD_WORK)
            log = cluster.data_dir(index).parent / "node.log"
            if log.exists():
                shutil.copy2(log, step / f"{name}.log")
        await cluster.remove()
    pooled = pool(nodes)
    seconds = pooled["seconds"]
    engines = {k: engines1[k] - engines0[k] for k in engines1}
    return (
        pooled
        | relay
        | {
            "mode": f"{count} node{'s' if count > 1 else ''}",
            "nodes": count,
            "calls_wanted": calls,
            "owner_share": on_owner / max(1, calls),
            "load_average": load,
            "nats_cpu_share": engines["nats-server"] / seconds,
            "nats_cpu_per_call_pct": 100 * engines["nats-server"] / seconds / max(1, calls),
            "postgres_cpu_share": engines["postgres"] / seconds,
        }
    )


#: Counters a node reports that add up over the nodes.
SUMMED = (
    "calls_up", "calls_at_end", "joined", "seated", "games_in_day", "late_ticks", "skipped_ticks",
    "relayed_lines", "hosted_lines", "relay_underruns", "relay_late", "relay_dropped",
)  # fmt: skip


def pool(nodes: list[dict[str, Any]]) -> dict[str, Any]:
    """The nodes' figures as one server's: every packet's lateness and interval in one list,
    CPU, calls and frames summed over the nodes (their windows are the same), counters summed;
    each node's own few figures under ``per_node``."""
    figures = send_figures(
        [x for n in nodes for x in n["lateness"]],
        [x for n in nodes for x in n["deviations"]],
        cpu=sum(n["cpu_s"] for n in nodes),
        wall=max(n["seconds"] for n in nodes),
        calls=sum(n["calls_sending"] for n in nodes),
        due=sum(n["frames_due"] for n in nodes),
        sent=sum(n["frames_sent"] for n in nodes),
    )
    for key in SUMMED:
        figures[key] = sum(n.get(key) or 0 for n in nodes)
    figures["key_latency"] = [x for n in nodes for x in n["key_latency"]]
    own = ("calls_up", "cpu_share", "late_p99_ms", "frames_not_sent", "relayed_lines")
    figures["per_node"] = [{k: n.get(k) for k in own} for n in nodes]
    return figures


async def _dial_round_robin(
    step: Path, cluster: Cluster, codes: list[str], args: argparse.Namespace, hold_ms: int
) -> list[asyncio.subprocess.Process]:
    """One SIPp per node, for the callers that dial it (``on_node``), each at its share of
    ``--rate``, with the load scenario and each caller's game code."""
    scenario = step / "uac_game.xml"
    game_scenario(scenario, int(1000 * (len(codes) / args.rate + 12)))
    nice = ["nice", "-n", str(args.nice)] if args.nice else []
    sipp = []
    for index, name in enumerate(cluster.names):
        mine = on_node(index, cluster.count, len(codes))
        if not mine:
            continue
        home = step / name
        home.mkdir()
        (home / "load.pcap").symlink_to(step / "load.pcap")
        inject = home / "codes.csv"
        write_codes(inject, [codes[j] for j in mine])
        port, rate = cluster.sip_ports[index], args.rate / cluster.count
        sipp.append(await _sipp(home, scenario, port, len(mine), rate, hold_ms, nice, inject))
    return sipp


async def _relay_probe(step: Path, args: argparse.Namespace, nice: list[str]) -> dict[str, Any]:
    """``benchmarks.voice_relay --nats-only`` on the machine under this step's load (the calls
    are still up): a click from one line heard by another, relayed over NATS, against two
    lines local to the owner. Its own process, outside the nodes' window."""
    out = step / RELAY_PROBE
    probe = await asyncio.create_subprocess_exec(
        *nice,
        sys.executable, "-m", "benchmarks.voice_relay", "--nats-only",
        "--seconds", str(args.relay_seconds),
        "--nats-url", args.nats_url,
        "--json-out", str(out),
        stdout=(step / "voice_relay.out").open("wb"),
        stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    if await probe.wait() != 0 or not out.exists():
        return {}
    line = json.loads(out.read_text().splitlines()[-1])
    local, nats = line["baseline"], line["figures"]["nats"]
    return {
        "relay_local_mean_ms": local["delay_mean_ms"],
        "relay_local_p99_ms": local["delay_p99_ms"],
        **{
            f"relay_{where}_{k}": nats[f"{where}_delay_{k}"]
            for where in ("one_landing", "two_landings")
            for k in ("mean_ms", "p99_ms")
        },
        "relay_clicks_heard": nats["two_landings_clicks_heard"],
    }


def summarise(stats: dict[str, Any]) -> dict[str, Any]:
    keys = stats.pop("key_latency", [])
    by_key: dict[str, list[float]] = {}
    for label, seconds in keys:
        by_key.setdefault(label, []).append(1000 * seconds)
    for label, values in by_key.items():
        stats[f"key_{label}_n"] = len(values)
        stats[f"key_{label}_p50_ms"] = statistics.median(values)
        stats[f"key_{label}_max_ms"] = max(values)
    return stats


def show(rows: list[dict[str, Any]]) -> None:
    columns = [
        ("mode", "mode", "{}"),
        ("calls_up", "calls", "{}"),
        ("seated", "seated", "{}"),
        ("cpu_share", "CPU (cores)", "{:.2f}"),
        ("cpu_per_call_pct", "CPU/call %", "{:.3f}"),
        ("cpu_us_per_frame", "µs/frame", "{:.0f}"),
        ("packets_per_s", "pkts/s out", "{:.0f}"),
        ("late_p50_ms", "late p50 ms", "{:.2f}"),
        ("late_p95_ms", "late p95 ms", "{:.2f}"),
        ("late_p99_ms", "late p99 ms", "{:.2f}"),
        ("frames_not_sent", "not sent", "{}"),
        ("cpu_media_share", "media cores", "{:.2f}"),
        ("missing_blocks", "late mixes", "{}"),
        ("frames_after_cue_p99_ms", "mix p99 ms", "{:.1f}"),
        ("frames_sent_pct", "sent %", "{:.1f}"),
        ("interval_dev_p50_ms", "|Δt-20| p50", "{:.2f}"),
        ("interval_dev_p99_ms", "|Δt-20| p99", "{:.2f}"),
        ("loop_lag_p99_ms", "loop lag p99", "{:.1f}"),
        ("load_generator_cpu_share", "SIPp cores", "{:.2f}"),
    ]
    print("  ".join(f"{title:>12}" for _, title, _ in columns))
    for row in rows:
        cells = (
            fmt.format(row[key]) if row.get(key) is not None else "-" for key, _, fmt in columns
        )
        print("  ".join(f"{cell:>12}" for cell in cells))
    for row in rows:
        keys = {k: v for k, v in row.items() if k.startswith("key_")}
        if keys:
            print(f"{row['mode']} {row['calls_up']}: key-to-first-audio {json.dumps(keys)}")
    for row in rows:
        if "nodes" in row:
            print(node_line(row))
    echo = {r["calls_wanted"]: r for r in rows if r["mode"] == "echo"}
    for row in rows:
        base = echo.get(row["calls_wanted"])
        if row["mode"] != "echo" and base is not None:
            print(
                f"{row['mode']}/echo at {row['calls_wanted']} calls: "
                f"CPU x{row['cpu_s'] / base['cpu_s']:.2f}"
                f", late p99 x{row['late_p99_ms'] / max(base['late_p99_ms'], 1e-6):.2f}"
            )


def node_line(row: dict[str, Any]) -> str:
    """What the nodes add: where the callers landed, the relay, NATS, the relay's delay."""
    line = (
        f"{row['mode']} at {row['calls_wanted']} calls: {row['joined']} in a game, "
        f"{row['seated']} seated, {row['owner_share']:.0%} of the callers on their game's owner, "
        f"{row['relayed_lines']} lines relayed (hosted "
        f"{row['hosted_lines']}), mix frames missing at the landing {row['relay_underruns']} "
        f"(late {row['relay_late']}, dropped {row['relay_dropped']}); NATS "
        f"{row['nats_cpu_share']:.2f} cores = {row['nats_cpu_per_call_pct']:.3f}% per call, "
        f"PostgreSQL {row['postgres_cpu_share']:.2f} cores; load average {row['load_average']:.1f}"
    )
    if "relay_two_landings_mean_ms" in row:
        line += (
            f"; a click relayed over NATS (voice_relay beside the load): two landings mean "
            f"{row['relay_two_landings_mean_ms']:.1f} / p99 {row['relay_two_landings_p99_ms']:.1f}"
            f" ms, one landing {row['relay_one_landing_mean_ms']:.1f} / "
            f"{row['relay_one_landing_p99_ms']:.1f} ms, local {row['relay_local_mean_ms']:.2f} ms"
        )
    per_node = ", ".join(
        f"{n['calls_up']} calls {n['cpu_share']:.2f} cores p99 {n['late_p99_ms']:.1f} ms"
        for n in row["per_node"]
    )
    return f"{line}; per node: {per_node}"


async def drive(args: argparse.Namespace) -> None:
    modes = ["mix", "echo"] if args.mode == "both" else [args.mode]
    if args.media_processes and "mix" in modes:  # the product on the media processes too
        extra = [f"mix+mp{n}" for n in args.media_processes if n]
        modes = [m for m in modes if m != "mix" or 0 in args.media_processes]
        modes = extra + modes
    if args.nodes:  # the product on the nodes (and one such node), beside the echo
        counts = [args.nodes, 1] if args.nodes_baseline else [args.nodes]
        nodes = [f"nodes{n}" for n in counts] if "mix" in modes else []
        modes = nodes + [mode for mode in modes if mode == "echo"]
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="phone_load_") as tmp:
        work = Path(os.environ.get("PHONE_LOAD_WORK") or tmp)
        for calls in (int(c) for c in str(args.calls).split(",")):
            for mode in modes:
                if mode.startswith("nodes"):
                    stats = await run_nodes_step(calls, int(mode[5:]), args, work)
                elif mode.startswith("mix+mp"):
                    stats = await run_step("mix", calls, args, work, int(mode[6:]))
                    stats["mode"] = mode
                else:
                    stats = await run_step(mode, calls, args, work)
                rows.append(summarise(stats))
                if not args.json:
                    print(f"... {mode} {calls}: {rows[-1]['cpu_share']:.2f} cores", flush=True)
    cost = {str(c): mixer_cost(int(c), args.game_size) for c in str(args.calls).split(",")}
    path = {str(c): service_cost(int(c), args.game_size) for c in str(args.calls).split(",")}
    if args.json_out is not None:  # MIX is the figure, ECHO the baseline of the same run
        append_json_line(
            args.json_out,
            "phone_load",
            figures=_figures(rows)
            | {"mixer_us_per_call_tick": cost, "service_us_per_call_tick": path},
            baseline={str(r["calls_wanted"]): r for r in rows if r["mode"] == "echo"},
            parameters={
                "calls": str(args.calls),
                "mode": args.mode,
                "game_size": args.game_size,
                "seconds": args.seconds,
                "rate": args.rate,
                "probes": 0 if args.nodes else args.probes,
                "nodes": args.nodes or None,
                "nodes_baseline": args.nodes_baseline,
                "media_processes": args.media_processes,
                "media_priority": args.media_priority,
                "relay_seconds": args.relay_seconds if args.nodes else None,
            },
        )
    if args.json:
        out = {"steps": rows, "mixer_us_per_call_tick": cost, "service_us_per_call_tick": path}
        print(json.dumps(out, indent=2))
        return
    show(rows)
    for label, micro in cost.items():
        print(
            f"mixer alone at {label} callers (games of {args.game_size}): {micro:.1f} µs per "
            f"caller per tick = {100 * micro * 50 / 1e6:.3f}% of a core per caller"
        )
        print(
            f"service path (mixer + sessions + overlay, no I/O) at {label} callers: "
            f"{path[label]:.1f} µs per caller per tick = {path[label] * 50 / 1e4:.3f}% of a core"
        )


def _figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per step, the product's figures (one process, or the nodes with the one node's beside
    them under ``one_node``; with media processes beside them under ``mix+mpN``)."""
    figures: dict[str, Any] = {}
    for row in rows:
        if row["mode"] == "echo":
            continue
        step = figures.setdefault(str(row["calls_wanted"]), {})
        if row["mode"].startswith("mix+mp"):  # beside the in-process product, under its name
            step[row["mode"]] = row
        elif row.get("nodes") == 1 and step:
            step["one_node"] = row
        else:
            step.update(row)
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", default="300", help="callers per step, e.g. 100,200,300")
    parser.add_argument("--mode", choices=("both", "mix", "echo"), default="both")
    parser.add_argument(
        "--game-size", type=int, default=9, help="seats per game (private rounds: at most 9)"
    )
    parser.add_argument("--seconds", type=float, default=20.0, help="measuring window")
    parser.add_argument("--rate", type=float, default=30.0, help="new calls per second")
    parser.add_argument("--probes", type=int, default=10, help="key-latency probe calls")
    parser.add_argument(
        "--nice",
        type=int,
        default=0,
        help="run server and SIPp at this niceness (e.g. -10 as root on a shared machine)",
    )
    # By default the product's own settings, as `vollmond serve` runs it: one media process
    # at real-time priority 20 (it stays ordinary, with one line in the log, where the
    # machine does not allow it). Until session 14 the default was 0 and 0.
    from vollmond.settings.phone import PhoneSettings  # noqa: PLC0415 - as the server's imports

    product = PhoneSettings()
    parser.add_argument(
        "--media-processes",
        type=lambda text: [int(n) for n in text.split(",")],
        default=[product.media_processes],
        help="the product's media processes per step, e.g. 0,1 (0: in process; beside each "
        f"other, the echo in process; default {product.media_processes}, the product's)",
    )
    parser.add_argument(
        "--media-priority",
        type=int,
        default=product.media_priority,
        help="the media processes' real-time priority (SCHED_RR 1-99; 0: ordinary; default "
        f"{product.media_priority}, the product's)",
    )
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--json-out", type=Path, help="append one JSON line with the figures")
    parser.add_argument(
        "--nodes", type=int, default=0, help="N node processes over NATS (needs --database-url)"
    )
    parser.add_argument(
        "--nodes-baseline", action="store_true", help="with --nodes: the same step on one node"
    )
    parser.add_argument("--database-url", help="with --nodes: a scratch PostgreSQL database")
    parser.add_argument("--nats-url", default=NATS_URL, help="with --nodes: the NATS server")
    parser.add_argument(
        "--relay-seconds",
        type=float,
        default=8.0,
        help="with --nodes: voice_relay's run beside the load after the window (0: none)",
    )
    argv = sys.argv[1:] if argv is None else argv
    if "--serve" in argv:  # the server child process
        args = server_parser().parse_args(argv)
        args.stats = args.stats or str(Path(args.data) / "stats.json")
        import uvloop  # noqa: PLC0415 - the server's loop, as `vollmond serve` runs

        uvloop.run(serve(args))
        return
    args = parser.parse_args(argv)
    if args.nodes and not args.database_url:
        parser.error("--nodes needs --database-url (the nodes share one PostgreSQL database)")
    if args.nodes_baseline and args.nodes < 2:
        parser.error("--nodes-baseline compares --nodes N (2 or more) with one node")
    asyncio.run(drive(args))


def server_parser() -> argparse.ArgumentParser:
    """The server child's options: its step, and where it listens and keeps its data — for a
    node the options of ``vollmond serve --nats-url`` (benchmarks/nodes.py gives them)."""
    parser = argparse.ArgumentParser(description="phone_load's server (internal)")
    parser.add_argument("--serve", choices=("mix", "echo"), required=True)
    parser.add_argument("--calls", type=int, required=True, help="load callers in the step")
    parser.add_argument("--game-size", type=int, required=True)
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--sip-port", type=int, default=0)
    parser.add_argument("--stats", help="the window's figures (default: in the data folder)")
    parser.add_argument("--data", "--data-dir", dest="data", required=True)
    parser.add_argument("--host", default=HOST)
    parser.add_argument("--port", type=int, default=0, help="HTTP (default: any free port)")
    parser.add_argument("--nats-url")
    parser.add_argument("--nats-namespace", default="vollmond")
    parser.add_argument("--node-id", help="a node of several (with the options below)")
    parser.add_argument("--nodes")
    parser.add_argument("--ownership", default="hash")
    parser.add_argument("--setup-timeout", type=float, default=120.0)
    parser.add_argument("--media-processes", type=int, default=0)
    parser.add_argument("--media-priority", type=int, default=0)
    return parser


if __name__ == "__main__":
    main()
