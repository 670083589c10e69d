"""Call-progress tones at 8 kHz, made with numpy (German public network cadences).

Ringing (Freiton) 425 Hz 1 s on / 4 s off, busy (Besetztton) 425 Hz 480 ms on / 480 ms off,
a recording notice (two rising beeps, then a gap) and a short beep for "key accepted".
"""

from __future__ import annotations

import numpy as np

from vollmond.phone.session.prompts.voice import SAMPLE_RATE, Audio

LEVEL = 0.3  # of full scale: clearly audible, never clipping in the mixer


def tone(freq_hz: float | tuple[float, ...], ms: int, level: float = LEVEL) -> Audio:
    """A sine (or a sum of sines) with 5 ms fades so it does not click."""
    n = SAMPLE_RATE * ms // 1000
    t = np.arange(n) / SAMPLE_RATE
    freqs = freq_hz if isinstance(freq_hz, tuple) else (freq_hz,)
    wave = np.zeros(n)
    for f in freqs:
        wave += np.sin(2 * np.pi * f * t) / len(freqs)
    fade = min(n // 2, SAMPLE_RATE * 5 // 1000)
    if fade:
        ramp = np.linspace(0.0, 1.0, fade)
        wave[:fade] *= ramp
        wave[n - fade :] *= ramp[::-1]
    return (np.asarray(wave) * level * 32767).astype(np.int16)


def silence(ms: int) -> Audio:
    return np.zeros(SAMPLE_RATE * ms // 1000, dtype=np.int16)


def ringing(cycles: int = 1) -> Audio:
    """Freiton: what a caller hears while the other side rings."""
    return np.concatenate([np.concatenate([tone(425, 1000), silence(4000)])] * cycles)


def incoming_ring(cycles: int = 1) -> Audio:
    """What the called player hears: a double ring, distinct from the ringback."""
    burst = np.concatenate([tone((425, 475), 400), silence(200), tone((425, 475), 400)])
    return np.concatenate([np.concatenate([burst, silence(1000)])] * cycles)


def busy(cycles: int = 4) -> Audio:
    """Besetztton."""
    return np.concatenate([np.concatenate([tone(425, 480), silence(480)])] * cycles)


def recording_notice() -> Audio:
    """The notice tone before a recording starts (after the spoken warning)."""
    return np.concatenate([tone(880, 200), silence(100), tone(1320, 300), silence(300)])


def beep(ms: int = 120) -> Audio:
    return tone(1000, ms)
