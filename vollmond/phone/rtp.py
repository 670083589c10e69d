"""RTP packets (RFC 3550) and the 20 ms send schedule.

Packets from the network are untrusted, so parsing checks every length before slicing and
reports problems as :class:`RtpParseError` only; the media endpoint drops such packets instead
of letting them end a call.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Final

RTP_VERSION: Final = 2
_HEADER: Final = struct.Struct("!BBHII")
_EXT_HEADER: Final = struct.Struct("!HH")


class RtpParseError(ValueError):
    """A datagram that is not a well-formed RTP packet."""


@dataclass(frozen=True, slots=True)
class RtpExtension:
    """A header extension: 16-bit profile field and data (a whole number of 32-bit words)."""

    profile: int
    data: bytes


@dataclass(frozen=True, slots=True)
class RtpPacket:
    """One RTP packet; ``padding`` is the number of padding bytes (0 means no P bit)."""

    payload_type: int
    sequence: int
    timestamp: int
    ssrc: int
    payload: bytes = b""
    marker: bool = False
    csrc: tuple[int, ...] = ()
    extension: RtpExtension | None = None
    padding: int = 0

    def build(self) -> bytes:
        """Serialise to wire format; checks ranges so a bug cannot emit a corrupt header."""
        if not 0 <= self.payload_type < 128:
            raise ValueError(f"payload type out of range: {self.payload_type}")
        if len(self.csrc) > 15:
            raise ValueError("at most 15 CSRC identifiers")
        if not 0 <= self.padding < 256:
            raise ValueError("padding must be 0..255 bytes")
        b0 = RTP_VERSION << 6
        if self.padding:
            b0 |= 0x20
        if self.extension is not None:
            b0 |= 0x10
        b0 |= len(self.csrc)
        b1 = (0x80 if self.marker else 0) | self.payload_type
        parts = [
            _HEADER.pack(
                b0, b1, self.sequence & 0xFFFF, self.timestamp & 0xFFFFFFFF, self.ssrc & 0xFFFFFFFF
            )
        ]
        parts.extend(struct.pack("!I", c & 0xFFFFFFFF) for c in self.csrc)
        if self.extension is not None:
            ext = self.extension
            if len(ext.data) % 4:
                raise ValueError("extension data must be a multiple of 4 bytes")
            parts.append(_EXT_HEADER.pack(ext.profile & 0xFFFF, len(ext.data) // 4))
            parts.append(ext.data)
        parts.append(self.payload)
        if self.padding:
            parts.append(bytes(self.padding - 1) + bytes([self.padding]))
        return b"".join(parts)


def parse_rtp(data: bytes) -> RtpPacket:
    """Parse one datagram; raises :class:`RtpParseError` for anything malformed."""
    if len(data) < _HEADER.size:
        raise RtpParseError(f"packet too short: {len(data)} bytes")
    b0, b1, seq, ts, ssrc = _HEADER.unpack_from(data)
    if b0 >> 6 != RTP_VERSION:
        raise RtpParseError(f"not RTP version 2: {b0 >> 6}")
    pos = _HEADER.size
    cc = b0 & 0x0F
    end = len(data)
    if pos + 4 * cc > end:
        raise RtpParseError("CSRC list runs past the end")
    csrc = struct.unpack_from(f"!{cc}I", data, pos)
    pos += 4 * cc
    extension = None
    if b0 & 0x10:
        if pos + _EXT_HEADER.size > end:
            raise RtpParseError("extension header runs past the end")
        profile, words = _EXT_HEADER.unpack_from(data, pos)
        pos += _EXT_HEADER.size
        if pos + 4 * words > end:
            raise RtpParseError("extension data runs past the end")
        extension = RtpExtension(profile, bytes(data[pos : pos + 4 * words]))
        pos += 4 * words
    padding = 0
    if b0 & 0x20:
        padding = data[-1] if end > pos else 0
        if padding == 0 or pos + padding > end:
            raise RtpParseError(f"bad padding length {padding}")
        end -= padding
    return RtpPacket(
        payload_type=b1 & 0x7F,
        sequence=seq,
        timestamp=ts,
        ssrc=ssrc,
        payload=bytes(data[pos:end]),
        marker=bool(b1 & 0x80),
        csrc=tuple(csrc),
        extension=extension,
        padding=padding,
    )


@dataclass(slots=True)
class RtpClock:
    """Absolute send times for fixed-length frames.

    Each deadline is computed as ``start + index * period`` rather than by adding the period
    to the previous (late) wake-up, so scheduler jitter never accumulates into drift. When the
    sender falls too far behind (a stalled event loop), it skips frames instead of bursting:
    the RTP timestamp still advances for the skipped frames so the receiver sees a gap of the
    right length rather than time-compressed audio.
    """

    start: float
    period: float = 0.020
    samples_per_frame: int = 160
    max_lag_frames: int = 5
    index: int = 0

    def deadline(self, index: int | None = None) -> float:
        """Absolute time at which frame ``index`` (default: the next one) is due."""
        return self.start + (self.index if index is None else index) * self.period

    def delay(self, now: float) -> float:
        """Seconds to wait from ``now`` before sending the next frame (never negative)."""
        return max(0.0, self.deadline() - now)

    def advance(self, now: float) -> int:
        """Mark the next frame sent and return its index.

        If ``now`` is more than ``max_lag_frames`` past the due frame, the frames in between are
        skipped (their index is consumed) so the stream resumes in step with the clock.
        """
        behind = int((now - self.deadline()) / self.period + 1e-9)
        if behind > self.max_lag_frames:
            self.index += behind
        sent = self.index
        self.index += 1
        return sent

    def timestamp_of(self, index: int, base: int) -> int:
        """RTP timestamp of frame ``index`` for a stream whose first timestamp is ``base``."""
        return (base + index * self.samples_per_frame) & 0xFFFFFFFF


@dataclass(slots=True)
class RtpSender:
    """Sequence numbers and timestamps for one outgoing stream (RFC 3550 §5.1)."""

    ssrc: int
    payload_type: int
    sequence: int = 0
    timestamp_base: int = 0
    _first: bool = field(default=True, repr=False)

    def pack_header(self, buffer: bytearray | memoryview, offset: int, timestamp: int) -> None:
        """Write the next packet's 12-byte header (no CSRC, no extension) into ``buffer`` at
        ``offset`` and advance the stream, as :meth:`packet` does; the batched media clock
        puts the payload behind it."""
        _HEADER.pack_into(
            buffer,
            offset,
            RTP_VERSION << 6,
            (0x80 if self._first else 0) | (self.payload_type & 0x7F),
            self.sequence,
            timestamp & 0xFFFFFFFF,
            self.ssrc & 0xFFFFFFFF,
        )
        self._first = False
        self.sequence = (self.sequence + 1) & 0xFFFF

    def packet(self, payload: bytes, timestamp: int) -> RtpPacket:
        """Next packet of the stream; the marker bit flags the stream's first packet."""
        pkt = RtpPacket(
            payload_type=self.payload_type,
            sequence=self.sequence,
            timestamp=timestamp,
            ssrc=self.ssrc,
            payload=payload,
            marker=self._first,
        )
        self._first = False
        self.sequence = (self.sequence + 1) & 0xFFFF
        return pkt
