"""A browser's voice without a browser: an aiortc peer signalled over the real WebSocket.

It does what voice.js does — hello with the seat token (or spectate), an SDP offer in
`voice_offer`, the `voice_answer` applied — and records everything it hears, resampled to
8 kHz, so a test can ask which tones reached it. Its microphone is a tone (or silence).
"""

from __future__ import annotations

import asyncio
import contextlib
import fractions
import json
from dataclasses import dataclass, field
from typing import Any

import av
import numpy as np
from aiortc import MediaStreamTrack, RTCConfiguration, RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import MediaStreamError
from websockets.asyncio.client import ClientConnection, connect

from vollmond.voice.frames import Int16Array
from vollmond.voice.webrtc import Downsampler

MIC_RATE = 48000
MIC_FRAME = 960  # 20 ms at 48 kHz, what a browser's microphone gives Opus


class ToneTrack(MediaStreamTrack):
    """A microphone that plays a sine (or silence when ``freq`` is None), paced in real time."""

    kind = "audio"

    def __init__(self, freq: float | None, amplitude: float = 6000.0) -> None:
        super().__init__()
        self.freq = freq
        self.amplitude = amplitude
        self._index = 0
        self._start: float | None = None

    async def recv(self) -> av.AudioFrame:
        loop = asyncio.get_running_loop()
        if self._start is None:
            self._start = loop.time()
        due = self._start + self._index * MIC_FRAME / MIC_RATE
        await asyncio.sleep(max(0.0, due - loop.time()))
        n = np.arange(self._index * MIC_FRAME, (self._index + 1) * MIC_FRAME)
        if self.freq is None:
            samples = np.zeros(MIC_FRAME, dtype=np.int16)
        else:
            wave = self.amplitude * np.sin(2 * np.pi * self.freq * n / MIC_RATE)
            samples = wave.astype(np.int16)
        frame = av.AudioFrame.from_ndarray(samples.reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate = MIC_RATE
        frame.pts = self._index * MIC_FRAME
        frame.time_base = fractions.Fraction(1, MIC_RATE)
        self._index += 1
        return frame


@dataclass(eq=False)
class VoiceClient:
    """One WebSocket and its voice peer; ``heard`` grows by 160 samples per 20 ms received."""

    ws: ClientConnection
    pc: RTCPeerConnection
    mic: ToneTrack
    heard: list[Int16Array] = field(default_factory=list)
    frames: list[dict[str, Any]] = field(default_factory=list)
    connected: asyncio.Event = field(default_factory=asyncio.Event)
    tasks: set[asyncio.Task[None]] = field(default_factory=set)

    def recording(self, skip_s: float = 0.0) -> Int16Array:
        """What it heard so far (the first ``skip_s`` seconds left out)."""
        if not self.heard:
            return np.zeros(0, dtype=np.int16)
        return np.concatenate(self.heard)[int(skip_s * 8000) :]

    def mark(self) -> int:
        """A point in the recording (frames so far), for `since`."""
        return len(self.heard)

    def since(self, mark: int) -> Int16Array:
        part = self.heard[mark:]
        return np.concatenate(part) if part else np.zeros(0, dtype=np.int16)

    async def listen(self, mark: int, seconds: float, limit_s: float = 30.0) -> Int16Array:
        """What it hears from `mark` on, once that is `seconds` of audio: counted in samples,
        not in wall time (a loaded machine delivers late, not less). Fails after `limit_s`."""
        frames = int(seconds * 50)
        async with asyncio.timeout(limit_s):
            while len(self.heard) - mark < frames:
                await asyncio.sleep(0.05)
        return np.concatenate(self.heard[mark : mark + frames])

    async def send(self, message: dict[str, Any]) -> None:
        await self.ws.send(json.dumps(message))

    async def expect(self, kind: str, timeout: float = 10.0) -> dict[str, Any]:
        async with asyncio.timeout(timeout):
            while True:
                frame: dict[str, Any] = json.loads(await self.ws.recv())
                self.frames.append(frame)
                if frame["type"] == kind:
                    return frame
                if frame["type"] == "error" and kind != "error":
                    raise AssertionError(f"expected {kind}, got {frame}")

    async def close(self) -> None:
        for task in self.tasks:
            task.cancel()
        await self.pc.close()
        with contextlib.suppress(Exception):
            await self.ws.close()


async def _record(client: VoiceClient, track: MediaStreamTrack) -> None:
    down = Downsampler()
    while True:
        try:
            frame = await track.recv()
        except MediaStreamError:
            return
        if isinstance(frame, av.AudioFrame):
            client.heard.extend(down.feed(frame))


async def open_voice(
    ws_url: str,
    game: str,
    token: str | None,
    tone: float | None = None,
    *,
    codec: str | None = None,
    cookie: str | None = None,
    operator: bool = False,
) -> VoiceClient:
    """Hello (seat token, or spectate when ``token`` is None), then offer voice; returns once
    the service answered and ICE is connected. ``codec`` ("PCMU") limits the offer to one.
    ``operator``: the moderators' console listening in (with the staff account's ``cookie``),
    receive-only as the console's page offers it."""
    headers = {"Cookie": cookie} if cookie else None
    ws = await connect(ws_url, max_size=2**20, max_queue=None, additional_headers=headers)
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    mic = ToneTrack(tone)
    client = VoiceClient(ws, pc, mic)
    hello: dict[str, Any] = {"type": "hello", "game": game}
    if operator:
        hello["operator"] = True
    else:
        hello.update({"token": token} if token else {"spectate": True})
    await client.send(hello)
    await client.expect("welcome")
    if operator:
        transceiver = pc.addTransceiver("audio", direction="recvonly")
    else:
        transceiver = pc.addTransceiver(mic, direction="sendrecv")
    if codec is not None:
        from aiortc.rtcrtpsender import RTCRtpSender  # noqa: PLC0415

        caps = RTCRtpSender.getCapabilities("audio").codecs
        transceiver.setCodecPreferences([c for c in caps if c.mimeType == f"audio/{codec}"])

    @pc.on("track")
    def on_track(track: MediaStreamTrack) -> None:
        task = asyncio.get_running_loop().create_task(_record(client, track))
        client.tasks.add(task)

    @pc.on("connectionstatechange")
    def on_state() -> None:
        if pc.connectionState == "connected":
            client.connected.set()

    offer = await pc.createOffer()
    await pc.setLocalDescription(offer)
    await client.send({"type": "voice_offer", "sdp": pc.localDescription.sdp})
    answer = await client.expect("voice_answer")
    await pc.setRemoteDescription(RTCSessionDescription(answer["sdp"], "answer"))
    await asyncio.wait_for(client.connected.wait(), 10)
    return client


async def listen_on(client: VoiceClient) -> asyncio.Task[None]:
    """Keep reading the socket (status messages) so it never backs up."""

    async def read() -> None:
        with contextlib.suppress(Exception):
            while True:
                client.frames.append(json.loads(await client.ws.recv()))

    task = asyncio.get_running_loop().create_task(read())
    client.tasks.add(task)
    return task
