"""Opus at the mixer's own rate: libopus called directly, 8 kHz mono both ways.

Why not through PyAV, as aiortc does: ffmpeg's libopus decoder always decodes at 48 kHz (aiortc
asks for stereo), so every 20 ms of a browser's voice was 1920 samples decoded and then
resampled down to the mixer's 160; libopus itself decodes straight to 8 kHz mono (about half the
CPU, and no resampler). On the way out, PyAV wants an ``AudioFrame`` with a timestamp and a
time base per 20 ms before libopus sees the samples; here the mix's int16 samples go to
``opus_encode`` as they are. The codec is the same libopus with the same settings (PyAV's own
bundled copy is preferred, so it is also the same version), so what anyone hears is unchanged.

libopus is found as PyAV's wheel bundles it, else as the system's ``libopus.so.0``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from pathlib import Path

import av
import numpy as np

from vollmond.voice.frames import FRAME_SAMPLES, SAMPLE_RATE, Int16Array

#: libopus constants (opus_defines.h).
_APPLICATION_VOIP = 2048
_SET_BITRATE = 4002
_SET_VBR = 4006
_SET_COMPLEXITY = 4010
_SET_VBR_CONSTRAINT = 4020
#: The longest Opus packet is 120 ms: 960 samples at 8 kHz.
MAX_PACKET_SAMPLES = 960
#: Room for one encoded packet (far above what 20 ms at 24 kbit/s needs).
MAX_PACKET_BYTES = 1500


class OpusUnavailableError(RuntimeError):
    """Neither PyAV's bundled libopus nor the system's could be loaded."""


def _candidates() -> list[str]:
    bundled = Path(av.__file__).resolve().parent.parent / "av.libs"
    found = [str(p) for p in sorted(bundled.glob("libopus*.so*"))]
    system = ctypes.util.find_library("opus")
    return [*found, *([system] if system else [])]


@functools.cache
def libopus() -> ctypes.CDLL:
    """The loaded libopus, with the signatures this module calls.

    Loaded as a ``PyDLL``: a call keeps the GIL. 20 ms of Opus takes microseconds, and
    releasing the GIL around each call would let another thread (aiortc's, the database's)
    take it and make the event loop wait for it back, up to the switch interval, per packet.
    """
    for path in _candidates():
        try:
            lib = ctypes.PyDLL(path)
        except OSError:
            continue
        lib.opus_get_version_string.restype = ctypes.c_char_p
        lib.opus_decoder_create.restype = ctypes.c_void_p
        lib.opus_decoder_create.argtypes = [ctypes.c_int32, ctypes.c_int, ctypes.c_void_p]
        lib.opus_decode.restype = ctypes.c_int
        lib.opus_decode.argtypes = [
            *(ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int32),
            *(ctypes.c_void_p, ctypes.c_int, ctypes.c_int),
        ]
        lib.opus_decoder_destroy.argtypes = [ctypes.c_void_p]
        lib.opus_encoder_create.restype = ctypes.c_void_p
        lib.opus_encoder_create.argtypes = [
            *(ctypes.c_int32, ctypes.c_int, ctypes.c_int, ctypes.c_void_p)
        ]
        lib.opus_encode.restype = ctypes.c_int32
        lib.opus_encode.argtypes = [
            *(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int),
            *(ctypes.c_void_p, ctypes.c_int32),
        ]
        lib.opus_encoder_ctl.restype = ctypes.c_int
        lib.opus_encoder_ctl.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int32]
        lib.opus_encoder_destroy.argtypes = [ctypes.c_void_p]
        return lib
    raise OpusUnavailableError("libopus not found (PyAV's bundled copy nor libopus.so.0)")


def version() -> str:
    """libopus's own version string (for the benchmarks' reports)."""
    return bytes(libopus().opus_get_version_string()).decode()


class NarrowbandDecoder:
    """Opus packets (any mode, any bandwidth the sender chose) to 8 kHz mono int16."""

    def __init__(self) -> None:
        lib = libopus()
        error = ctypes.c_int(0)
        state = lib.opus_decoder_create(SAMPLE_RATE, 1, ctypes.byref(error))
        if not state or error.value:
            raise OpusUnavailableError(f"opus_decoder_create failed ({error.value})")
        self._lib, self._state = lib, state
        self._out = np.zeros(MAX_PACKET_SAMPLES, dtype=np.int16)
        self._out_ptr = self._out.ctypes.data

    def decode(self, packet: bytes) -> Int16Array | None:
        """The packet's samples (a fresh array, 160 per 20 ms), or None for a packet libopus
        rejects (dropped, as aiortc's decoder thread drops one it cannot decode)."""
        count = self._lib.opus_decode(
            self._state, packet, len(packet), self._out_ptr, MAX_PACKET_SAMPLES, 0
        )
        if count < 0:
            return None
        return self._out[:count].copy()

    def __del__(self) -> None:
        state, self._state = getattr(self, "_state", None), None
        if state:
            self._lib.opus_decoder_destroy(state)


class NarrowbandEncoder:
    """The mixer's 20 ms frames to Opus packets, as the service sends them to a browser.

    Narrowband (8 kHz input), ``BITRATE`` unconstrained VBR, application voip, complexity
    ``COMPLEXITY``: the settings the service used through PyAV (ffmpeg's libopus wrapper
    defaults to unconstrained VBR, no FEC, no DTX)."""

    BITRATE = 24000
    #: libopus complexity 0: half the CPU of the default 10 for 8 kHz speech, still clearer
    #: than the G.711 the same mix reaches callers with.
    COMPLEXITY = 0

    def __init__(self, complexity: int = COMPLEXITY) -> None:
        lib = libopus()
        error = ctypes.c_int(0)
        state = lib.opus_encoder_create(SAMPLE_RATE, 1, _APPLICATION_VOIP, ctypes.byref(error))
        if not state or error.value:
            raise OpusUnavailableError(f"opus_encoder_create failed ({error.value})")
        self._lib, self._state = lib, state
        for request, value in (
            (_SET_BITRATE, self.BITRATE),
            (_SET_VBR, 1),
            (_SET_VBR_CONSTRAINT, 0),
            (_SET_COMPLEXITY, complexity),
        ):
            lib.opus_encoder_ctl(state, request, value)
        self._out = ctypes.create_string_buffer(MAX_PACKET_BYTES)

    def encode(self, samples: Int16Array) -> bytes:
        """One packet for one 20 ms frame (``FRAME_SAMPLES`` int16 samples)."""
        if samples.shape != (FRAME_SAMPLES,) or samples.dtype != np.int16:
            raise ValueError("a frame is 160 int16 samples")
        if not samples.flags.c_contiguous:
            samples = np.ascontiguousarray(samples)
        size = self._lib.opus_encode(
            self._state, samples.ctypes.data, FRAME_SAMPLES, self._out, MAX_PACKET_BYTES
        )
        if size < 0:
            raise RuntimeError(f"opus_encode failed ({size})")
        return self._out.raw[:size]

    def __del__(self) -> None:
        state, self._state = getattr(self, "_state", None), None
        if state:
            self._lib.opus_encoder_destroy(state)
