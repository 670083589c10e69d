"""Every call's packet of one 20 ms tick in one buffer: G.711 by table lookup over all frames
at once, headers written in place, one ``sendto`` per packet straight from the buffer.

The media clock fills :attr:`PacketBatch.frames` row by row (one row per call), writes each
row's header with :meth:`~vollmond.phone.rtp.RtpSender.pack_header`, then :meth:`encode`
turns all rows into payloads in one numpy operation per codec, and :meth:`packet` hands out a
zero-copy view of each finished packet. Received frames go the other way in :func:`decode_all`.
Python has no ``sendmmsg``, so a packet still costs one C call to the kernel, but nothing more.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np
import numpy.typing as npt

from vollmond.phone.g711 import G711Codec
from vollmond.voice.frames import FRAME_SAMPLES, Int16Array

HEADER_BYTES: Final = 12
PACKET_BYTES: Final = HEADER_BYTES + FRAME_SAMPLES
"""A 20 ms G.711 packet without CSRC or extension: what the media clock sends."""


class PacketBatch:
    """Reusable buffers for up to :attr:`capacity` packets (grown on demand)."""

    def __init__(self) -> None:
        self.capacity = 0
        self.frames: Int16Array = np.zeros((0, FRAME_SAMPLES), np.int16)
        self._packets: npt.NDArray[np.uint8] = np.zeros((0, PACKET_BYTES), np.uint8)
        self.buffer: memoryview = memoryview(b"")
        self._views: list[memoryview] = []

    def reserve(self, count: int) -> None:
        """Room for ``count`` packets; rows already written are lost when the batch grows."""
        if count <= self.capacity:
            return
        capacity = max(count, 2 * self.capacity, 16)
        self.frames = np.zeros((capacity, FRAME_SAMPLES), np.int16)
        self._packets = np.zeros((capacity, PACKET_BYTES), np.uint8)
        self.buffer = self._packets.data.cast("B")
        self._views = [
            self.buffer[row * PACKET_BYTES : (row + 1) * PACKET_BYTES] for row in range(capacity)
        ]
        self.capacity = capacity

    def encode(self, count: int, codecs: Sequence[G711Codec]) -> None:
        """Encode ``frames[:count]`` into the payloads, row ``i`` with ``codecs[i]``: one table
        lookup for all rows when every call uses the same law."""
        if count == 0:
            return
        first = codecs[0]
        pcm = self.frames[:count].view(np.uint16)
        if all(codec is first for codec in codecs):
            self._packets[:count, HEADER_BYTES:] = first.encode_table[pcm]
            return
        for codec in set(codecs):
            rows = np.fromiter((c is codec for c in codecs), bool, count)
            self._packets[:count][rows, HEADER_BYTES:] = codec.encode_table[pcm[rows]]

    def packet(self, row: int) -> memoryview:
        """The finished packet of ``row`` (a view: valid until the next tick writes it)."""
        return self._views[row]


def decode_all(payloads: Sequence[bytes], codecs: Sequence[G711Codec]) -> Int16Array:
    """Decode 160-byte payloads, ``payloads[i]`` with ``codecs[i]``, into one fresh
    ``(len(payloads), 160)`` array (fresh, so rows handed on stay valid)."""
    codes = np.frombuffer(b"".join(payloads), np.uint8).reshape(-1, FRAME_SAMPLES)
    first = codecs[0]
    if all(codec is first for codec in codecs):
        decoded: Int16Array = first.decode_table[codes]
        return decoded
    out = np.empty(codes.shape, np.int16)
    for codec in set(codecs):
        rows = np.fromiter((c is codec for c in codecs), bool, len(codecs))
        out[rows] = codec.decode_table[codes[rows]]
    return out
