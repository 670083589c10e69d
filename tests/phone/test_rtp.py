"""RTP header codec and send clock."""

from __future__ import annotations

import struct

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from vollmond.phone.rtp import (
    RtpClock,
    RtpExtension,
    RtpPacket,
    RtpParseError,
    RtpSender,
    parse_rtp,
)


def test_parse_minimal_pcmu_packet() -> None:
    raw = bytes([0x80, 0x00, 0x12, 0x34]) + struct.pack("!II", 160, 0xDEADBEEF) + b"\xff" * 160
    pkt = parse_rtp(raw)
    assert (pkt.payload_type, pkt.sequence, pkt.timestamp, pkt.ssrc) == (0, 0x1234, 160, 0xDEADBEEF)
    assert pkt.payload == b"\xff" * 160
    assert not pkt.marker
    assert pkt.csrc == ()
    assert pkt.extension is None
    assert pkt.build() == raw


def test_parse_csrc_extension_padding_marker() -> None:
    raw = (
        bytes([0xB2, 0xE5])  # V=2 P=1 X=1 CC=2, M=1 PT=101
        + struct.pack("!HII", 7, 8000, 42)
        + struct.pack("!II", 1, 2)
        + struct.pack("!HH", 0xBEDE, 1)
        + b"\x10\x20\x30\x40"
        + b"\x05\x80\x00\xa0"
        + b"\x00\x00\x03"
    )
    pkt = parse_rtp(raw)
    assert pkt.marker
    assert pkt.payload_type == 101
    assert pkt.csrc == (1, 2)
    assert pkt.extension == RtpExtension(0xBEDE, b"\x10\x20\x30\x40")
    assert pkt.payload == b"\x05\x80\x00\xa0"
    assert pkt.padding == 3
    assert pkt.build() == raw


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"", "too short"),
        (b"\x80\x00\x00\x01" + b"\x00" * 7, "too short"),
        (b"\x40" + b"\x00" * 11, "version"),
        (b"\x83" + b"\x00" * 11 + b"\x00" * 8, "CSRC"),
        (b"\x90" + b"\x00" * 11 + b"\x00\x00", "extension header"),
        (b"\x90" + b"\x00" * 11 + b"\x00\x00\x00\x02" + b"\x00" * 4, "extension data"),
        (b"\xa0" + b"\x00" * 11 + b"\x01\x00", "padding"),
        (b"\xa0" + b"\x00" * 11 + b"\x01\x09", "padding"),
    ],
)
def test_malformed_packets_raise_specific_error(raw: bytes, reason: str) -> None:
    with pytest.raises(RtpParseError, match=reason):
        parse_rtp(raw)


@given(st.binary(max_size=80))
@example(b"\xa0" + bytes(11) + b"\x01\x02")  # padding whose first byte is not zero
def test_parse_never_raises_other_errors(raw: bytes) -> None:
    try:
        pkt = parse_rtp(raw)
    except RtpParseError:
        return
    # RFC 3550 5.1: only the last padding octet (the count) means anything; the others are
    # rebuilt as zeros (hypothesis found a packet whose padding bytes were not).
    canonical = raw
    if pkt.padding:
        canonical = raw[: -pkt.padding] + bytes(pkt.padding - 1) + raw[-1:]
    assert pkt.build() == canonical
    assert parse_rtp(pkt.build()) == pkt


_PACKETS = st.builds(
    RtpPacket,
    payload_type=st.integers(0, 127),
    sequence=st.integers(0, 0xFFFF),
    timestamp=st.integers(0, 0xFFFFFFFF),
    ssrc=st.integers(0, 0xFFFFFFFF),
    payload=st.binary(max_size=40),
    marker=st.booleans(),
    csrc=st.lists(st.integers(0, 0xFFFFFFFF), max_size=15).map(tuple),
    extension=st.none()
    | st.builds(
        RtpExtension,
        st.integers(0, 0xFFFF),
        st.binary(max_size=8).map(lambda b: b + bytes(-len(b) % 4)),
    ),
    padding=st.integers(0, 255),
)


@given(_PACKETS)
def test_build_parse_roundtrip(pkt: RtpPacket) -> None:
    assert parse_rtp(pkt.build()) == pkt


def test_build_rejects_out_of_range_fields() -> None:
    with pytest.raises(ValueError, match="payload type"):
        RtpPacket(128, 0, 0, 0).build()
    with pytest.raises(ValueError, match="CSRC"):
        RtpPacket(0, 0, 0, 0, csrc=tuple(range(16))).build()
    with pytest.raises(ValueError, match="multiple of 4"):
        RtpPacket(0, 0, 0, 0, extension=RtpExtension(1, b"abc")).build()


def test_clock_deadlines_are_absolute_and_do_not_drift() -> None:
    clock = RtpClock(start=100.0)
    now = 100.0
    for _ in range(10_000):
        now = clock.deadline() + 0.0037  # every wake-up is 3.7 ms late
        clock.advance(now)
    # After 10,000 frames the next deadline is exactly start + 10,000 * 20 ms.
    assert clock.index == 10_000
    assert clock.deadline() == pytest.approx(100.0 + 200.0, abs=1e-9)
    assert clock.delay(now) == pytest.approx(0.020 - 0.0037, abs=1e-9)


def test_clock_skips_frames_after_a_long_stall() -> None:
    clock = RtpClock(start=0.0)
    assert clock.advance(0.0) == 0
    assert clock.advance(0.021) == 1  # slightly late: no skip
    sent = clock.advance(0.5)  # stalled 460 ms: jump to the frame due at 0.5 s
    assert sent == 25
    assert clock.timestamp_of(sent, base=1000) == 1000 + 25 * 160
    assert clock.delay(0.5) == pytest.approx(0.020, abs=1e-9)


def test_clock_timestamp_wraps() -> None:
    clock = RtpClock(start=0.0)
    assert clock.timestamp_of(2, base=0xFFFFFFFF - 100) == (0xFFFFFFFF - 100 + 320) & 0xFFFFFFFF


def test_sender_sequence_wraps_and_marks_first_packet() -> None:
    sender = RtpSender(ssrc=5, payload_type=8, sequence=0xFFFF)
    first = sender.packet(b"a", 0)
    second = sender.packet(b"b", 160)
    assert (first.sequence, first.marker) == (0xFFFF, True)
    assert (second.sequence, second.marker) == (0, False)
    assert parse_rtp(second.build()).timestamp == 160
