"""SIP fuzzing: 1,000 malformed datagrams from a seeded generator flood the SIP port while a
real softphone (baresip) calls in. The call is answered and has media both ways, no datagram
trips a bug (no internal error, no "Task exception was never retrieved"), and afterwards open
fds, asyncio tasks and the memory held by vollmond's code are back at their baseline.

The flood comes from 127.0.0.2 and the phone from 127.0.0.1; the request limits are raised
so that every datagram reaches the parser and the handlers instead of the rate limiter.
"""

from __future__ import annotations

import asyncio
import gc
import os
import random
import tracemalloc
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from tests.needs import need
from tests.phone.e2e.support import phones, tone, wait_until
from tests.phone.helpers import RecordingHandler, ToneSource, UdpPeer, dominant_frequency
from vollmond.phone.sip.guard import DropReason
from vollmond.phone.sip.uas import SipUas, UasConfig
from vollmond.settings.sip import SipSettings

SEED = 20240808
FLOOD = 1000
#: Memory (bytes) that vollmond's code may keep after the flood: rate-limit buckets and
#: counters for two sources, interned strings; a leak of one call or transaction per
#: datagram would be hundreds of kilobytes.
MEMORY_SLACK = 48 * 1024

SDP = (
    "v=0\r\no=x 1 1 IN IP4 127.0.0.2\r\ns=-\r\nc=IN IP4 127.0.0.2\r\nt=0 0\r\n"
    "m=audio 4000 RTP/AVP 0 8 101\r\na=rtpmap:101 telephone-event/8000\r\na=sendrecv\r\n"
)


def template(rng: random.Random, port: int) -> list[str]:
    """A plausible request as header lines (start line first)."""
    method = rng.choice(["INVITE", "INVITE", "BYE", "CANCEL", "ACK", "OPTIONS", "INFO", "PRACK"])
    tag = "" if rng.random() < 0.7 else f";tag={rng.getrandbits(32):x}"
    return [
        f"{method} sip:1234@127.0.0.1 SIP/2.0",
        f"Via: SIP/2.0/UDP 127.0.0.2:{port};branch=z9hG4bK{rng.getrandbits(48):x}",
        f"From: <sip:fuzz@127.0.0.2>;tag={rng.getrandbits(32):x}",
        f"To: <sip:1234@127.0.0.1>{tag}",
        f"Call-ID: {rng.getrandbits(64):x}",
        f"CSeq: {rng.randint(1, 9)} {method}",
        f"Contact: <sip:fuzz@127.0.0.2:{port}>",
        "Record-Route: <sip:127.0.0.2;lr>",
        "Content-Type: application/sdp",
    ]


BROKEN_VALUES = [
    "<sip:x@127.0.0.1",
    "",
    "<>",
    ";;;;",
    "<sip:x@[::1>",
    "\x00",
    "sip:" + "a" * 3000,
    '"unterminated <sip:x@y>',
    "99999999999999999999 INVITE",
    "1",
    "<sip:x@127.0.0.1>;tag=",
    "SIP/2.0/UDP",
]


def _mutate(lines: list[str], rng: random.Random) -> bytes:
    kind = rng.randrange(10)
    body = SDP
    if kind == 0:  # a header value broken
        i = rng.randrange(1, len(lines))
        name = lines[i].split(":", 1)[0]
        lines[i] = f"{name}: {rng.choice(BROKEN_VALUES)}"
    elif kind == 1:  # a header missing
        del lines[rng.randrange(1, len(lines))]
    elif kind == 2:  # a broken SDP
        sdp_lines = body.split("\r\n")
        sdp_lines[rng.randrange(len(sdp_lines))] = rng.choice(
            ["m=audio x RTP/AVP 0", "c=IN IP4", "m=audio 1 RTP/AVP", "v=9", "a=rtpmap:0", "\x01"]
        )
        body = "\r\n".join(sdp_lines)
    elif kind == 3:  # start line broken
        lines[0] = rng.choice(["INVITE", "INVITE  SIP/2.0", "INVITE sip:x SIP/3.0", "SIP/2.0 2"])
    elif kind == 4:  # Content-Length lies
        lines.append(f"Content-Length: {rng.choice(['5000', '-1', 'x', '99999999999999'])}")
    head = "\r\n".join(lines)
    if kind != 4:
        head += f"\r\nContent-Length: {len(body)}"
    data = (head + "\r\n\r\n" + body).encode("utf-8", "surrogateescape")
    if kind == 5:  # truncated
        data = data[: rng.randrange(1, len(data))]
    elif kind == 6:  # bytes flipped
        raw = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            raw[rng.randrange(len(raw))] = rng.randrange(256)
        data = bytes(raw)
    elif kind == 7:  # random bytes
        data = rng.randbytes(rng.randint(0, 1400))
    elif kind == 8:  # a response nobody asked for
        data = b"SIP/2.0 200 OK\r\n" + data.split(b"\r\n", 1)[1]
    return data


def malformed_datagrams(count: int, port: int, seed: int = SEED) -> list[bytes]:
    """``count`` datagrams, mostly malformed SIP (kind 9 leaves a plausible request intact)."""
    rng = random.Random(seed)
    return [_mutate(template(rng, port), rng) for _ in range(count)]


def held_by_vollmond() -> int:
    """Bytes allocated by vollmond's own code that are still alive."""
    gc.collect()
    snapshot = tracemalloc.take_snapshot().filter_traces(
        [tracemalloc.Filter(True, f"*{os.sep}vollmond{os.sep}*")]
    )
    return sum(stat.size for stat in snapshot.statistics("filename"))


async def flood(uas: SipUas, flooder: UdpPeer, datagrams: list[bytes]) -> None:
    """Send in groups of 20, each once the last has arrived: a loopback socket buffer holds
    only ~100 datagrams, and none of the 1,000 may get lost."""
    for start in range(0, len(datagrams), 20):
        arrived = uas.received + len(datagrams[start : start + 20])
        for data in datagrams[start : start + 20]:
            flooder.send(data, ("127.0.0.1", uas.port))
        await wait_until(lambda: uas.received >= arrived, 5)  # noqa: B023


@dataclass
class Baseline:
    """What the process holds: open fds, asyncio tasks, bytes allocated by vollmond's code."""

    fds: int
    tasks: int
    memory: int

    @classmethod
    def now(cls) -> Baseline:
        return cls(len(os.listdir("/proc/self/fd")), len(asyncio.all_tasks()), held_by_vollmond())


async def test_fuzz_flood_leaves_no_trace_and_a_real_call_works(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    need("baresip", "sox")
    handler = RecordingHandler(source=ToneSource(1000.0))
    flood_settings = SipSettings(requests_per_second=100_000, request_burst=100_000)
    uas = await SipUas.start(
        UasConfig(
            host="127.0.0.1", port=0, t1=0.05, t2=0.4, ring_time=0.1, settings=flood_settings
        ),
        handler,
    )
    flooder = await UdpPeer.open("127.0.0.2")
    tracemalloc.start(1)
    try:
        async with phones(tmp_path / "phones", {"caller": tone(600.0, 20)}) as lines:
            before = Baseline.now()
            flooding = asyncio.create_task(
                flood(uas, flooder, malformed_datagrams(FLOOD, flooder.port))
            )
            await lines["caller"].dial(uas.port)
            await handler.wait_for(lambda: handler.started, timeout=10)
            await flooding
            # Media both ways during and after the flood: 2 s of the caller's tone.
            await handler.wait_for(lambda: len(handler.frames) >= 100, timeout=10)
            await lines["caller"].hangup()
            await handler.wait_for(lambda: handler.ended, timeout=10)
            heard = np.concatenate(handler.frames)
            handler.frames.clear()
            # Every flood transaction and call times out (64*T1 = 3.2 s).
            await wait_until(lambda: (uas.transactions, uas.tasks, len(uas.calls)) == (0, 0, 0))
            while not flooder.queue.empty():
                flooder.queue.get_nowait()
            after = Baseline.now()
            recording = lines["caller"].recording()  # complete once baresip hung up
    finally:
        tracemalloc.stop()
        flooder.close()
        await uas.close(bye_timeout=0.1)

    leftover = after.memory - before.memory
    print(f"fuzz: drops {dict(uas.drops.snapshot())}, vollmond memory {leftover:+d} bytes")
    assert (after.fds, after.tasks) == (before.fds, before.tasks)
    assert leftover < MEMORY_SLACK
    assert uas.drops[DropReason.MALFORMED] > FLOOD // 2, uas.drops.snapshot()
    assert uas.drops[DropReason.INTERNAL_ERROR] == 0
    gc.collect()
    assert not [r for r in caplog.records if "never retrieved" in r.getMessage()]
    # The real call: answered, we heard its 600 Hz, it heard our 1 kHz.
    assert handler.started[0].caller == "sip:caller@127.0.0.1"
    assert dominant_frequency(heard[1600:9600]) == pytest.approx(600, abs=2)
    assert dominant_frequency(recording[1600:9600]) == pytest.approx(1000, abs=2)
