"""CPU of the parts of one browser voice peer's 20 ms, measured apart (no network, no loop).

    .venv/bin/python -m benchmarks.voice_parts

`benchmarks/voice_load.py` measures a whole peer in the running service (about 2.5 % of a core,
i.e. ~500 µs per 20 ms); this tells which of the codec steps that are ours to choose cost how
much, per 20 ms frame, as the best of five runs of 500 frames (``time.process_time``):

* the browser's Opus decoded by aiortc's decoder (48 kHz stereo), as the service receives it;
* ``Downsampler``: that 48 kHz stereo frame to the mixer's 8 kHz mono (libswresample);
* ``NarrowbandOpus``: the listener's 8 kHz mix to Opus, with the frame made from the mix,
  for the service's settings and for other libopus applications and complexities.

What remains of a peer's cost is aiortc's per-packet path (SRTP, RTP, jitter buffer, the decoder
thread's hand-over to the event loop, RTCP), which this does not measure.
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

    from vollmond.voice.webrtc import Downsampler, NarrowbandOpus  # noqa: PLC0415

    packets = browser_packets()
    decoder = OpusDecoder()
    decoded = [
        frame
        for i, packet in enumerate(packets)
        for frame in decoder.decode(JitterFrame(data=packet, timestamp=i * 960))
        if isinstance(frame, av.AudioFrame)
    ]
    samples = mixes()

    def decode() -> None:
        d = OpusDecoder()
        for i, packet in enumerate(packets):
            d.decode(JitterFrame(data=packet, timestamp=i * 960))

    def downsample() -> None:
        down = Downsampler()
        for frame in decoded:
            down.feed(frame)

    def encoder(application: str | None = None, complexity: int | None = None) -> Any:
        opus = NarrowbandOpus()
        if application is not None:
            codec = av.CodecContext.create("libopus", "w")
            assert isinstance(codec, av.AudioCodecContext)
            codec.bit_rate = NarrowbandOpus.BITRATE
            codec.format = "s16"
            codec.layout = "mono"
            codec.sample_rate = 8000
            codec.time_base = fractions.Fraction(1, 8000)
            codec.options = {"application": application, "compression_level": str(complexity)}
            opus._codec = codec
        return opus

    def encode(opus: Any) -> Callable[[], None]:
        def run() -> None:
            for i, mix in enumerate(samples):
                frame = av.AudioFrame.from_ndarray(mix.reshape(1, -1), format="s16", layout="mono")
                frame.sample_rate = 8000
                frame.pts = i * 160
                frame.time_base = fractions.Fraction(1, 8000)
                opus.encode(frame)

        return run

    figures = {
        "opus_decode_48k_stereo_us": cpu_us(decode),
        "downsample_48k_to_8k_us": cpu_us(downsample),
        "narrowband_opus_encode_us (service: voip, 0)": cpu_us(encode(encoder())),
    }
    for application, complexity in (("voip", 10), ("audio", 0), ("lowdelay", 0)):
        key = f"opus_encode_{application}_{complexity}_us"
        figures[key] = cpu_us(encode(encoder(application, complexity)))
    return figures


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
