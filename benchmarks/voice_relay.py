"""What the voice relay adds to a caller's mouth-to-ear delay: relayed lines against local ones.

    .venv/bin/python -m benchmarks.voice_relay [--seconds 10] [--prefill 1]
        [--nats-url nats://127.0.0.1:4222] [--nats-only] [--json-out FILE]

One real game (4 seats, by day: everyone hears everyone) on an owner's hub (SQLite in a
temporary folder). A speaker line sends a 20 ms frame every tick of its own 20 ms clock — a
click every 10th frame, silence otherwise — and a listener line pulls its room audio every
tick of the same clock, as the media clock of the process the call landed on does. The delay
of a click is the time from handing its frame to the line until the listener's pull returns
it (what the media clock would send next; the RTP legs are the same in both cases and left
out). Three runs, in one uvloop process, each for `--seconds`:

- baseline: both lines local on the owner (a call on the worker that owns its game);
- local bus: the lines on landing processes (other connections to the supervisor's broker,
  which runs in a process of its own, as with ``--workers``): each tick's record to the owner,
  its mix back into the landing's jitter buffer of `--prefill` frames;
- NATS: the same over the NATS server (nodes).

`--nats-only` leaves the local bus out (the baseline's hub is then on NATS, which its two
local lines never use): `phone_load --nodes` runs it so beside its loaded nodes.

Each relayed run is split: both lines on one landing (one media clock), then the speaker and
the listener on two landings whose clocks run 1, 5, 9, 13 and 17 ms apart — two processes'
clocks have an unrelated phase, and the listener's line waits for its own clock's tick (the
mean per phase is printed too).
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from benchmarks.jsonline import append_json_line
from benchmarks.transport import on_uvloop, run_broker
from vollmond.engine.ruleset import get_ruleset
from vollmond.engine.standard.commands import PhaseTimeout
from vollmond.engine.standard.types import Phase
from vollmond.service.shards.localbus import LocalTransport
from vollmond.service.shards.natsbus import NatsTransport
from vollmond.service.shards.sharded_hub import ShardedHub
from vollmond.service.shards.transport import Transport
from vollmond.store import open_store
from vollmond.voice.frames import FRAME_SAMPLES, Int16Array
from vollmond.voice.relay import RelayedLine, VoiceRelay
from vollmond.voice.rooms import Room, VoiceRooms

T = TypeVar("T")
Connect = Callable[[], Awaitable[Transport]]
TICK_S = 0.02
CLICK_EVERY = 10  # ticks: a click every 200 ms, far more than any delay measured
WARM_UP_TICKS = 20  # relayed lines: the owner takes them up, no click counted meanwhile
SPEAKER, LISTENER = 1, 2
#: The landing clock's phases after the owner's relay clock (ms): two processes' 20 ms clocks
#: have an unrelated phase, and the delay depends on it (the figures average over these).
PHASES_MS = (1, 5, 9, 13, 17)


class Owner:
    def owner_of(self, game_id: str) -> str:
        return "w0"


class NoGames:
    def __init__(self) -> None:
        self.actors: dict[str, Any] = {}


async def _clicks(
    push: Callable[[Int16Array], None],
    pull: Callable[[], Int16Array | None],
    seconds: float,
    start: float | None = None,
) -> list[float | None]:
    """Run the landing's 20 ms clock (from `start`, perf_counter): push a frame, pull the
    listener's; the click delays."""
    click = np.full(FRAME_SAMPLES, 4000, dtype=np.int16)
    silence = np.zeros(FRAME_SAMPLES, dtype=np.int16)
    delays: list[float | None] = []  # None: a click not heard before the next one
    sent: float | None = None
    if start is not None:
        await asyncio.sleep(max(0.0, start - time.perf_counter()))
    start = time.perf_counter()
    k = 0
    while time.perf_counter() - start < seconds:
        if k % CLICK_EVERY == 0:
            if sent is not None:
                delays.append(None)
            sent = None if k == 0 else time.perf_counter()  # the first one starts the buffers
            push(click)
        else:
            push(silence)
        frame = pull()
        if sent is not None and frame is not None and int(np.max(frame)) > 1000:
            delays.append(time.perf_counter() - sent)
            sent = None
        k = _next_tick(start, k)
        await asyncio.sleep(max(0.0, start + k * TICK_S - time.perf_counter()))
    if sent is not None:
        delays.append(None)
    return delays


def _next_tick(start: float, k: int) -> int:
    """The tick after `k` — or, after a stall, the tick due now: the ticks missed are skipped,
    as the media clock skips them (vollmond/phone/media.py), not made up in a burst."""
    return max(k + 1, int((time.perf_counter() - start) / TICK_S))


def _figures(delays: list[float | None]) -> dict[str, float]:
    ms = sorted(d * 1000 for d in delays if d is not None)
    q = statistics.quantiles(ms, n=100, method="inclusive") if len(ms) > 1 else ms * 99
    return {
        "delay_mean_ms": statistics.fmean(ms),
        "delay_p50_ms": q[49],
        "delay_p99_ms": q[98],
        "delay_max_ms": ms[-1],
        "clicks_heard": len(ms) / len(delays),
    }


async def _day_game(hub: ShardedHub) -> str:
    options = get_ruleset("standard").decode_options({"players": 4, "world": "werwolf"})
    game = (await hub.found(options, private=False, host_account_id=None)).game.id
    for name in "ABCD":
        await hub.join(game, account_id=None, name=name)
    actor = hub.actors[game]
    while actor.state is not None and actor.state.phase is not Phase.DAY:
        await hub.submit(game, PhaseTimeout(actor.state.phase_seq))
    return game


async def _measure(connect: Connect, seconds: float, prefill: int, relayed: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="vollmond-bench-relay-") as folder:
        async with open_store(f"sqlite+aiosqlite:///{folder}/db") as store:
            owner_bus = await connect()
            hub = ShardedHub(store, node="w0", ownership=Owner(), transport=owner_bus)
            await hub.serve_calls()
            rooms = VoiceRooms(hub)
            landing_bus = await connect()
            try:
                game = await _day_game(hub)
                if not relayed:
                    room = rooms.room_for(game)
                    assert isinstance(room, Room)
                    rooms.attach("listener", room)

                    def push_local(frame: Int16Array) -> None:
                        room.mixer.push(SPEAKER, frame)

                    delays = await _clicks(
                        push_local, lambda: room.mixer.pull(LISTENER, puller="listener"), seconds
                    )
                    return _figures(delays)
                hosting = VoiceRelay("w0", owner_bus, rooms, Owner().owner_of, prefill=prefill)
                await hosting.start()
                other_bus = await connect()
                landings = (
                    VoiceRelay("w1", landing_bus, VoiceRooms(NoGames()), Owner().owner_of,
                               prefill=prefill),
                    VoiceRelay("w2", other_bus, VoiceRooms(NoGames()), Owner().owner_of,
                               prefill=prefill),
                )  # fmt: skip
                for landing in landings:
                    await landing.start()
                try:
                    return await _phases(hosting, landings, game, seconds)
                finally:
                    for landing in landings:
                        await landing.close()
                    await hosting.close()
                    await other_bus.close()
            finally:
                rooms.close()
                await hub.close()
                await landing_bus.close()


async def _phases(
    owner: VoiceRelay, landings: tuple[VoiceRelay, VoiceRelay], game: str, seconds: float
) -> dict[str, Any]:
    """The relayed lines' clicks: both lines on one landing process (one clock), then on two
    landing processes whose clocks run PHASES_MS apart."""
    results: dict[str, Any] = {}
    runs = [(0, 0.0), *((1, p / 1000) for p in PHASES_MS)]
    share = seconds / len(runs)
    for index, (listener_at, phase) in enumerate(runs):
        speaker = landings[0].link(("speaker", index), game, SPEAKER)
        listener = landings[listener_at].link(("listener", index), game, LISTENER)
        delays = await _two_clocks(speaker, listener, share, phase)
        name = "one_landing" if listener_at == 0 else "two_landings"
        results.setdefault(name, []).extend(delays)
        for what, count in (
            ("underruns", listener.down.underruns),
            ("landing_dropped", listener.down.dropped),
            ("landing_late", listener.down.late),
        ):
            results[f"{name}_{what}"] = results.get(f"{name}_{what}", 0) + count
        heard = [d for d in delays if d is not None]
        if listener_at:
            results[f"two_landings_mean_ms_at_phase_{int(phase * 1000)}"] = (
                statistics.fmean(heard) * 1000 if heard else float("nan")
            )
        landings[0].unlink(("speaker", index))
        landings[listener_at].unlink(("listener", index))
    room = owner.rooms.room_for(game)
    if room is not None:  # the owner's mixer: frames skipped (catch-up) or dropped (queue full)
        results["owner_mixer_skipped"] = room.mixer.skipped
        results["owner_mixer_overflowed"] = room.mixer.overflowed
    one = _figures(results.pop("one_landing"))
    two = _figures(results.pop("two_landings"))
    figures = {f"one_landing_{k}": v for k, v in one.items()}
    figures.update({f"two_landings_{k}": v for k, v in two.items()})
    figures.update(results)
    return figures


async def _two_clocks(
    speaker: RelayedLine, listener: RelayedLine, seconds: float, phase: float
) -> list[float | None]:
    """The speaker's clock pushes a click every CLICK_EVERY ticks (silence otherwise) and
    pulls its line; the listener's clock, `phase` seconds later (0: the same clock, the
    listener pulled right after the speaker), pulls the listener's line."""
    click = np.full(FRAME_SAMPLES, 4000, dtype=np.int16)
    silence = np.zeros(FRAME_SAMPLES, dtype=np.int16)
    delays: list[float | None] = []  # None: a click not heard before the next one
    sent: list[float | None] = [None]
    start = time.perf_counter() + TICK_S

    def hear() -> None:
        frame = listener.pull()
        if sent[0] is not None and frame is not None and int(np.max(frame)) > 1000:
            delays.append(time.perf_counter() - sent[0])
            sent[0] = None

    async def speak() -> None:
        k = 0
        while (now := time.perf_counter()) - start < seconds:
            await asyncio.sleep(max(0.0, start + k * TICK_S - now))
            k = _next_tick(start, k - 1)
            if k % CLICK_EVERY == 0 and k >= WARM_UP_TICKS:
                if sent[0] is not None:
                    delays.append(None)
                sent[0] = time.perf_counter()
                speaker.push(SPEAKER, click)
            else:
                speaker.push(SPEAKER, silence)
            speaker.pull()
            if not phase:
                hear()
            k += 1

    async def listen() -> None:
        k = 0
        while (now := time.perf_counter()) - start < seconds:
            await asyncio.sleep(max(0.0, start + phase + k * TICK_S - now))
            k = _next_tick(start + phase, k - 1)
            hear()
            k += 1

    await asyncio.gather(speak(), *([listen()] if phase else []))
    if sent[0] is not None:
        delays.append(None)
    return delays


def _on_local_bus(seconds: float, prefill: int) -> dict[str, dict[str, Any]]:
    """The local line (the baseline) and the relay over the supervisor's broker of
    `--workers`, run in a process of its own."""
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="vollmond-bench-bus-") as folder:
        path = str(Path(folder) / "bus.sock")
        context = multiprocessing.get_context("spawn")
        ready = context.Event()
        broker = context.Process(target=run_broker, args=(path, ready), daemon=True)
        broker.start()
        try:
            if not ready.wait(30):
                raise SystemExit("the local broker did not start")

            def local() -> Awaitable[Transport]:
                return LocalTransport.connect(path)

            results["local_line"] = on_uvloop(_measure(local, seconds, prefill, False))
            results["local_bus"] = on_uvloop(_measure(local, seconds, prefill, True))
        finally:
            broker.terminate()
            broker.join()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)  # about 45 s in all
    parser.add_argument("--prefill", type=int, default=1)
    parser.add_argument("--nats-url", default="nats://127.0.0.1:4222")
    parser.add_argument(
        "--nats-only",
        action="store_true",
        help="the local line and NATS only, no local bus (phone_load --nodes runs it so)",
    )
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()

    results: dict[str, dict[str, Any]] = {}
    namespace = f"bench{uuid.uuid4().hex}"

    def nats() -> Awaitable[Transport]:
        return NatsTransport.connect(args.nats_url, namespace=namespace)

    if args.nats_only:  # the baseline's hub on NATS too: its two lines never touch the bus
        results["local_line"] = on_uvloop(_measure(nats, args.seconds, args.prefill, False))
    else:
        results |= _on_local_bus(args.seconds, args.prefill)
    results["nats"] = on_uvloop(_measure(nats, args.seconds, args.prefill, True))
    base = results["local_line"]
    print("local line (baseline): " + ", ".join(f"{k} {v:.2f}" for k, v in base.items()))
    print(f"{'relayed':44}{'local bus':>12}{'NATS':>12}")
    for key in results["nats"]:
        row = [results.get(name, {}).get(key, float("nan")) for name in ("local_bus", "nats")]
        print(f"{key:44}" + "".join(f"{value:12.2f}" for value in row))
    for name in (name for name in ("local_bus", "nats") if name in results):
        for where in ("one_landing", "two_landings"):
            added = results[name][f"{where}_delay_mean_ms"] - base["delay_mean_ms"]
            print(f"added by the relay ({name}, {where}): {added:.1f} ms mean")
    if args.json_out is not None:
        append_json_line(
            args.json_out,
            "voice_relay",
            figures={name: results[name] for name in ("local_bus", "nats") if name in results},
            baseline=results["local_line"],
            parameters={
                "seconds": args.seconds,
                "prefill": args.prefill,
                "nats_only": args.nats_only,
            },
        )


if __name__ == "__main__":
    main()
