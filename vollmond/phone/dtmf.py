"""DTMF from the three places a caller's key presses arrive.

* RFC 4733 telephone-events in RTP: each event is sent as several packets sharing one RTP
  timestamp, and the end packet is repeated (usually three times) for robustness, so the
  receiver reports one digit per (SSRC, timestamp) and ignores the rest.
* SIP INFO bodies (``application/dtmf-relay`` and ``application/dtmf``), sent by some PBXs.
* In-band tones in the audio, for gateways that negotiate no telephone-event: a Goertzel
  detector in numpy, cheap enough to run on every call.
"""

from __future__ import annotations

import struct
from collections import deque
from dataclasses import dataclass, field
from typing import Final

import numpy as np
import numpy.typing as npt

#: RFC 4733 event codes 0-15 in order.
EVENT_DIGITS: Final = "0123456789*#ABCD"

_LOW_FREQS: Final = (697.0, 770.0, 852.0, 941.0)
_HIGH_FREQS: Final = (1209.0, 1336.0, 1477.0, 1633.0)
_KEYPAD: Final = ("123A", "456B", "789C", "*0#D")
_TE: Final = struct.Struct("!BBH")


class DtmfParseError(ValueError):
    """A telephone-event payload or SIP INFO body that carries no valid digit."""


@dataclass(frozen=True, slots=True)
class TelephoneEvent:
    """An RFC 4733 §2.3 named-event payload."""

    event: int
    end: bool
    volume: int
    duration: int

    @property
    def digit(self) -> str | None:
        """The DTMF key, or None for non-DTMF events (tones, flash)."""
        return EVENT_DIGITS[self.event] if self.event < len(EVENT_DIGITS) else None

    def build(self) -> bytes:
        """Wire format, for tests and for sending events."""
        return _TE.pack(self.event, (0x80 if self.end else 0) | (self.volume & 0x3F), self.duration)


def parse_telephone_event(payload: bytes) -> TelephoneEvent:
    """Parse the first event of a payload (redundant events after it are ignored)."""
    if len(payload) < _TE.size:
        raise DtmfParseError(f"telephone-event payload too short: {len(payload)} bytes")
    event, flags, duration = _TE.unpack_from(payload)
    return TelephoneEvent(event, bool(flags & 0x80), flags & 0x3F, duration)


@dataclass(slots=True)
class DtmfReceiver:
    """Turns a stream of telephone-event packets into one digit per key press.

    A digit is reported on the first packet seen for a new (SSRC, timestamp), whether a start,
    update or end packet, so a press is neither lost when its first packets are dropped nor
    doubled by the repeated end packets. Only the last few keys are remembered: timestamps only
    repeat after the stream has moved on.
    """

    memory: int = 32
    _seen: deque[tuple[int, int]] = field(default_factory=deque, repr=False)

    def feed(self, ssrc: int, timestamp: int, payload: bytes) -> str | None:
        """The new digit this packet starts, if any; raises DtmfParseError on bad payloads."""
        event = parse_telephone_event(payload)
        key = (ssrc, timestamp)
        if key in self._seen:
            return None
        self._seen.append(key)
        while len(self._seen) > self.memory:
            self._seen.popleft()
        return event.digit


_SIGNAL_ALIASES: Final = {"10": "*", "11": "#", "12": "A", "13": "B", "14": "C", "15": "D"}


def _normalise_signal(value: str) -> str:
    signal = value.strip().upper()
    signal = _SIGNAL_ALIASES.get(signal, signal)
    if len(signal) != 1 or signal not in EVENT_DIGITS:
        raise DtmfParseError(f"not a DTMF signal: {value!r}")
    return signal


def parse_info_dtmf(content_type: str, body: bytes) -> str:
    """The digit in a SIP INFO body.

    ``application/dtmf-relay`` carries ``Signal=5`` and ``Duration=160`` lines;
    ``application/dtmf`` carries just the key. Some phones send 10/11 for * and #.
    """
    media_type = content_type.split(";", 1)[0].strip().lower()
    try:
        text = body.decode("ascii")
    except UnicodeDecodeError as exc:
        raise DtmfParseError("INFO body is not ASCII") from exc
    if media_type == "application/dtmf-relay":
        for line in text.splitlines():
            name, sep, value = line.partition("=")
            if sep and name.strip().lower() == "signal":
                return _normalise_signal(value)
        raise DtmfParseError("dtmf-relay body has no Signal line")
    if media_type == "application/dtmf":
        return _normalise_signal(text)
    raise DtmfParseError(f"unsupported INFO content type: {content_type!r}")


@dataclass(frozen=True, slots=True)
class GoertzelConfig:
    """Detector thresholds; the defaults follow the usual ITU-T Q.24 tolerances.

    ``min_tone_amplitude`` is the weakest tone (peak amplitude, int16 scale) accepted;
    twists are in dB; ``min_energy_ratio`` is the share of the block's energy the two tones
    must explain, which is what rejects speech and noise; ``min_peak_ratio`` is how much the
    winning tone of each group must exceed the others in its group.
    """

    sample_rate: int = 8000
    block: int = 205
    hop: int = 102
    min_tone_amplitude: float = 250.0
    max_normal_twist_db: float = 8.0
    max_reverse_twist_db: float = 6.0
    min_energy_ratio: float = 0.75
    min_peak_ratio_db: float = 10.0
    #: Relative frequency offsets probed around each nominal tone. A 205-sample block resolves
    #: 39 Hz, so a tone 1.5 % off (which Q.24 says must still be accepted) would lose up to
    #: 2.5 dB at the nominal frequency alone and fail the twist and energy checks.
    probe_offsets: tuple[float, ...] = (-0.012, 0.0, 0.012)


def goertzel_basis(freqs: tuple[float, ...], n: int, sample_rate: int) -> npt.NDArray[np.float64]:
    """Cosine and sine rows whose products with a block give the Goertzel outputs.

    The Goertzel recurrence and a DFT evaluated at the same frequency have equal squared
    magnitude; as a matrix product every block of every frequency costs one BLAS call instead
    of a Python-level loop over samples.
    """
    t = np.arange(n, dtype=np.float64)
    omega = 2.0 * np.pi * np.asarray(freqs, dtype=np.float64)[:, None] / sample_rate
    return np.ascontiguousarray(np.concatenate([np.cos(omega * t), np.sin(omega * t)]).T)


def goertzel_power(
    blocks: npt.NDArray[np.float64], basis: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    """Squared Goertzel magnitude per block (rows) and frequency (columns)."""
    proj = blocks @ basis
    half = basis.shape[1] // 2
    power: npt.NDArray[np.float64] = proj[:, :half] ** 2 + proj[:, half:] ** 2
    return power


class InbandDtmfDetector:
    """Streaming in-band DTMF detector for 8 kHz int16 audio.

    Blocks of 205 samples (the classic length that puts all eight tones near DFT bins) overlap
    by half; a digit is reported when two consecutive blocks agree, and again only after two
    blocks without it, so one press gives one digit however long the key is held.
    """

    def __init__(self, config: GoertzelConfig | None = None) -> None:
        self.config = config or GoertzelConfig()
        cfg = self.config
        probes = tuple(f * (1 + o) for o in cfg.probe_offsets for f in _LOW_FREQS + _HIGH_FREQS)
        self._basis = goertzel_basis(probes, cfg.block, cfg.sample_rate)
        self._buffer = np.zeros(0, dtype=np.float64)
        # Sample indices of the blocks in the buffer; a 20 ms frame needs one or two.
        self._windows = np.arange(2)[:, None] * cfg.hop + np.arange(cfg.block)
        self._previous: str | None = None
        self._reported: str | None = None
        # A sinusoid of amplitude A gives |X|^2 = (N A / 2)^2 and energy N A^2 / 2.
        self._min_power = (cfg.block * cfg.min_tone_amplitude / 2.0) ** 2
        self._normal_twist = 10.0 ** (cfg.max_normal_twist_db / 10.0)
        self._reverse_twist = 10.0 ** (cfg.max_reverse_twist_db / 10.0)
        self._peak_ratio = 10.0 ** (cfg.min_peak_ratio_db / 10.0)
        # Two tones at the minimum amplitude carry at least this much block energy; quieter
        # blocks (most of a call) skip the tone analysis.
        self._min_energy = cfg.block * cfg.min_tone_amplitude**2

    def feed(self, samples: npt.NDArray[np.int16]) -> list[str]:
        """Digits confirmed by these samples (usually none)."""
        cfg = self.config
        buffer = np.concatenate((self._buffer, samples.astype(np.float64)))
        if len(buffer) < cfg.block:
            self._buffer = buffer
            return []
        count = 1 + (len(buffer) - cfg.block) // cfg.hop
        if count > len(self._windows):
            self._windows = np.arange(count)[:, None] * cfg.hop + np.arange(cfg.block)
        blocks = buffer[self._windows[:count]]
        self._buffer = buffer[count * cfg.hop :]
        digits: list[str] = []
        for candidate in self._classify(blocks):
            if candidate is not None and candidate == self._previous != self._reported:
                digits.append(candidate)
                self._reported = candidate
            elif self._reported not in (candidate, self._previous):
                # Released only after two blocks without the digit, so one noisy block in
                # the middle of a held key does not report it twice.
                self._reported = None
            self._previous = candidate
        return digits

    def _classify(self, blocks: npt.NDArray[np.float64]) -> list[str | None]:
        """Per block, the digit it shows or None.

        A phone call feeds one or two blocks per 20 ms frame, where numpy's per-call overhead
        dominates, so only the matrix product is vectorised and the checks run on floats.
        """
        energies = np.square(blocks).sum(axis=1).tolist()
        if max(energies) < self._min_energy:
            return [None] * len(energies)
        powers = goertzel_power(blocks, self._basis).reshape(len(blocks), -1, 8).max(axis=1)
        return [
            self._classify_one(row, energy)
            for row, energy in zip(powers.tolist(), energies, strict=True)
        ]

    def _classify_one(self, power: list[float], energy: float) -> str | None:
        # Cheapest, most often failing checks first: speech fails the energy ratio.
        if energy < self._min_energy:
            return None
        low, high = power[:4], power[4:]
        lo_p, hi_p = max(low), max(high)
        if (
            lo_p < self._min_power
            or hi_p < self._min_power
            or 2.0 * (lo_p + hi_p) / self.config.block < self.config.min_energy_ratio * energy
            or hi_p > lo_p * self._normal_twist
            or lo_p > hi_p * self._reverse_twist
            or lo_p < sorted(low)[-2] * self._peak_ratio
            or hi_p < sorted(high)[-2] * self._peak_ratio
        ):
            return None
        return _KEYPAD[low.index(lo_p)][high.index(hi_p)]
