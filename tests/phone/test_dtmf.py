"""DTMF: RFC 4733 payloads, de-duplication, SIP INFO bodies and the in-band detector."""

from __future__ import annotations

import subprocess

import numpy as np
import numpy.typing as npt
import pytest

from tests.needs import need
from vollmond.phone.dtmf import (
    EVENT_DIGITS,
    DtmfParseError,
    DtmfReceiver,
    InbandDtmfDetector,
    TelephoneEvent,
    goertzel_basis,
    goertzel_power,
    parse_info_dtmf,
    parse_telephone_event,
)
from vollmond.phone.g711 import ULAW

FS = 8000
LOW = {"1": 697, "2": 697, "3": 697, "A": 697, "4": 770, "5": 770, "6": 770, "B": 770}
LOW |= {"7": 852, "8": 852, "9": 852, "C": 852, "*": 941, "0": 941, "#": 941, "D": 941}
HIGH = {"1": 1209, "4": 1209, "7": 1209, "*": 1209, "2": 1336, "5": 1336, "8": 1336, "0": 1336}
HIGH |= {"3": 1477, "6": 1477, "9": 1477, "#": 1477, "A": 1633, "B": 1633, "C": 1633, "D": 1633}


# --- RFC 4733 -----------------------------------------------------------------------------


def test_parse_telephone_event_fields() -> None:
    ev = parse_telephone_event(bytes([11, 0x80 | 10, 0x03, 0x20]))
    assert ev == TelephoneEvent(event=11, end=True, volume=10, duration=800)
    assert ev.digit == "#"
    assert ev.build() == bytes([11, 0x8A, 0x03, 0x20])
    assert parse_telephone_event(bytes([16, 0, 0, 0])).digit is None  # a tone, not a key


def test_parse_telephone_event_too_short() -> None:
    with pytest.raises(DtmfParseError):
        parse_telephone_event(b"\x01\x02")


def _event_packets(event: int, timestamp: int) -> list[tuple[int, bytes]]:
    """A press as a phone sends it: start, updates, then the end packet three times."""
    pkts = [(timestamp, TelephoneEvent(event, False, 10, d).build()) for d in (160, 320, 480)]
    pkts += [(timestamp, TelephoneEvent(event, True, 10, 640).build())] * 3
    return pkts


def test_receiver_reports_each_press_once() -> None:
    rx = DtmfReceiver()
    got = []
    for i, event in enumerate([1, 1, 0, 11, 10]):  # the same key twice in a row counts twice
        for ts, payload in _event_packets(event, 1000 + i * 2000):
            digit = rx.feed(0x1234, ts, payload)
            if digit is not None:
                got.append(digit)
    assert got == ["1", "1", "0", "#", "*"]


def test_receiver_reports_press_whose_start_packets_were_lost() -> None:
    rx = DtmfReceiver()
    end = TelephoneEvent(5, True, 10, 800).build()
    assert [rx.feed(1, 5000, end) for _ in range(3)] == ["5", None, None]


def test_receiver_distinguishes_ssrc_and_forgets_old_keys() -> None:
    rx = DtmfReceiver(memory=2)
    p = TelephoneEvent(2, True, 10, 800).build()
    assert rx.feed(1, 100, p) == "2"
    assert rx.feed(2, 100, p) == "2"
    assert rx.feed(1, 100, p) is None
    rx.feed(1, 200, p)
    rx.feed(1, 300, p)
    assert rx.feed(1, 100, p) == "2"  # evicted from the bounded memory


# --- SIP INFO -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ctype", "body", "digit"),
    [
        ("application/dtmf-relay", b"Signal=5\r\nDuration=160\r\n", "5"),
        ("Application/DTMF-Relay; charset=x", b"signal= #\nDuration=250", "#"),
        ("application/dtmf-relay", b"Signal=10\r\nDuration=160\r\n", "*"),
        ("application/dtmf-relay", b"Signal=11\r\n", "#"),
        ("application/dtmf", b"7", "7"),
        ("application/dtmf", b"d\r\n", "D"),
    ],
)
def test_info_bodies(ctype: str, body: bytes, digit: str) -> None:
    assert parse_info_dtmf(ctype, body) == digit


@pytest.mark.parametrize(
    ("ctype", "body"),
    [
        ("application/dtmf-relay", b"Duration=160\r\n"),
        ("application/dtmf-relay", b"Signal=X\r\n"),
        ("application/dtmf-relay", b"Signal=\xff"),
        ("application/dtmf", b"55"),
        ("text/plain", b"5"),
    ],
)
def test_info_bodies_rejected(ctype: str, body: bytes) -> None:
    with pytest.raises(DtmfParseError):
        parse_info_dtmf(ctype, body)


# --- Goertzel -------------------------------------------------------------------------------


def _scalar_goertzel(x: npt.NDArray[np.float64], freq: float) -> float:
    coeff = 2.0 * np.cos(2.0 * np.pi * freq / FS)
    s1 = s2 = 0.0
    for v in x:
        s0 = float(v) + coeff * s1 - s2
        s2, s1 = s1, s0
    return float(s1 * s1 + s2 * s2 - coeff * s1 * s2)


def test_matrix_form_equals_goertzel_recurrence() -> None:
    rng = np.random.default_rng(1)
    block = rng.normal(0, 1000, 205)
    freqs = (697.0, 1209.0, 1633.0)
    got = goertzel_power(block[None, :], goertzel_basis(freqs, 205, FS))[0]
    want = [_scalar_goertzel(block, f) for f in freqs]
    np.testing.assert_allclose(got, want, rtol=1e-9)


def _tone(
    digit: str,
    ms: int,
    rng: np.random.Generator,
    level: float,
    *,
    twist_db: float = 0.0,
    dev: float = 0.0,
) -> npt.NDArray[np.float64]:
    t = np.arange(ms * FS // 1000) / FS
    lo = LOW[digit] * (1 + rng.uniform(-dev, dev))
    hi = HIGH[digit] * (1 + rng.uniform(-dev, dev))
    a_hi = level * 10 ** (twist_db / 20)
    phase = rng.uniform(0, 2 * np.pi, 2)
    out: npt.NDArray[np.float64] = level * np.sin(2 * np.pi * lo * t + phase[0])
    out += a_hi * np.sin(2 * np.pi * hi * t + phase[1])
    return out


def _detect(signal: npt.NDArray[np.float64], frame: int = 160) -> list[str]:
    det = InbandDtmfDetector()
    pcm = np.clip(signal, -32768, 32767).astype(np.int16)
    # Through G.711, as it would arrive from a call, and in 20 ms frames.
    pcm = ULAW.decode(ULAW.encode(pcm))
    digits: list[str] = []
    for i in range(0, len(pcm), frame):
        digits += det.feed(pcm[i : i + frame])
    return digits


def _sequence(digits: str, rng: np.random.Generator, snr_db: float) -> npt.NDArray[np.float64]:
    parts = [np.zeros(400)]
    for d in digits:
        level = rng.uniform(1500, 8000)
        parts.append(
            _tone(d, int(rng.integers(60, 120)), rng, level, twist_db=rng.uniform(-3, 3), dev=0.015)
        )
        parts.append(np.zeros(int(rng.integers(50, 100)) * FS // 1000))
    sig = np.concatenate(parts)
    tone_power = np.mean(sig[sig != 0] ** 2)
    noise = rng.normal(0, np.sqrt(tone_power / 10 ** (snr_db / 10)), len(sig))
    return sig + noise


def test_all_sixteen_digits_detected_with_noise() -> None:
    rng = np.random.default_rng(16)
    assert _detect(_sequence(EVENT_DIGITS, rng, snr_db=20)) == list(EVENT_DIGITS)


def test_detection_accuracy_over_many_random_presses() -> None:
    rng = np.random.default_rng(4733)
    total = missed = 0
    for _ in range(20):
        digits = "".join(rng.choice(list(EVENT_DIGITS), 32))
        got = _detect(_sequence(digits, rng, snr_db=18))
        total += len(digits)
        missed += len(digits) != len(got) or got != list(digits)
    assert total == 640
    assert missed == 0


def test_held_key_and_odd_frame_sizes_give_one_digit() -> None:
    rng = np.random.default_rng(3)
    sig = np.concatenate([_tone("5", 1500, rng, 5000), np.zeros(800)])
    assert _detect(sig, frame=37) == ["5"]


def test_weak_twisted_or_short_tones_rejected() -> None:
    rng = np.random.default_rng(5)
    assert _detect(_tone("1", 200, rng, 100)) == []  # below the energy floor
    assert _detect(_tone("1", 200, rng, 4000, twist_db=12)) == []  # 12 dB normal twist
    assert _detect(_tone("1", 200, rng, 4000, twist_db=-8)) == []  # 8 dB reverse twist
    assert _detect(np.concatenate([_tone("1", 15, rng, 4000), np.zeros(800)])) == []


def _vowel(
    f0: float, formants: tuple[float, ...], ms: int, rng: np.random.Generator
) -> npt.NDArray[np.float64]:
    """A crude voiced sound: a glottal harmonic series with vibrato and cycle-to-cycle jitter
    (about 1 %, as in real voices), shaped by three formant resonances."""
    n = ms * FS // 1000
    t = np.arange(n) / FS
    jitter = np.cumsum(rng.normal(0, 0.01, n)) * 0.02
    f0_track = f0 * (1 + 0.03 * np.sin(2 * np.pi * rng.uniform(2, 6) * t) + jitter)
    phase = 2 * np.pi * np.cumsum(f0_track) / FS
    out = np.zeros(n)
    bandwidths = (90.0, 110.0, 160.0)
    for k in range(1, int(3400 / f0)):
        fk = k * f0
        gain = sum(
            1.0 / np.sqrt(1 + ((fk - f) / (bw / 2)) ** 2)
            for f, bw in zip(formants, bandwidths, strict=True)
        )
        # Source falls about 6 dB per octave after lip radiation.
        out += gain / k * np.sin(k * phase + rng.uniform(0, 2 * np.pi))
    return out


def test_speech_like_signals_give_no_digits() -> None:
    rng = np.random.default_rng(9)
    vowels = [
        (700, 1200, 2500),
        (300, 2300, 3000),
        (500, 1500, 2500),
        (350, 800, 2300),
        (900, 1300, 2600),
        (750, 1650, 2700),
    ]
    parts = []
    for _ in range(300):
        formants = vowels[int(rng.integers(len(vowels)))]
        v = _vowel(rng.uniform(80, 300), formants, int(rng.integers(60, 300)), rng)
        parts.append(v / np.max(np.abs(v)) * rng.uniform(2000, 20000))
        parts.append(rng.normal(0, rng.uniform(10, 2000), int(rng.integers(100, 1500))))
    speechy = np.concatenate(parts)
    assert len(speechy) / FS > 60
    assert _detect(speechy) == []
    assert _detect(rng.normal(0, 6000, FS * 30)) == []


def _espeak(text: str, voice: str) -> npt.NDArray[np.float64]:
    espeak = subprocess.run(
        ["espeak-ng", "-v", voice, "-s", "160", "--stdout", text], check=True, capture_output=True
    ).stdout
    raw = subprocess.run(
        [
            "sox",
            "-t",
            "wav",
            "-",
            "-t",
            "raw",
            "-r",
            "8000",
            "-e",
            "signed",
            "-b",
            "16",
            "-c",
            "1",
            "-",
        ],
        input=espeak,
        check=True,
        capture_output=True,
    ).stdout
    return np.frombuffer(raw, dtype="<i2").astype(np.float64)


def test_espeak_speech_gives_no_digits() -> None:
    need("espeak-ng", "sox")
    texts = [
        (
            "de",
            "Willkommen im Dorf. Die Nacht bricht herein, alle Dorfbewohner schlafen ein. "
            "Die Werwölfe erwachen und wählen ihr Opfer. Hausnummer fünf, bitte bestätigen.",
        ),
        ("de", "Eins zwei drei vier fünf sechs sieben acht neun null. Stern. Raute."),
        ("en", "The quick brown fox jumps over the lazy dog while the villagers sleep."),
        ("de", "Aaaaah! Iiiiih! Uuuuuh! Ooooh! Eeeeeh! Hallo? Hallo, hören Sie mich?"),
    ]
    speech = np.concatenate([_espeak(text, voice) for voice, text in texts])
    assert len(speech) / FS > 15
    for gain in (0.5, 1.0, 3.0):
        assert _detect(speech * gain) == []


def test_digits_detected_over_speech_in_the_background() -> None:
    need("espeak-ng", "sox")
    rng = np.random.default_rng(11)
    digits = "1590#*"
    tones = _sequence(digits, rng, snr_db=30)
    speech = _espeak("Bitte wählen Sie jetzt die Hausnummer und bestätigen mit Raute.", "de")
    speech = np.resize(speech, len(tones)) * 0.1
    assert _detect(tones + speech) == list(digits)
