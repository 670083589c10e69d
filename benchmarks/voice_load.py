"""Browser voice load: aiortc peers and SIPp telephone lines in the same games, one mixer.

    .venv/bin/python -m benchmarks.voice_load                   # 40 peers beside 40 lines
    .venv/bin/python -m benchmarks.voice_load --peers 20,40,60 --seconds 20 --json

Each step starts the service in a child process (so its CPU is its own): the real app
(uvicorn, hub, SQLite store, :class:`~vollmond.voice.browser.BrowserVoice`) and the real
:class:`~vollmond.phone.service.PhoneService` sharing its voice rooms. Games of
``--game-size`` are moved to the day (everyone hears everyone: the heaviest routing); in each
game half the seats are telephone lines and half browser peers.

Two runs per step, both with ``N`` telephone lines (SIPp playing speech-like PCMU from a pcap,
as ``benchmarks.phone_load``): LINES (no browser) and BOTH (plus ``N`` browser peers: aiortc
clients in further child processes, each with a WebSocket to the service, signalled as the
page does, sending Opus of a speech-like signal; what a client receives is counted, not decoded,
to keep the load generator light). The service's CPU per peer is ``(BOTH - LINES) / N`` — SRTP
and aiortc's RTP path both ways, Opus decode to 8 kHz, the mixer, Opus encode — and peers per
core is its inverse. Also reported: the
frames each peer got into the mixer and out to its browser per second (50 = real time); a step
where a peer's frames in or out, or a line's, fell below ``REAL_TIME`` per second is flagged
"fell behind" (the service or the load generator could not keep up, so its CPU figure is a
starved one, not a cost), and the CPU the load generators (aiortc clients, SIPp) used in the
same window is reported beside the service's, to show how much of the machine they took.

The service runs on uvloop, as ``vollmond serve`` does (``--loop asyncio`` for the standard
loop). ``--client-procs N`` spreads the aiortc peers over N client processes, so one client's
event loop does not become the bottleneck of a large step. To measure two versions of the
service with the same load generator, point ``VOICE_LOAD_CLIENT_PYTHONPATH`` at the checkout
whose clients should run (the service runs from the current one).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import fractions
import functools
import gc
import json
import math
import os
import signal
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.jsonline import append_json_line
from benchmarks.nodes import free_udp_port
from benchmarks.phone_load import HOST, SCENARIO_DIR, Seated, _sipp, write_pcap

#: Frames per second a peer or line must reach in the window to count as real time (of 50).
REAL_TIME = 48.0

# --- the service (child process) -------------------------------------------------------------


async def day_games(hub: Any, count: int, size: int) -> tuple[list[str], dict[str, list[str]]]:
    """Running games moved to the day, with every seat's token (seat = index + 1)."""
    from vollmond.engine.core import Rejection  # noqa: PLC0415
    from vollmond.engine.standard import GameOptions  # noqa: PLC0415
    from vollmond.engine.standard.commands import PhaseTimeout  # noqa: PLC0415
    from vollmond.engine.standard.options import Durations  # noqa: PLC0415
    from vollmond.engine.standard.types import Phase  # noqa: PLC0415

    durations = Durations(night_s=5.0, morning_s=1.0, day_s=3600.0, vote_s=60.0)
    ids: list[str] = []
    tokens: dict[str, list[str]] = {}
    for _ in range(count):
        options = GameOptions(players=size, durations=durations)
        founded = await hub.found(options, private=False, host_account_id=None, host_name="b1")
        game = founded.game.id
        tokens[game] = [founded.token]
        for i in range(2, size + 1):
            tokens[game].append((await hub.join(game, account_id=None, name=f"b{i}")).token)
        actor = hub.actors[game]
        while actor.state.phase is not Phase.DAY:
            outcome = await hub.submit(game, PhaseTimeout(actor.state.phase_seq))
            assert not isinstance(outcome, Rejection), outcome
        ids.append(game)
    return ids, tokens


async def measure(voice: Any, uas: Any, args: argparse.Namespace) -> dict[str, Any]:
    """The service's CPU in the window, and how many frames each peer that lived through the
    whole window got into the mixer and out to its browser (50 per second is real time)."""
    start = {peer: (peer.frames_in, peer.frames_out) for peer in voice.peers}
    sent = {call: call.media.packets_sent for call in uas.calls}
    profile = cProfile.Profile() if os.environ.get("VOICE_LOAD_PROFILE") else None
    pauses: list[float] = []  # garbage collections in the window, seconds each
    began: list[float] = []

    def collected(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            began[:] = [time.perf_counter()]
        elif began:
            pauses.append(time.perf_counter() - began[0])

    lateness: list[float] = []

    async def probe() -> None:
        """How late a 20 ms timer fires: the event loop's stalls, which cost the clocks ticks."""
        loop = asyncio.get_running_loop()
        while True:
            due = loop.time() + 0.02
            await asyncio.sleep(0.02)
            lateness.append(loop.time() - due)

    gc.callbacks.append(collected)
    prober = asyncio.create_task(probe())
    cpu0, wall0 = time.process_time(), time.perf_counter()
    if profile is not None:
        profile.enable()  # the event loop's thread only (decoding runs in aiortc's threads)
    await asyncio.sleep(args.seconds)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    prober.cancel()
    gc.callbacks.remove(collected)
    if profile is not None:
        profile.disable()
        profile.dump_stats(str(Path(args.stats).with_suffix(".prof")))
    lived = [peer for peer in start if peer in voice.peers]
    count = max(1, len(lived))
    calls = [call for call in uas.calls if call in sent]
    line_out = sum(c.media.packets_sent - sent[c] for c in calls) / wall / max(1, len(calls))
    return {
        "lines_up": len(uas.calls),
        "peers_up": len(voice.peers),
        "peers_lost": len(start) - len(lived),
        "cpu_s": cpu,
        "cpu_share": cpu / wall,
        "peer_frames_in_per_s": sum(p.frames_in - start[p][0] for p in lived) / wall / count,
        "peer_frames_out_per_s": sum(p.frames_out - start[p][1] for p in lived) / wall / count,
        "line_frames_out_per_s": line_out,  # the telephone's clock, for comparison
        "loop_late_max_ms": 1000 * max(lateness, default=0.0),
        "loop_stalls_over_100ms": sum(late > 0.1 for late in lateness),
        "gc_s": sum(pauses),
        "gc_max_ms": 1000 * max(pauses, default=0.0),
        "load_average": os.getloadavg()[0],
    }


async def serve(args: argparse.Namespace) -> None:
    import uvicorn  # noqa: PLC0415

    from vollmond.phone.caller import CallerId  # noqa: PLC0415
    from vollmond.phone.service import PhoneService  # noqa: PLC0415
    from vollmond.phone.sip.uas import UasConfig  # noqa: PLC0415
    from vollmond.service.config import Settings  # noqa: PLC0415
    from vollmond.service.web.app import create_app  # noqa: PLC0415
    from vollmond.settings import SipSettings, WebSettings  # noqa: PLC0415
    from vollmond.settings.voice import VoiceSettings  # noqa: PLC0415
    from vollmond.voice.browser import BrowserVoice  # noqa: PLC0415

    data = Path(args.data)
    # Every benchmark browser comes from one address: lift the per-address socket limit.
    web = WebSettings(ws_connections_per_address=100_000)
    limits = VoiceSettings(max_peers=10_000, connect_timeout_s=300.0)  # one client, many peers
    settings = Settings(data_dir=data / "data", sip_port=0, web=web, voice=limits)
    app = create_app(settings)
    server = uvicorn.Server(
        uvicorn.Config(app, host=HOST, port=args.port, log_level="warning", ws_max_size=8192)
    )
    task = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.05)
    hub = app.state.hub
    voice: BrowserVoice = app.state.voice
    half = args.game_size // 2
    games, seat_tokens = await day_games(hub, math.ceil(args.lines / half), args.game_size)
    # Telephone lines take seats 1..half of each game, browsers the seats half + 1..size.
    tokens = [
        (game, seat_tokens[game][seat - 1])
        for game in games
        for seat in range(half + 1, args.game_size + 1)
    ]
    Path(args.stats).with_suffix(".tokens.json").write_text(json.dumps(tokens))
    seated = 0

    def factory(caller: CallerId) -> Any:
        nonlocal seated
        game, seat = divmod(seated, half)
        seated += 1
        return Seated(games[game % len(games)], seat + 1)

    phone = PhoneService(hub, factory, rooms=voice.rooms)
    # Every SIPp caller comes from one address: lift the per-source limits.
    sip = SipSettings(
        max_calls=10_000,
        max_calls_per_source=10_000,
        invites_per_second=1000.0,
        invite_burst=10_000,
        requests_per_second=10_000.0,
        request_burst=100_000,
    )
    config = UasConfig(
        host=HOST, port=args.sip_port, ring_time=0.0, rtp_timeout=120.0, settings=sip
    )
    uas = await phone.start(config)
    print("ready", flush=True)
    deadline = time.monotonic() + 120
    while (len(uas.calls) < args.lines or len(voice.peers) < args.peers) and (
        time.monotonic() < deadline
    ):
        await asyncio.sleep(0.1)
    await asyncio.sleep(1.0)
    print("window", flush=True)
    stats = await measure(voice, uas, args)
    Path(args.stats).write_text(json.dumps(stats))
    print("done", flush=True)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    await phone.close()
    server.should_exit = True
    await task


# --- the browsers (child process) ------------------------------------------------------------


#: Frames of speech-like Opus each client encodes once and replays (as SIPp replays its pcap).
SPEECH_FRAMES = 150


def speechlike_track() -> Any:
    """A microphone with a speech-like signal (a tone gliding and pulsing), paced in real time:
    3 s of narrowband Opus encoded once per client process and replayed in a loop, so the load
    generator spends nothing on encoding (a real browser sends wideband or fullband Opus, which
    costs the service's decoder somewhat more than this; docs/voice.md)."""
    import av  # noqa: PLC0415
    from aiortc import MediaStreamTrack  # noqa: PLC0415

    time_base = fractions.Fraction(1, 8000)

    class Speech(MediaStreamTrack):
        kind = "audio"

        def __init__(self) -> None:
            super().__init__()
            self.index = 0
            self.start: float | None = None

        async def recv(self) -> Any:
            loop = asyncio.get_running_loop()
            self.start = self.start or loop.time()
            await asyncio.sleep(max(0.0, self.start + self.index * 0.02 - loop.time()))
            speech = speech_packets()
            packet = av.Packet(speech[self.index % len(speech)])
            packet.pts = self.index * 160
            packet.time_base = time_base
            self.index += 1
            return packet

    return Speech()


async def browsers(args: argparse.Namespace) -> None:
    from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription  # noqa: PLC0415
    from aiortc.mediastreams import MediaStreamError  # noqa: PLC0415
    from websockets.asyncio.client import connect  # noqa: PLC0415

    from vollmond.voice.webrtc import decode_inline  # noqa: PLC0415

    seats: list[tuple[str, str]] = [tuple(s) for s in json.loads(Path(args.tokens).read_text())]
    keep: list[Any] = []

    async def drain(track: Any) -> None:
        with contextlib.suppress(MediaStreamError):
            while True:
                await track.recv()  # only G.711 would come this way

    def heard(pc: Any, track: Any) -> None:
        """What the service sends is counted, not decoded: decoding it would only load the
        machine the service is measured on (its frames out are counted by the service)."""
        for transceiver in pc.getTransceivers():
            if transceiver.receiver.track is track:
                decode_inline(transceiver.receiver, None)
        keep.append(asyncio.ensure_future(drain(track)))

    async def one(game: str, token: str) -> None:
        ws = await connect(f"ws://{HOST}:{args.port}/ws", max_size=2**20)
        await ws.send(json.dumps({"type": "hello", "game": game, "token": token}))
        pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
        pc.addTransceiver(speechlike_track(), direction="sendrecv")
        pc.on("track", lambda track: heard(pc, track))
        await pc.setLocalDescription(await pc.createOffer())
        await ws.send(json.dumps({"type": "voice_offer", "sdp": pc.localDescription.sdp}))
        while True:
            frame = json.loads(await ws.recv())
            if frame["type"] == "voice_answer":
                break
            if frame["type"] == "error":
                raise RuntimeError(frame)
        await pc.setRemoteDescription(RTCSessionDescription(frame["sdp"], "answer"))

        async def read() -> None:
            with contextlib.suppress(Exception):
                while True:
                    await ws.recv()

        keep.extend([pc, ws, asyncio.ensure_future(read())])

    index, procs = (int(part) for part in str(args.slice).split("/"))
    for game, token in seats[: args.peers][index::procs]:
        await one(game, token)
    print("up", flush=True)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()


@functools.cache
def speech_packets() -> list[bytes]:
    """The speech-like signal as narrowband Opus packets, one per 20 ms."""
    from vollmond.voice.opus import NarrowbandEncoder  # noqa: PLC0415

    encoder = NarrowbandEncoder()
    n = np.arange(SPEECH_FRAMES * 160) / 8000
    envelope = 0.5 + 0.5 * np.sin(2 * np.pi * 3 * n)
    wave = (5000 * envelope * np.sin(2 * np.pi * (300 + 200 * np.sin(n)) * n)).astype(np.int16)
    return [encoder.encode(frame) for frame in np.split(wave, SPEECH_FRAMES)]


# --- the driver -----------------------------------------------------------------------------


def free_tcp_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


def proc_cpu_s(pid: int) -> float:
    """CPU seconds (user + system, all threads) a live process has used, from /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _child(step: Path, name: str, *argv: str) -> asyncio.subprocess.Process:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    client_path = os.environ.get("VOICE_LOAD_CLIENT_PYTHONPATH")
    cwd = None
    if client_path and "--browsers" in argv:
        env["PYTHONPATH"] = cwd = client_path  # -m looks in the working directory first
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "benchmarks.voice_load",
        *argv,
        stdout=asyncio.subprocess.PIPE,
        stderr=(step / f"{name}.log").open("wb"),
        env=env,
        cwd=cwd,
    )


async def _line(proc: asyncio.subprocess.Process, expected: str, timeout: float, log: Path) -> None:
    assert proc.stdout is not None
    async with asyncio.timeout(timeout):
        while True:
            raw = await proc.stdout.readline()
            if not raw:
                raise RuntimeError(f"child ended early:\n{log.read_text(errors='replace')[-3000:]}")
            if raw.decode().strip() == expected:
                return


async def _stop(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        proc.send_signal(signal.SIGTERM)
    try:
        await asyncio.wait_for(proc.wait(), 30)
    except TimeoutError:
        proc.kill()
        await proc.wait()


async def run_step(
    n: int, with_peers: bool, args: argparse.Namespace, work: Path
) -> dict[str, Any]:
    step = work / f"{'both' if with_peers else 'lines'}-{n}"
    step.mkdir()
    port, sip_port = free_tcp_port(), free_udp_port()
    stats_file = step / "stats.json"
    peers = n if with_peers else 0
    server = await _child(
        step,
        "server",
        "--serve",
        *("--port", str(port), "--sip-port", str(sip_port), "--lines", str(n)),
        *("--peers", str(peers), "--game-size", str(args.game_size)),
        *("--seconds", str(args.seconds), "--stats", str(stats_file), "--data", str(step)),
        *("--loop", args.loop),
    )
    others: list[asyncio.subprocess.Process] = []
    try:
        await _line(server, "ready", 300, step / "server.log")
        write_pcap(step / "load.pcap", n / args.rate + args.seconds + 60)
        hold_ms = int(1000 * (n / args.rate + args.seconds + 120))
        load = SCENARIO_DIR / "uac_load.xml"
        others.append(await _sipp(step, load, sip_port, n, args.rate, hold_ms, []))
        if peers:
            tokens = stats_file.with_suffix(".tokens.json")
            procs = max(1, min(args.client_procs, peers))
            clients = [
                await _child(
                    step,
                    f"browsers{i}",
                    "--browsers",
                    *("--port", str(port), "--tokens", str(tokens), "--peers", str(peers)),
                    *("--slice", f"{i}/{procs}"),
                )
                for i in range(procs)
            ]
            others.extend(clients)
            for i, client in enumerate(clients):
                await _line(client, "up", 300, step / f"browsers{i}.log")
        await _line(server, "window", 300, step / "server.log")
        load0 = sum(proc_cpu_s(proc.pid) for proc in others)
        began = time.perf_counter()
        await _line(server, "done", args.seconds + 60, step / "server.log")
        load1, window = sum(proc_cpu_s(p.pid) for p in others), time.perf_counter() - began
        stats: dict[str, Any] = json.loads(stats_file.read_text())
        stats["generator_cores"] = (load1 - load0) / window
    finally:
        for proc in others:
            await _stop(proc)
        await _stop(server)
    stats["mode"] = "both" if with_peers else "lines"
    stats["n"] = n
    return stats


async def drive(args: argparse.Namespace) -> None:
    rows: list[dict[str, Any]] = []
    summary: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="voice_load_") as tmp:
        work = Path(os.environ.get("VOICE_LOAD_WORK") or tmp)
        for n in (int(c) for c in str(args.peers).split(",")):
            lines = await run_step(n, False, args, work)
            both = await run_step(n, True, args, work)
            rows += [lines, both]
            per_peer = (both["cpu_share"] - lines["cpu_share"]) / max(1, both["peers_up"])
            per_line = lines["cpu_share"] / max(1, lines["lines_up"])
            rates = [
                both["peer_frames_in_per_s"],
                both["peer_frames_out_per_s"],
                both["line_frames_out_per_s"],
                lines["line_frames_out_per_s"],
            ]
            summary.append(
                {
                    "n": n,
                    "lines_up": both["lines_up"],
                    "peers_up": both["peers_up"],
                    "peers_lost": both["peers_lost"],
                    "lines_cores": lines["cpu_share"],
                    "both_cores": both["cpu_share"],
                    "cpu_per_peer_pct": 100 * per_peer,
                    "peers_per_core": 1 / per_peer if per_peer > 0 else math.inf,
                    "cpu_per_line_pct": 100 * per_line,
                    "lines_per_core": 1 / per_line if per_line > 0 else math.inf,
                    "peer_frames_in_per_s": both["peer_frames_in_per_s"],
                    "peer_frames_out_per_s": both["peer_frames_out_per_s"],
                    "line_frames_out_per_s": both["line_frames_out_per_s"],
                    "loop_late_max_ms": both["loop_late_max_ms"],
                    "loop_stalls_over_100ms": both["loop_stalls_over_100ms"],
                    "gc_s": both["gc_s"],
                    "gc_max_ms": both["gc_max_ms"],
                    "fell_behind": min(rates) < REAL_TIME or both["peers_up"] < n,
                    "generator_cores": both["generator_cores"],
                    "load_average": both["load_average"],
                    "loop": args.loop,
                }
            )
            if not args.json:
                print(json.dumps(summary[-1]), flush=True)
    if args.json_out:
        # The baseline of each step is the same run's telephone lines alone (in `summary`).
        parameters = {k: getattr(args, k) for k in ("peers", "game_size", "seconds", "rate")}
        append_json_line(
            args.json_out,
            "voice_load",
            figures={"summary": summary},
            baseline={},
            parameters={**parameters, "client_procs": args.client_procs, "loop": args.loop},
        )
    if args.json:
        print(json.dumps({"steps": rows, "summary": summary}, indent=2))
        return
    for s in summary:
        print(
            f"{s['peers_up']} peers beside {s['lines_up']} lines ({s['peers_lost']} peers lost in "
            f"the window): service {s['lines_cores']:.2f} cores with the "
            f"lines alone, {s['both_cores']:.2f} with the peers too; a peer costs "
            f"{s['cpu_per_peer_pct']:.2f}% of a core = {s['peers_per_core']:.0f} peers per core "
            f"(a line {s['cpu_per_line_pct']:.2f}% = {s['lines_per_core']:.0f} per core); peer "
            f"frames in/out per s: {s['peer_frames_in_per_s']:.1f}/"
            f"{s['peer_frames_out_per_s']:.1f}, "
            f"a line's out: {s['line_frames_out_per_s']:.1f}"
            f"{' — FELL BEHIND real time, not a valid cost' if s['fell_behind'] else ''}; "
            f"event loop late up to {s['loop_late_max_ms']:.0f} ms "
            f"({s['loop_stalls_over_100ms']} stalls > 100 ms), garbage collection "
            f"{s['gc_s']:.2f} s (longest {s['gc_max_ms']:.0f} ms); "
            f"load generators {s['generator_cores']:.2f} cores; load average "
            f"{s['load_average']:.1f}; {s['loop']}"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peers", default="40", help="peers (and as many lines) per step")
    parser.add_argument("--game-size", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=20.0, help="measuring window")
    parser.add_argument("--rate", type=float, default=20.0, help="new calls per second")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--json-out", type=Path, help="append one JSON line to this file")
    parser.add_argument("--loop", choices=("uvloop", "asyncio"), default="uvloop")
    parser.add_argument("--client-procs", type=int, default=1, help="aiortc client processes")
    # internal: the child processes
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--browsers", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--sip-port", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--lines", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--tokens", help=argparse.SUPPRESS)
    parser.add_argument("--stats", help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    parser.add_argument("--slice", default="0/1", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        args.peers = int(str(args.peers))
        if args.loop == "uvloop":
            import uvloop  # noqa: PLC0415 - the service's loop (vollmond serve)

            uvloop.run(serve(args))
        else:
            asyncio.run(serve(args))
    elif args.browsers:
        args.peers = int(str(args.peers))
        asyncio.run(browsers(args))
    else:
        asyncio.run(drive(args))


if __name__ == "__main__":
    main()
