"""CPU of the parts of one browser voice peer's 20 ms, measured apart (no network, no loop).

    .venv/bin/python -m benchmarks.voice_parts

`benchmarks/voice_load.py` measures a whole peer in the running service; this tells what the
codec steps cost, per 20 ms frame, as the best of five runs of 500 frames
(``time.process_time``), the service's way beside the way it went before (issue 13):

* a browser's Opus (48 kHz, as a browser sends it) decoded by libopus straight to 8 kHz mono
  (``NarrowbandDecoder``, what ``InlineOpus`` does on the event loop), beside aiortc's decoder
  (48 kHz stereo) followed by ``Downsampler`` (libswresample to 8 kHz mono, still the G.711
  path's resampler);
* the listener's 8 kHz mix to Opus: ``NarrowbandEncoder`` (libopus called with the samples)
  beside PyAV's libopus encoder with the same settings (an ``AudioFrame`` made per mix), and
  libopus at complexity 10 for comparison.

What remains of a peer's cost is aiortc's per-packet path (SRTP, RTP, jitter buffer, the
sender's task, RTCP), which this does not measure.
"""

from __future__ import annotations

import argparse
import fractions
import json
import time
from collections.abc import Callable
from typing import Any

import av
import numpy as np

FRAMES = 500


def cpu_us(run: Callable[[], object], repeats: int = 5) -> float:
    """Best-of CPU microseconds per frame of ``run`` (which handles FRAMES frames)."""
    best = float("inf")
    for _ in range(repeats):
        began = time.process_time()
        run()
        best = min(best, time.process_time() - began)
    return best / FRAMES * 1e6


def browser_packets() -> list[bytes]:
    """Opus packets as a browser sends them (aiortc's encoder: 48 kHz, 20 ms)."""
    from aiortc.codecs.opus import OpusEncoder  # noqa: PLC0415

    encoder = OpusEncoder()
    packets: list[bytes] = []
    for i in range(FRAMES):
        t = np.arange(i * 960, (i + 1) * 960) / 48000
        wave = (5000 * np.sin(2 * np.pi * (300 + 200 * np.sin(t)) * t)).astype(np.int16)
        frame = av.AudioFrame.from_ndarray(wave.reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate = 48000
        frame.pts = i * 960
        frame.time_base = fractions.Fraction(1, 48000)
        packets += encoder.encode(frame)[0]
    return packets


def mixes() -> list[Any]:
    t = np.arange(FRAMES * 160) / 8000
    wave = (4000 * np.sin(2 * np.pi * (300 + 200 * np.sin(t)) * t)).astype(np.int16)
    return [wave[i * 160 : (i + 1) * 160] for i in range(FRAMES)]


def measure() -> dict[str, float]:
    from aiortc.codecs.opus import OpusDecoder  # noqa: PLC0415
    from aiortc.jitterbuffer import JitterFrame  # noqa: PLC0415

    from vollmond.voice.opus import NarrowbandDecoder, NarrowbandEncoder  # noqa: PLC0415
    from vollmond.voice.webrtc import Downsampler  # noqa: PLC0415

    packets = browser_packets()
    samples = mixes()

    def decode_8k() -> None:
        decoder = NarrowbandDecoder()
        for packet in packets:
            decoder.decode(packet)

    def decode_48k_and_downsample() -> None:
        decoder, down = OpusDecoder(), Downsampler()
        for i, packet in enumerate(packets):
            for frame in decoder.decode(JitterFrame(data=packet, timestamp=i * 960)):
                if isinstance(frame, av.AudioFrame):
                    down.feed(frame)

    def encode_direct(complexity: int = NarrowbandEncoder.COMPLEXITY) -> Callable[[], None]:
        def run() -> None:
            encoder = NarrowbandEncoder(complexity)
            for mix in samples:
                encoder.encode(mix)

        return run

    def encode_pyav() -> None:
        codec = av.CodecContext.create("libopus", "w")
        assert isinstance(codec, av.AudioCodecContext)
        codec.bit_rate = NarrowbandEncoder.BITRATE
        codec.format = "s16"
        codec.layout = "mono"
        codec.sample_rate = 8000
        codec.time_base = fractions.Fraction(1, 8000)
        codec.options = {"application": "voip", "compression_level": "0"}
        for i, mix in enumerate(samples):
            frame = av.AudioFrame.from_ndarray(mix.reshape(1, -1), format="s16", layout="mono")
            frame.sample_rate = 8000
            frame.pts = i * 160
            frame.time_base = fractions.Fraction(1, 8000)
            for packet in codec.encode(frame):
                bytes(packet)

    return {
        "decode_browser_opus_to_8k_us (service)": cpu_us(decode_8k),
        "decode_48k_stereo_then_downsample_us (before)": cpu_us(decode_48k_and_downsample),
        "encode_mix_narrowband_us (service: voip, 0)": cpu_us(encode_direct()),
        "encode_mix_through_pyav_us (before, same settings)": cpu_us(encode_pyav),
        "encode_mix_complexity_10_us": cpu_us(encode_direct(10)),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    figures = measure()
    if args.json:
        print(json.dumps(figures))
        return
    print(f"CPU per 20 ms frame (best of 5 × {FRAMES} frames)")
    for key, value in figures.items():
        print(f"  {key:48} {value:7.1f} µs  ({value / 200:.2f} % of a core per peer)")


if __name__ == "__main__":
    main()
