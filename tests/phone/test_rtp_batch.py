"""A tick's packets built in one buffer are the packets the per-packet path builds."""

from __future__ import annotations

import numpy as np

from vollmond.phone.g711 import ALAW, ULAW
from vollmond.phone.rtp import RtpSender, parse_rtp
from vollmond.phone.rtp_batch import PACKET_BYTES, PacketBatch, decode_all


def _frames(count: int) -> np.ndarray:
    rng = np.random.default_rng(7)
    return rng.integers(-32768, 32767, size=(count, 160), dtype=np.int16)


def test_batch_packets_equal_the_per_packet_build_for_mixed_laws() -> None:
    frames = _frames(5)
    codecs = [ULAW, ALAW, ULAW, ULAW, ALAW]
    senders = [
        RtpSender(ssrc=1000 + i, payload_type=c.payload_type, sequence=65534)
        for i, c in enumerate(codecs)
    ]
    reference = [
        RtpSender(ssrc=1000 + i, payload_type=c.payload_type, sequence=65534)
        for i, c in enumerate(codecs)
    ]
    batch = PacketBatch()
    batch.reserve(5)
    for tick in range(3):  # the sequence wraps and only the first packet has the marker
        for row, sender in enumerate(senders):
            batch.frames[row] = frames[row]
            sender.pack_header(batch.buffer, row * PACKET_BYTES, 2**32 - 160 + tick * 160)
        batch.encode(5, codecs)
        for row, codec in enumerate(codecs):
            expected = reference[row].packet(codec.encode(frames[row]), 2**32 - 160 + tick * 160)
            assert bytes(batch.packet(row)) == expected.build()
            assert parse_rtp(bytes(batch.packet(row))).marker is (tick == 0)


def test_batch_grows_and_keeps_one_law_in_one_lookup() -> None:
    batch = PacketBatch()
    batch.reserve(3)
    batch.reserve(40)
    assert batch.capacity >= 40
    frames = _frames(40)
    batch.frames[:40] = frames
    batch.encode(40, [ULAW] * 40)
    assert all(bytes(batch.packet(r))[12:] == ULAW.encode(frames[r]) for r in range(40))


def test_decode_all_decodes_each_payload_with_its_law_into_fresh_rows() -> None:
    payloads = [bytes(range(i, i + 160)) for i in (0, 50, 90)]
    codecs = [ALAW, ULAW, ALAW]
    first = decode_all(payloads, codecs)
    for row, (payload, codec) in enumerate(zip(payloads, codecs, strict=True)):
        assert np.array_equal(first[row], codec.decode(payload))
    kept = first.copy()
    decode_all([b"\x00" * 160] * 3, [ULAW] * 3)
    assert np.array_equal(first, kept)  # rows handed on are not overwritten by the next tick
