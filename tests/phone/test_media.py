"""The RTP endpoint and the shared media ticker, over real UDP sockets on 127.0.0.1."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Iterator

import numpy as np
import pytest

from tests.phone.helpers import UdpPeer
from vollmond.phone.dtmf import TelephoneEvent
from vollmond.phone.g711 import ALAW, ULAW
from vollmond.phone.media import AudioSource, MediaParams, MediaTicker, RtpEndpoint, TickReport
from vollmond.phone.rtp import RtpPacket, parse_rtp


def _constant(value: int) -> AudioSource:
    return lambda: np.full(160, value, np.int16)


async def _sending_to(sink: UdpPeer) -> RtpEndpoint:
    """A G.711 µ-law endpoint on 127.0.0.1 that sends to `sink` and ignores what it hears."""
    return await RtpEndpoint.open(
        "127.0.0.1",
        MediaParams(("127.0.0.1", sink.port), ULAW, 0, 101),
        lambda _: None,
        lambda _: None,
    )


async def test_shared_ticker_drives_several_endpoints() -> None:
    ticker = MediaTicker()
    sinks = [await UdpPeer.open() for _ in range(3)]
    endpoints = []
    for i, sink in enumerate(sinks):
        ep = await _sending_to(sink)
        ep.set_source(_constant(1000 * (i + 1)))
        ep.start(ticker)
        endpoints.append(ep)
    try:
        for i, sink in enumerate(sinks):
            packets = [parse_rtp(await sink.recv_raw()) for _ in range(20)]
            assert {len(p.payload) for p in packets} == {160}
            assert int(ULAW.decode(packets[0].payload)[0]) == int(
                ULAW.decode(ULAW.encode(np.array([1000 * (i + 1)], np.int16)))[0]
            )
            assert {
                (b.timestamp - a.timestamp) % 2**32 for a, b in itertools.pairwise(packets)
            } == {160}
            assert len({p.ssrc for p in packets}) == 1
            assert packets[0].marker
    finally:
        for ep in endpoints:
            ep.close()
        for sink in sinks:
            sink.close()
    assert ticker._task is None  # stopped once nobody is left


async def test_sloppy_source_frames_are_fitted_and_none_is_silence() -> None:
    sink = await UdpPeer.open()
    frames = iter([np.full(100, 1000, np.int16), np.full(300, 1000, np.int16), None])
    ep = await RtpEndpoint.open(
        "127.0.0.1",
        MediaParams(("127.0.0.1", sink.port), ALAW, 8, None),
        lambda _: None,
        lambda _: None,
    )
    ep.set_source(lambda: next(frames, None))
    ep.start()
    try:
        payloads = [parse_rtp(await sink.recv_raw()).payload for _ in range(3)]
    finally:
        ep.close()
        sink.close()
    assert [len(p) for p in payloads] == [160, 160, 160]
    assert payloads[0][99] != payloads[0][100]  # 100 samples of signal, then zero padding
    assert payloads[2] == bytes([ALAW.silence]) * 160


async def test_hold_sends_nothing_and_receive_path_reports_audio_and_digits() -> None:
    sink = await UdpPeer.open()
    audio: list[int] = []
    digits: list[str] = []
    ep = await RtpEndpoint.open(
        "127.0.0.1",
        MediaParams(("127.0.0.1", sink.port), ULAW, 0, 96, send=False),
        lambda samples: audio.append(len(samples)),
        digits.append,
    )
    ep.start()
    try:
        target = ("127.0.0.1", ep.local_port)
        sink.send(RtpPacket(0, 1, 160, 5, b"\xff" * 160).build(), target)
        for _ in range(3):
            sink.send(
                RtpPacket(96, 2, 320, 5, TelephoneEvent(3, True, 10, 800).build()).build(), target
            )
        sink.send(RtpPacket(96, 3, 640, 5, b"\x01").build(), target)  # too short: dropped
        sink.send(RtpPacket(13, 4, 800, 5, b"\x00").build(), target)  # comfort noise: ignored
        sink.send(b"\x00", target)  # not RTP: dropped
        await asyncio.sleep(0.2)
        assert audio == [160]
        assert digits == ["3"]
        assert ep.packets_dropped == 2
        assert sink.queue.empty()  # on hold: nothing sent
    finally:
        ep.close()
        sink.close()


async def _until(condition: Callable[[], bool], timeout: float = 3.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.005)


async def _receiving(sink: UdpPeer, frames: list[np.ndarray]) -> RtpEndpoint:
    """A started endpoint sending to `sink` (µ-law) and putting every decoded frame in
    `frames`."""
    ep = await RtpEndpoint.open(
        "127.0.0.1",
        MediaParams(("127.0.0.1", sink.port), ULAW, 0, 101),
        frames.append,
        lambda _: None,
    )
    ep.start()
    return ep


async def test_latched_audio_is_decoded_at_the_tick_in_arrival_order() -> None:
    sink, stranger = await UdpPeer.open(), await UdpPeer.open()
    frames: list[np.ndarray] = []
    ep = await _receiving(sink, frames)
    try:
        target = ("127.0.0.1", ep.local_port)
        for seq, value in enumerate((100, 2000, -3000, 500)):
            payload = ULAW.encode(np.full(160, value, np.int16))
            sink.send(RtpPacket(0, seq, seq * 160, 5, payload).build(), target)
        # Same host, another port: after the latch it is a stranger's packet, not audio.
        stranger.send(RtpPacket(0, 9, 9 * 160, 6, b"\x00" * 160).build(), target)
        await _until(lambda: len(frames) == 4 and ep.packets_foreign == 1)
        expected = [
            int(ULAW.decode(ULAW.encode(np.array([v], np.int16)))[0])
            for v in (100, 2000, -3000, 500)
        ]
        assert [int(f[0]) for f in frames] == expected
        assert ep.latched == ("127.0.0.1", sink.port)
        assert ep.packets_received == 4
    finally:
        ep.close()
        sink.close()
        stranger.close()


async def test_a_payload_of_another_length_is_handed_on_as_one_160_sample_frame() -> None:
    """Whoever takes the frames (the room's mix, the media process's `A` block of a tick's
    frames) gets 160 samples a frame, as the ticker's batch gives them: a peer sending 10 ms
    packets, or 30 ms ones, is cut or padded with silence, not passed on at its own length
    (which broke the media process's block of the tick's audio)."""
    sink = await UdpPeer.open()
    frames: list[np.ndarray] = []
    ep = await _receiving(sink, frames)
    try:
        target = ("127.0.0.1", ep.local_port)
        for seq, size in enumerate((80, 240, 1, 160)):
            payload = ULAW.encode(np.full(size, 1000, np.int16))
            sink.send(RtpPacket(0, seq, seq * 160, 5, payload).build(), target)
        await _until(lambda: len(frames) == 4)
        assert [f.shape for f in frames] == [(160,)] * 4
        level = int(ULAW.decode(ULAW.encode(np.array([1000], np.int16)))[0])
        by_size = {80: 80, 240: 160, 1: 1, 160: 160}  # samples of the payload kept, in order
        kept = sorted(int(np.count_nonzero(f == level)) for f in frames)
        assert kept == sorted(by_size.values())
        assert all(np.count_nonzero(f) == np.count_nonzero(f == level) for f in frames)
    finally:
        ep.close()
        sink.close()


async def test_a_stall_skips_frames_counts_them_and_keeps_the_timestamps_in_step() -> None:
    sink = await UdpPeer.open()
    now = [100.0]
    ticker = MediaTicker(clock=lambda: now[0])
    reports: list[TickReport] = []

    def observe(report: TickReport) -> None:
        reports.append(report)
        if len(reports) == 1:
            now[0] += 0.2  # the event loop stalls for 200 ms right after the first tick

    ticker.observer = observe
    ep = await _sending_to(sink)
    ep.start(ticker)
    try:
        first, second = [parse_rtp(await sink.recv_raw()) for _ in range(2)]
    finally:
        ep.close()
        sink.close()
    assert [r.index for r in reports[:2]] == [0, 10]
    assert ticker.skipped_ticks == 9
    assert (second.timestamp - first.timestamp) % 2**32 == 10 * 160
    assert ep.packets_sent == len(reports)


async def test_a_send_the_kernel_refuses_is_counted_not_queued() -> None:
    ticker = MediaTicker()
    ep = await RtpEndpoint.open(
        "127.0.0.1", MediaParams(("127.0.0.1", 0), ULAW, 0, 101), lambda _: None, lambda _: None
    )
    ticker.add(ep)  # registered without the clock task of start(): ticks driven by hand
    ticker.remove(ep)
    ep._ticker = ticker
    ticker._order = [ep]
    try:
        ticker.tick(0)
        ticker.tick(1)
    finally:
        ticker._order = []
        ep.close()
    assert (ep.packets_sent, ep.packets_unsent, ticker.unsent) == (0, 2, 2)


async def _ticks_on_a_virtual_clock(
    making_s: Iterator[float], ticks: int
) -> tuple[MediaTicker, list[TickReport]]:
    """Run one endpoint's clock for `ticks` packets on a virtual clock: making each frame
    adds the next of `making_s` to it, and the clock's waits advance it, so the timings come
    out exact whatever the machine does meanwhile."""
    now = [100.0]

    async def sleep(seconds: float) -> None:
        now[0] += seconds
        await asyncio.sleep(0)

    def source() -> np.ndarray:
        now[0] += next(making_s)
        return np.zeros(160, np.int16)

    reports: list[TickReport] = []
    ticker = MediaTicker(clock=lambda: now[0], sleep=sleep)
    ticker.stamp = True
    ticker.observer = reports.append
    sink = await UdpPeer.open()
    ep = await _sending_to(sink)
    ep.set_source(source)
    ep.start(ticker)
    try:
        for _ in range(ticks):
            await sink.recv_raw()
    finally:
        ep.close()
        sink.close()
    return ticker, reports[:ticks]


def _late_ms(reports: list[TickReport]) -> list[float]:
    return [round((r.sent_at[0] - r.deadline) * 1000, 6) for r in reports]


async def test_the_clock_makes_each_tick_ahead_and_sends_it_when_due() -> None:
    """Making a tick's frames takes time (mixing hundreds of calls: milliseconds); made after
    the deadline, every packet left that much late. The clock learns how long the making
    takes and starts that much earlier, so packets leave when due; a slower tick leaves late
    once, and from the next one on the clock starts earlier still."""
    making = itertools.chain([0.005] * 10, [0.008], itertools.repeat(0.005))
    ticker, reports = await _ticks_on_a_virtual_clock(making, 16)
    # The first tick was made at its deadline (no earlier time to start from); tick 10's
    # making took 8 ms against a lead learnt from 5 ms ones (6 ms with the margin).
    assert _late_ms(reports) == [5.0] + [0.0] * 9 + [2.0] + [0.0] * 5
    made_before_ms = [round((r.deadline - r.started) * 1000, 1) for r in reports[1:]]
    assert all(5.0 < ahead <= 6.0 for ahead in made_before_ms[:9])
    assert all(8.0 < ahead <= 9.0 for ahead in made_before_ms[10:])
    assert [r.index for r in reports] == list(range(16))
    assert ticker.skipped_ticks == ticker.late_ticks == 0


async def test_the_clock_starts_at_most_ten_ms_early() -> None:
    """A tick that takes longer than that to make leaves late rather than the audio it mixes
    being older still."""
    ticker, reports = await _ticks_on_a_virtual_clock(itertools.repeat(0.015), 7)
    assert ticker.lead_s == pytest.approx(0.010)
    # Ticks 0 and 1 start late (no earlier time to start from; then after tick 0's end).
    assert _late_ms(reports) == [15.0, 10.0] + [5.0] * 5
