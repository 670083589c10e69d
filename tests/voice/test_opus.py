"""libopus at 8 kHz (vollmond.voice.opus) and the browser's Opus decoded on the event loop
(:class:`~vollmond.voice.webrtc.InlineOpus`) instead of in aiortc's decoder thread."""

from __future__ import annotations

import fractions
import queue
from types import SimpleNamespace
from typing import Any

import av
import numpy as np
import pytest
from aiortc import RTCPeerConnection
from aiortc.codecs.opus import OpusEncoder
from aiortc.jitterbuffer import JitterFrame

from vollmond.voice.frames import FRAME_SAMPLES, SAMPLE_RATE, Int16Array
from vollmond.voice.opus import NarrowbandDecoder, NarrowbandEncoder, version
from vollmond.voice.webrtc import InlineOpus, Reframer, decode_inline


def tone(freq: float, frames: int, rate: int = SAMPLE_RATE) -> list[Int16Array]:
    size = rate // 50
    t = np.arange(frames * size) / rate
    wave = (6000 * np.sin(2 * np.pi * freq * t)).astype(np.int16)
    return [wave[i * size : (i + 1) * size] for i in range(frames)]


def peak_hz(samples: Int16Array) -> float:
    spectrum = np.abs(np.fft.rfft(samples.astype(np.float64) * np.hanning(len(samples))))
    return float(np.argmax(spectrum) * SAMPLE_RATE / len(samples))


def browser_packets(freq: float, frames: int) -> list[bytes]:
    """Opus as a browser's sender makes it: 48 kHz (aiortc's encoder, fullband)."""
    encoder = OpusEncoder()
    packets: list[bytes] = []
    for i, samples in enumerate(tone(freq, frames, 48000)):
        frame = av.AudioFrame.from_ndarray(samples.reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate = 48000
        frame.pts = i * 960
        frame.time_base = fractions.Fraction(1, 48000)
        packets += encoder.encode(frame)[0]
    return packets


def test_the_library_is_found() -> None:
    assert version().startswith("libopus")


def test_a_narrowband_round_trip_keeps_the_tone_and_the_frame_size() -> None:
    encoder, decoder = NarrowbandEncoder(), NarrowbandDecoder()
    out = [decoder.decode(encoder.encode(frame)) for frame in tone(440.0, 50)]
    assert all(o is not None and o.shape == (FRAME_SAMPLES,) for o in out)
    heard = np.concatenate([o for o in out if o is not None])[2000:]
    assert abs(peak_hz(heard) - 440.0) < 10.0
    assert np.sqrt(np.mean(heard.astype(np.float64) ** 2)) > 2000.0


def test_a_browsers_fullband_opus_is_decoded_straight_to_8_khz() -> None:
    decoder = NarrowbandDecoder()
    out = [decoder.decode(packet) for packet in browser_packets(1000.0, 50)]
    assert all(o is not None and o.shape == (FRAME_SAMPLES,) for o in out)
    heard = np.concatenate([o for o in out if o is not None])[2000:]
    assert abs(peak_hz(heard) - 1000.0) < 10.0


def test_the_mix_is_encoded_bit_for_bit_as_pyavs_libopus_encoded_it() -> None:
    """Same library, same settings (24 kbit/s unconstrained VBR, voip, complexity 0): a
    browser hears exactly the packets the service sent before it called libopus itself."""
    t = np.arange(100 * FRAME_SAMPLES) / SAMPLE_RATE
    wave = 5000 * (0.5 + 0.5 * np.sin(2 * np.pi * 3 * t)) * np.sin(2 * np.pi * 400 * t)
    frames = [f.astype(np.int16) for f in np.split(wave, 100)]
    codec = av.CodecContext.create("libopus", "w")
    assert isinstance(codec, av.AudioCodecContext)
    codec.bit_rate, codec.format, codec.layout = NarrowbandEncoder.BITRATE, "s16", "mono"
    codec.sample_rate, codec.time_base = SAMPLE_RATE, fractions.Fraction(1, SAMPLE_RATE)
    codec.options = {"application": "voip", "compression_level": str(NarrowbandEncoder.COMPLEXITY)}
    pyav: list[bytes] = []
    for i, samples in enumerate(frames):
        frame = av.AudioFrame.from_ndarray(samples.reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate, frame.pts = SAMPLE_RATE, i * FRAME_SAMPLES
        frame.time_base = fractions.Fraction(1, SAMPLE_RATE)
        pyav += [bytes(packet) for packet in codec.encode(frame)]
    encoder = NarrowbandEncoder()
    assert [encoder.encode(samples) for samples in frames] == pyav


def test_a_broken_packet_is_dropped() -> None:
    assert NarrowbandDecoder().decode(b"\xff\xff\xff") is None


def test_the_encoder_takes_only_whole_int16_frames() -> None:
    with pytest.raises(ValueError, match="160"):
        NarrowbandEncoder().encode(np.zeros(80, dtype=np.int16))


def test_the_reframer_cuts_any_pieces_into_whole_frames() -> None:
    frames = Reframer()
    assert frames.feed(np.arange(100, dtype=np.int16)) == []
    out = frames.feed(np.arange(100, 500, dtype=np.int16))  # 40 ms more, 60 ms in all
    assert [len(f) for f in out] == [160, 160, 160]
    assert np.array_equal(np.concatenate(out), np.arange(480, dtype=np.int16))
    assert [len(f) for f in frames.feed(np.zeros(180, dtype=np.int16))] == [160]


def item(codec: str, data: bytes) -> tuple[Any, JitterFrame]:
    return SimpleNamespace(name=codec), JitterFrame(data=data, timestamp=0)


def test_inline_opus_decodes_opus_into_the_mixer_and_leaves_the_rest_to_the_thread() -> None:
    inner: queue.Queue[Any] = queue.Queue()
    taken: list[Int16Array] = []
    inline = InlineOpus(inner, taken.append)
    for packet in browser_packets(1000.0, 10):
        inline.put(item("opus", packet))
    assert len(taken) == 10 and all(f.shape == (FRAME_SAMPLES,) for f in taken)
    assert inner.empty()  # no Opus reached aiortc's decoder thread
    pcmu = item("PCMU", b"\xff" * 160)
    inline.put(pcmu)
    inline.put(None)  # the end of the stream still stops the thread and the track
    assert inline.get() is pcmu and inline.get() is None
    assert len(taken) == 10 and inline.packets == 10


def test_a_failing_taker_does_not_end_the_connection() -> None:
    """``put`` runs inside aiortc's DTLS transport loop, which closes the connection on any
    exception; a fault behind it costs the frame, not the call."""

    def broken(samples: Int16Array) -> None:
        raise RuntimeError("mixer fault")

    inline = InlineOpus(queue.Queue(), broken)
    for packet in browser_packets(1000.0, 2):
        inline.put(item("opus", packet))
    assert inline.packets == 2


def test_without_a_taker_opus_is_counted_and_dropped_undecoded() -> None:
    inner: queue.Queue[Any] = queue.Queue()
    inline = InlineOpus(inner, None)
    inline.put(item("opus", b"\xff\xff\xff"))  # not even decodable: never decoded
    assert inline.packets == 1 and inner.empty()


async def test_aiortcs_receiver_takes_the_inline_decoder() -> None:
    """Guards the seam: an aiortc that moved its decoder queue fails here, not in silence."""
    pc = RTCPeerConnection()
    try:
        receiver = pc.addTransceiver("audio").receiver
        assert decode_inline(receiver, lambda samples: None)
        assert decode_inline(receiver, lambda samples: None)  # once only
        assert isinstance(receiver._RTCRtpReceiver__decoder_queue, InlineOpus)  # type: ignore[attr-defined]
        assert not decode_inline(SimpleNamespace(), lambda samples: None)
    finally:
        await pc.close()
