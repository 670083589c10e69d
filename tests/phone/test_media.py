"""The RTP endpoint and the shared media ticker, over real UDP sockets on 127.0.0.1."""

from __future__ import annotations

import asyncio
import itertools

import numpy as np

from tests.phone.helpers import UdpPeer
from vollmond.phone.dtmf import TelephoneEvent
from vollmond.phone.g711 import ALAW, ULAW
from vollmond.phone.media import AudioSource, MediaParams, MediaTicker, RtpEndpoint
from vollmond.phone.rtp import RtpPacket, parse_rtp


def _constant(value: int) -> AudioSource:
    return lambda: np.full(160, value, np.int16)


async def test_shared_ticker_drives_several_endpoints() -> None:
    ticker = MediaTicker()
    sinks = [await UdpPeer.open() for _ in range(3)]
    endpoints = []
    for i, sink in enumerate(sinks):
        ep = await RtpEndpoint.open(
            "127.0.0.1",
            MediaParams(("127.0.0.1", sink.port), ULAW, 0, 101),
            lambda _: None,
            lambda _: None,
        )
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
