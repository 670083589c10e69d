"""The media process's 20 ms tick alone: CPU per tick of a :class:`MediaWorker` with many calls
in day-time rooms, some of them hearing a prompt, on real UDP sockets, without the clock.

    .venv/bin/python -m benchmarks.media_worker_tick                      # 300 calls
    .venv/bin/python -m benchmarks.media_worker_tick --calls 300 --ticks 1000 --json-out r.jsonl
    PYTHONPATH=/path/to/other/tree python benchmarks/media_worker_tick.py   # another tree

The worker is built as the signalling process builds it, through its control messages
(``open``, ``start``, ``G`` gains, ``route``, ``C`` clips, ``play``): ``--calls`` calls on
127.0.0.1 sending to one sink socket (drained between ticks, outside the measured part), in
rooms of ``--game-size`` seats where house 1 is a silent host and every caller hears everyone
(the day: the heaviest routing, as in ``phone_load``), and every ``--prompt-every``-th call
hears a prompt over its room (a 2 s clip, played again when it ends). Before each tick every
call's RTP packet of speech-like audio is handed to the clock as received (so the tick decodes
it and pushes it into its room); then the clock's ``tick`` runs — decode, push, every call's
frame, encode, ``sendto`` — and the worker's end of tick (the ``A`` block to the signalling
side, into a writer that discards it). The figure is ``time.process_time`` per tick (mean and
median), and how long after the tick's start its first and last packet left (the lateness a
tick adds on an idle machine); the clock itself never sleeps here. Run it with another tree on
``PYTHONPATH`` for the baseline (the script names only what both trees have).
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.jsonline import append_json_line
from benchmarks.media_tick import drain
from vollmond.engine.ruleset import SPECTATORS
from vollmond.phone.g711 import ULAW
from vollmond.phone.media import MediaParams, TickReport
from vollmond.phone.mediaproc import protocol as p
from vollmond.phone.mediaproc.worker import MediaWorker
from vollmond.phone.rtp import RtpClock
from vollmond.voice.mixer import gain_matrix

HOST = "127.0.0.1"


class _Discard:
    """The control channel's writer: what the worker sends is dropped."""

    def write(self, data: bytes) -> None:
        del data

    def is_closing(self) -> bool:
        return False


class _Route:
    def __init__(self, source: int) -> None:
        self.source, self.gain = source, 1.0


def speechlike(samples: int, seed: int) -> np.ndarray[Any, np.dtype[np.int16]]:
    """Harmonics under a syllable-rate envelope, phase-shifted per call (never silent)."""
    t = (np.arange(samples) + 37 * seed) / 8000
    carrier = sum(np.sin(2 * np.pi * f * t) / k for k, f in enumerate((180, 360, 540, 900), 1))
    envelope = 0.55 + 0.45 * np.sin(2 * np.pi * 4.0 * t)
    return (3500 * carrier * envelope).astype(np.int16)


async def build(
    calls: int, seats: int, prompt_every: int
) -> tuple[MediaWorker, socket.socket, list[bytes]]:
    """A worker with ``calls`` started calls in rooms, routed and (some) playing a prompt."""
    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sink.bind((HOST, 0))
    sink.setblocking(False)
    worker = MediaWorker(_Discard())  # type: ignore[arg-type]
    per_room = seats - 1  # house 1 is the silent host
    day = {
        house: tuple(_Route(s) for s in range(1, seats + 1) if s != house)
        for house in range(1, seats + 1)
    }
    day[SPECTATORS] = tuple(_Route(s) for s in range(1, seats + 1))  # type: ignore[index]
    gains = gain_matrix(day, seats)  # type: ignore[arg-type]
    for room in range(calls // per_room + 1):
        worker.mixing.gains(p.Gains(room, gains))
    clip = speechlike(16000, 99)  # 2 s
    worker.mixing.clips[1] = clip
    params = MediaParams(sink.getsockname(), ULAW, 0, 101)
    for call in range(calls):
        await worker.handle(p.Open(call, HOST, params))
        await worker.handle(p.Start(call))
        room, house = divmod(call, per_room)
        await worker.handle(p.Route(call, room, house + 1, house + 2))  # houses 2..seats
        if prompt_every and call % prompt_every == 0:
            await worker.handle(p.Play(call, (p.PlayItem(call, 1, 0),)))
    task = worker.ticker._task
    if task is not None:  # driven by hand below: no clock task
        task.cancel()
    payloads = [ULAW.encode(speechlike(160 * 50, call))[: 160 * 50] for call in range(calls)]
    return worker, sink, payloads


async def measure(calls: int, seats: int, prompt_every: int, ticks: int) -> dict[str, float]:
    worker, sink, voices = await build(calls, seats, prompt_every)
    ticker = worker.ticker
    ticker._clock = RtpClock(start=time.monotonic())
    endpoints = [worker.endpoints[call] for call in range(calls)]
    reports: list[TickReport] = []
    ticker.stamp, ticker.observer = True, reports.append
    spent: list[float] = []

    try:
        for index in range(ticks):
            drain(sink)
            offset = 160 * (index % 50)
            for call, endpoint in enumerate(endpoints):
                ticker.received(endpoint, voices[call][offset : offset + 160])
            if index % 50 == 49:  # a prompt played to its end plays again
                for call in range(0, calls, prompt_every or calls + 1):
                    await worker.handle(p.Play(call, (p.PlayItem(call + index, 1, 0),)))
            started = time.process_time()
            ticker.tick(index)
            spent.append(time.process_time() - started)
            await asyncio.sleep(0)
    finally:
        worker.close()
        sink.close()
    first = [r.sent_at[0] - r.started for r in reports if r.sent_at]
    last = [r.sent_at[-1] - r.started for r in reports if r.sent_at]
    sent = sum(r.sent for r in reports)
    return {
        "cpu_us_per_tick_mean": 1e6 * statistics.fmean(spent),
        "cpu_us_per_tick_median": 1e6 * statistics.median(spent),
        "first_packet_ms_median": 1e3 * statistics.median(first),
        "last_packet_ms_median": 1e3 * statistics.median(last),
        "last_packet_ms_p99": 1e3 * float(np.percentile(last, 99)),
        "sent_per_tick": sent / ticks,
        "mixed_frames": worker.mixing.mixed_frames,
        "prompt_frames": worker.mixing.prompt_frames,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--game-size", type=int, default=9)
    parser.add_argument("--prompt-every", type=int, default=10)
    parser.add_argument("--ticks", type=int, default=1000)
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args(argv)
    row = asyncio.run(measure(args.calls, args.game_size, args.prompt_every, args.ticks))
    print(
        f"{args.calls} calls: {row['cpu_us_per_tick_mean']:.0f} µs CPU per tick "
        f"(median {row['cpu_us_per_tick_median']:.0f}); first packet "
        f"{row['first_packet_ms_median']:.2f} ms, last {row['last_packet_ms_median']:.2f} ms "
        f"(p99 {row['last_packet_ms_p99']:.2f}) after the tick began; "
        f"{row['sent_per_tick']:.0f} sent per tick",
        flush=True,
    )
    if args.json_out is not None:
        append_json_line(
            args.json_out,
            "media_worker_tick",
            figures=row,
            baseline={},  # the baseline is this script run with another tree (see above)
            parameters=vars(args) | {"json_out": str(args.json_out)},
        )


if __name__ == "__main__":
    main()
