"""The media clock's send path alone: CPU per packet of one batched tick against the
per-packet path it replaced, side by side in one process on real UDP sockets.

    .venv/bin/python -m benchmarks.media_tick                       # 50, 150 and 300 calls
    .venv/bin/python -m benchmarks.media_tick --calls 300 --ticks 500 --json-out runs.jsonl

Each of ``--calls`` endpoints (:class:`~vollmond.phone.media.RtpEndpoint` on 127.0.0.1) has a
source that returns a fixed speech-like frame and sends to one sink socket that is drained
between ticks. BATCHED (the product): ``MediaTicker.tick`` — pull every frame into one array,
one G.711 lookup for all, headers packed in place, one ``sendto`` per packet from the buffer.
PER-PACKET (the baseline, the clock before issue 16): per endpoint, pull, encode its frame,
build an :class:`~vollmond.phone.rtp.RtpPacket`, serialise it and hand it to the asyncio
transport. The two alternate tick by tick so the machine's load falls on both alike; the
figure is ``time.process_time`` per packet (no sleeping inside the measured part). A bare
``socket.sendto`` of the same packets is timed too: the floor no Python path gets below.
Received audio is not part of it (see ``phone_load`` for the whole service).
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
from benchmarks.phone_load import speechlike
from vollmond.phone.g711 import ULAW
from vollmond.phone.media import MediaParams, MediaTicker, RtpEndpoint
from vollmond.phone.rtp import RtpClock

HOST = "127.0.0.1"


def drain(sink: socket.socket) -> None:
    """Read away what the ticks sent to the non-blocking `sink` (nobody listens to it)."""
    try:
        while True:
            sink.recv(2048)
    except BlockingIOError:
        return


def per_packet_tick(endpoints: list[RtpEndpoint], index: int) -> None:
    """The send path before the batched clock, per endpoint (kept here as the baseline)."""
    for endpoint in endpoints:
        source = endpoint._source
        frame = source() if source is not None else None
        params = endpoint.params
        if endpoint._first_index is None:
            endpoint._first_index = index
        codec = params.codec
        payload = bytes([codec.silence]) * 160 if frame is None else codec.encode(np.asarray(frame))
        timestamp = (endpoint._ts_base + (index - endpoint._first_index) * 160) & 0xFFFFFFFF
        packet = endpoint._sender.packet(payload, timestamp).build()
        assert endpoint._transport is not None
        endpoint._transport.sendto(packet, endpoint.latched or params.remote)
        endpoint.packets_sent += 1


async def measure(calls: int, ticks: int) -> dict[str, float]:
    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sink.bind((HOST, 0))
    sink.setblocking(False)
    frame = speechlike(0.02)
    endpoints = [
        await RtpEndpoint.open(
            HOST, MediaParams(sink.getsockname(), ULAW, 0, 101), lambda _: None, lambda _: None
        )
        for _ in range(calls)
    ]
    for endpoint in endpoints:
        endpoint.set_source(lambda: frame)
    ticker = MediaTicker()
    ticker._order = list(endpoints)  # driven by hand: no clock task
    ticker._clock = RtpClock(start=time.monotonic())
    bare = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    bare.setblocking(False)
    packet = bytes(172)
    costs: dict[str, list[float]] = {"batched": [], "per_packet": [], "bare_sendto": []}

    try:
        for index in range(ticks):
            for name, spent in costs.items():
                drain(sink)
                started = time.process_time()
                if name == "batched":
                    ticker.tick(index)
                elif name == "per_packet":
                    per_packet_tick(endpoints, index)
                else:
                    for _ in range(calls):
                        bare.sendto(packet, sink.getsockname())
                spent.append(time.process_time() - started)
            await asyncio.sleep(0)  # let the transports flush anything they queued
    finally:
        ticker._order = []
        for endpoint in endpoints:
            endpoint.close()
        sink.close()
        bare.close()
    return {
        f"{name}_us_per_packet": 1e6 * statistics.fmean(values) / calls
        for name, values in costs.items()
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", default="50,150,300")
    parser.add_argument("--ticks", type=int, default=300)
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args(argv)
    rows: dict[str, dict[str, Any]] = {}
    for calls in (int(c) for c in args.calls.split(",")):
        rows[str(calls)] = asyncio.run(measure(calls, args.ticks))
        row = rows[str(calls)]
        print(
            f"{calls:4} calls: batched {row['batched_us_per_packet']:.2f} µs/packet, "
            f"per-packet {row['per_packet_us_per_packet']:.2f} "
            f"(x{row['per_packet_us_per_packet'] / row['batched_us_per_packet']:.2f}), "
            f"bare sendto {row['bare_sendto_us_per_packet']:.2f}",
            flush=True,
        )
    if args.json_out is not None:
        append_json_line(
            args.json_out,
            "media_tick",
            figures={
                c: {"batched_us_per_packet": r["batched_us_per_packet"]} for c, r in rows.items()
            },
            baseline={
                c: {k: v for k, v in r.items() if k != "batched_us_per_packet"}
                for c, r in rows.items()
            },
            parameters={"calls": args.calls, "ticks": args.ticks},
        )


if __name__ == "__main__":
    main()
