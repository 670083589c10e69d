"""G.711 µ-law and A-law codecs as numpy lookup tables.

``audioop`` is gone in Python 3.13, and per-sample Python loops are far too slow for hundreds
of concurrent calls, so every possible input is converted once into a table and each frame is a
single fancy-indexing operation. The tables are built with vectorised arithmetic that follows
the ITU-T G.711 / Sun reference algorithm; the tests compare them bit for bit with a scalar
transcription of that reference.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

Int16Array = npt.NDArray[np.int16]
UInt8Array = npt.NDArray[np.uint8]

_ULAW_BIAS: Final = 0x84
_ULAW_CLIP: Final = 8159
_SEG_UEND: Final = np.array([0x3F, 0x7F, 0xFF, 0x1FF, 0x3FF, 0x7FF, 0xFFF, 0x1FFF], np.int32)
_SEG_AEND: Final = np.array([0x1F, 0x3F, 0x7F, 0xFF, 0x1FF, 0x3FF, 0x7FF, 0xFFF], np.int32)

#: The code a silent frame encodes to; used to fill frames when the source has nothing to say.
ULAW_SILENCE: Final = 0xFF
ALAW_SILENCE: Final = 0xD5


def _all_int16() -> npt.NDArray[np.int32]:
    """All 65,536 int16 values in the order of their uint16 bit pattern (the table index)."""
    return np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.int16).astype(np.int32)


def _build_ulaw_encode() -> UInt8Array:
    pcm = _all_int16() >> 2
    negative = pcm < 0
    mag = np.minimum(np.where(negative, -pcm, pcm), _ULAW_CLIP) + (_ULAW_BIAS >> 2)
    seg = np.searchsorted(_SEG_UEND, mag, side="left").astype(np.int32)
    code = (seg << 4) | ((mag >> (seg + 1)) & 0x0F)
    code = np.where(seg >= 8, 0x7F, code)
    mask = np.where(negative, 0x7F, 0xFF)
    return ((code ^ mask) & 0xFF).astype(np.uint8)


def _build_ulaw_decode() -> Int16Array:
    u = ~np.arange(256, dtype=np.int32) & 0xFF
    t = (((u & 0x0F) << 3) + _ULAW_BIAS) << ((u & 0x70) >> 4)
    return np.where(u & 0x80, _ULAW_BIAS - t, t - _ULAW_BIAS).astype(np.int16)


def _build_alaw_encode() -> UInt8Array:
    pcm = _all_int16() >> 3
    negative = pcm < 0
    mag = np.where(negative, -pcm - 1, pcm)
    mask = np.where(negative, 0x55, 0xD5)
    seg = np.searchsorted(_SEG_AEND, mag, side="left").astype(np.int32)
    shift = np.where(seg < 2, 1, seg)
    code = (np.minimum(seg, 7) << 4) | ((mag >> shift) & 0x0F)
    code = np.where(seg >= 8, 0x7F, code)
    return ((code ^ mask) & 0xFF).astype(np.uint8)


def _build_alaw_decode() -> Int16Array:
    a = np.arange(256, dtype=np.int32) ^ 0x55
    seg = (a & 0x70) >> 4
    t = (a & 0x0F) << 4
    t = np.where(seg == 0, t + 8, (t + 0x108) << np.maximum(seg - 1, 0))
    return np.where(a & 0x80, t, -t).astype(np.int16)


class G711Codec:
    """One G.711 law: encode int16 PCM to 8-bit codes and back, by table lookup.

    Instances are immutable after construction and can be shared by every call.
    """

    __slots__ = ("_decode", "_encode", "name", "payload_type", "silence")

    def __init__(
        self, name: str, payload_type: int, encode: UInt8Array, decode: Int16Array, silence: int
    ) -> None:
        self.name = name
        self.payload_type = payload_type
        self.silence = silence
        self._encode = encode
        self._decode = decode
        self._encode.flags.writeable = False
        self._decode.flags.writeable = False

    @property
    def encode_table(self) -> UInt8Array:
        """Code for every int16 input, indexed by the input's uint16 bit pattern."""
        return self._encode

    @property
    def decode_table(self) -> Int16Array:
        """Linear value for each of the 256 codes."""
        return self._decode

    def encode(self, samples: npt.NDArray[np.int16]) -> bytes:
        """Encode int16 samples to one byte per sample."""
        pcm = np.ascontiguousarray(samples, dtype=np.int16)
        return self._encode[pcm.view(np.uint16)].tobytes()

    def decode(self, payload: bytes) -> Int16Array:
        """Decode a payload (one byte per sample) to int16 samples."""
        return self._decode[np.frombuffer(payload, dtype=np.uint8)]

    def __repr__(self) -> str:
        return f"G711Codec({self.name!r}, payload_type={self.payload_type})"


#: PCMU, static RTP payload type 0 (RFC 3551).
ULAW: Final = G711Codec("PCMU", 0, _build_ulaw_encode(), _build_ulaw_decode(), ULAW_SILENCE)
#: PCMA, static RTP payload type 8 (RFC 3551).
ALAW: Final = G711Codec("PCMA", 8, _build_alaw_encode(), _build_alaw_decode(), ALAW_SILENCE)


def codec_by_name(name: str) -> G711Codec:
    """The codec for an SDP encoding name (case-insensitive)."""
    upper = name.upper()
    if upper == "PCMU":
        return ULAW
    if upper == "PCMA":
        return ALAW
    raise KeyError(name)
