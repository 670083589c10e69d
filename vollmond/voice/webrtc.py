"""The browser's voice: one WebRTC peer per WebSocket, a line of the shared voice rooms.

A :class:`BrowserPeer` is to the browser what a telephone line is to a caller
(``vollmond.phone.service``): the browser's Opus is decoded straight to the mixer's 8 kHz
(:class:`InlineOpus`, G.711 and anything else through aiortc's own decoder and
:class:`Downsampler`) and pushed into the game's mixer as the seat's source; every 20 ms the
peer pulls its listener's own mix (a seat's row of the routing table, or the spectators' row),
encodes it as narrowband Opus and hands aiortc the packet. Nothing
the browser hears comes from anywhere else, so secrecy stays the routing table's: the peer
never decides who hears what, and a peer is bound for its whole life to the listener its
WebSocket proved (seat token or spectator) — a reload makes a new peer, never reuses one.

The service side, :class:`~vollmond.voice.browser.BrowserVoice`, answers offers, keeps the peers
and drives them all from one 20 ms clock, as the telephone's media ticker does; it imports this
module (aiortc, PyAV) with its first peer.
"""

from __future__ import annotations

import asyncio
import contextlib
import fractions
import queue
from collections import deque
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import av
import numpy as np
import structlog
from aiortc import (
    MediaStreamTrack,
    RTCConfiguration,
    RTCIceServer,
    RTCPeerConnection,
    RTCSessionDescription,
)
from aiortc.mediastreams import MediaStreamError
from aiortc.rtcconfiguration import RTCIceTransportPolicy
from aiortc.sdp import candidate_from_sdp

from vollmond.voice.browser import LineId, MutedCheck, StatusCallback, VoiceError
from vollmond.voice.frames import FRAME_SAMPLES, SAMPLE_RATE, Int16Array
from vollmond.voice.mixer import SPEAKING_RMS
from vollmond.voice.opus import NarrowbandDecoder, NarrowbandEncoder
from vollmond.voice.ports import limit_ports

if TYPE_CHECKING:
    from vollmond.voice.browser import BrowserVoice

log = structlog.get_logger(__name__)

#: Frames the outgoing queue holds before the oldest is dropped (a slow sender loses audio,
#: it never builds up delay).
OUT_QUEUE = 5
#: Ticks per status check (speaking houses and room, sent only when they change): 200 ms.
STATUS_TICKS = 10
#: Codecs the service takes, best first: Opus, then G.711 (what the telephone speaks).
CODECS = ("audio/opus", "audio/PCMU", "audio/PCMA")


#: The time base of the mix's timestamps (one sample at 8 kHz), made once.
TIME_BASE = fractions.Fraction(1, SAMPLE_RATE)
#: The mix of a tick nobody the listener hears speaks in (never written to).
SILENCE = np.zeros(FRAME_SAMPLES, dtype=np.int16)
SILENCE.flags.writeable = False


class MixTrack(MediaStreamTrack):
    """The audio the browser hears: one 8 kHz frame per tick of the voice clock.

    Once Opus is negotiated, every frame goes to aiortc as a finished packet (``av.Packet``)
    of narrowband Opus (:class:`~vollmond.voice.opus.NarrowbandEncoder`): aiortc's own encoder
    would resample each frame to 48 kHz stereo and encode at 96 kbit/s in a worker thread, and
    its sender would measure the level of every raw frame in Python; a mix that is 8 kHz
    telephone audio gains nothing from any of it. The RTP timestamp still counts 48 kHz, as
    the Opus RTP format demands (aiortc converts from ``TIME_BASE``).

    A silent mix is encoded like any other (no DTX, no skipped packets): the packets a
    browser receives come every 20 ms whatever it hears, so their timing tells an observer
    of the connection nothing about whether its listener hears anyone (docs/decisions.md)."""

    kind = "audio"

    def __init__(self) -> None:
        super().__init__()
        self._queue: deque[Int16Array | None] = deque(maxlen=OUT_QUEUE)
        self._ready = asyncio.Event()
        self._pts = 0
        self.opus: NarrowbandEncoder | None = None

    def put(self, frame: Int16Array | None) -> None:
        self._queue.append(frame)
        self._ready.set()

    async def recv(self) -> av.AudioFrame | av.Packet[Any]:
        while not self._queue:
            if self.readyState != "live":
                raise MediaStreamError
            self._ready.clear()
            await self._ready.wait()
        samples = self._queue.popleft()
        if samples is None:
            samples = SILENCE
        pts = self._pts
        self._pts += FRAME_SAMPLES
        if self.opus is not None:
            packet = av.Packet(self.opus.encode(samples))
            packet.pts = pts
            packet.time_base = TIME_BASE
            return packet
        frame = av.AudioFrame.from_ndarray(samples.reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate = SAMPLE_RATE
        frame.pts = pts
        frame.time_base = TIME_BASE
        return frame

    def stop(self) -> None:
        super().stop()
        self._ready.set()


class Reframer:
    """8 kHz mono samples in pieces of any length to whole 160-sample frames (the rest waits
    for the next piece). A piece of exactly one frame, the usual case, passes untouched."""

    def __init__(self) -> None:
        self._pending = np.zeros(0, dtype=np.int16)

    def feed(self, samples: Int16Array) -> list[Int16Array]:
        if not len(self._pending) and len(samples) == FRAME_SAMPLES:
            return [samples]
        buffered = np.concatenate([self._pending, samples])
        whole = len(buffered) // FRAME_SAMPLES * FRAME_SAMPLES
        self._pending = buffered[whole:]
        return [buffered[i : i + FRAME_SAMPLES] for i in range(0, whole, FRAME_SAMPLES)]


class Downsampler:
    """Decoded browser audio (any rate and layout) to 160-sample frames at 8 kHz mono."""

    def __init__(self) -> None:
        self._resampler = av.AudioResampler(format="s16", layout="mono", rate=SAMPLE_RATE)
        self._frames = Reframer()

    def feed(self, frame: av.AudioFrame) -> list[Int16Array]:
        parts = [out.to_ndarray().reshape(-1) for out in self._resampler.resample(frame)]
        if not parts:
            return []
        samples = parts[0] if len(parts) == 1 else np.concatenate(parts)
        return self._frames.feed(samples.astype(np.int16))  # owned, not a view of the frame


class InlineOpus:
    """Stands in for an aiortc receiver's decoder queue, so the browser's Opus is decoded on
    the event loop, straight to 8 kHz, as its packets arrive.

    aiortc hands every reassembled frame (after its jitter buffer, in order) to a decoder
    thread per peer through a ``queue.Queue``; the thread decodes at 48 kHz stereo and posts
    each frame back to the event loop (``run_coroutine_threadsafe`` into the track's queue),
    where :class:`Downsampler` resamples it. For 20 ms of voice that is two thread hand-offs,
    a task, a future and a resampler; here it is one ``opus_decode``. Anything but Opus (G.711)
    and the end-of-stream ``None`` still go to the thread, whose track the peer keeps reading,
    so that path is unchanged. The thread itself waits on the real queue (``get``) for good.
    Without ``take`` (a spectator's microphone, which no room hears) Opus is counted and
    dropped undecoded.
    """

    def __init__(self, inner: queue.Queue[Any], take: Callable[[Int16Array], None] | None) -> None:
        self._inner = inner
        self._take = take
        self._decoder = NarrowbandDecoder() if take is not None else None
        self._frames = Reframer()
        self.packets = 0  # Opus frames handed over by the jitter buffer

    def put(self, item: tuple[Any, Any] | None) -> None:
        if item is None or str(item[0].name).lower() != "opus":
            self._inner.put(item)
            return
        self.packets += 1
        if self._decoder is None or self._take is None:
            return
        samples = self._decoder.decode(item[1].data)
        if samples is None:
            return
        try:
            for frame in self._frames.feed(samples):
                self._take(frame)
        except Exception:  # this runs inside aiortc's transport loop: never end the connection
            log.exception("voice_frame_in_failed")

    def get(self, *args: Any, **kwargs: Any) -> Any:
        return self._inner.get(*args, **kwargs)


#: Where aiortc (1.16) keeps a receiver's decoder queue (a name-mangled private attribute).
_DECODER_QUEUE = "_RTCRtpReceiver__decoder_queue"


def decode_inline(receiver: Any, take: Callable[[Int16Array], None] | None) -> bool:
    """Decode ``receiver``'s Opus on the loop into ``take`` (:class:`InlineOpus`; None: drop
    it undecoded); False when this aiortc keeps its decoder queue elsewhere (then its own
    thread decodes, as before)."""
    inner = getattr(receiver, _DECODER_QUEUE, None)
    if isinstance(inner, InlineOpus):
        return True
    if not isinstance(inner, queue.Queue):
        return False
    setattr(receiver, _DECODER_QUEUE, InlineOpus(inner, take))
    return True


class BrowserPeer:
    """One browser's voice line: a peer connection bound to one listener of one game."""

    def __init__(
        self,
        voice: BrowserVoice,
        line: LineId,
        on_status: StatusCallback | None = None,
        muted: MutedCheck | None = None,
    ) -> None:
        self.voice = voice
        self.line = line
        self.on_status = on_status
        self.muted = muted
        self.pc = RTCPeerConnection(rtc_configuration(voice))
        self.track = MixTrack()
        self.pc.addTrack(self.track)
        self.closed = False
        self.frames_in = 0
        self.frames_out = 0
        self.frames_muted = 0  # frames of a muted speaker, kept out of the rooms
        self.inline = False  # the browser's Opus is decoded on the loop (InlineOpus)
        self._ticks = 0
        self._heard: set[int] = set()
        self._last_status: dict[str, Any] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.pc.on("track", self._on_track)
        self.pc.on("connectionstatechange", self._on_state)

    # -- signalling ------------------------------------------------------------------------
    async def answer(self, offer_sdp: str) -> str:
        """Take the browser's offer; the answer carries all of the service's candidates."""
        try:
            await self.pc.setRemoteDescription(RTCSessionDescription(offer_sdp, "offer"))
        except (ValueError, AssertionError, IndexError, KeyError) as exc:
            raise VoiceError("bad_offer", f"the offer cannot be used: {exc}") from exc
        settings = self.voice.settings
        if settings.port_max:
            limit_ports(self.pc, settings.port_min, settings.port_max)
        for transceiver in self.pc.getTransceivers():
            if transceiver.kind != "audio":
                continue
            codecs = [c for c in _audio_codecs() if c.mimeType in CODECS]
            codecs.sort(key=lambda c: CODECS.index(c.mimeType))
            transceiver.setCodecPreferences(codecs)
            transceiver.direction = "sendrecv"
        if not any(t.kind == "audio" and t.mid is not None for t in self.pc.getTransceivers()):
            raise VoiceError("bad_offer", "the offer has no audio")
        try:
            answer = await self.pc.createAnswer()
            await self.pc.setLocalDescription(answer)
        except (ValueError, AssertionError, IndexError, KeyError, TypeError) as exc:
            raise VoiceError("bad_offer", f"no answer could be made: {exc}") from exc
        description = self.pc.localDescription
        if answered_codec(description.sdp) == "opus":
            self.track.opus = NarrowbandEncoder()
        self._spawn(self._connect_deadline())
        return self.voice.publish(description.sdp)

    async def add_candidate(self, candidate: str, sdp_mid: str | None, index: int | None) -> None:
        """A trickled browser candidate (an empty one ends the browser's candidates)."""
        text = candidate.removeprefix("candidate:") if candidate else ""
        if not text:
            return
        try:
            parsed = candidate_from_sdp(text)
        except (ValueError, AssertionError, IndexError) as exc:
            raise VoiceError("bad_candidate", "the ICE candidate cannot be read") from exc
        parsed.sdpMid = sdp_mid
        parsed.sdpMLineIndex = index
        await self.pc.addIceCandidate(parsed)

    async def _connect_deadline(self) -> None:
        await asyncio.sleep(self.voice.settings.connect_timeout_s)
        if self.pc.connectionState != "connected":
            log.info("voice_connect_timeout", game=self.line.game_id)
            await self.close()

    async def _on_state(self) -> None:
        if self.pc.connectionState in ("failed", "closed") and not self.closed:
            log.info("voice_peer_lost", game=self.line.game_id, state=self.pc.connectionState)
            await self.close()

    # -- audio in --------------------------------------------------------------------------
    def _on_track(self, track: MediaStreamTrack) -> None:
        if track.kind != "audio":
            return
        take = self._take if self.line.seat is not None else None  # spectators feed none
        for transceiver in self.pc.getTransceivers():
            if transceiver.receiver.track is track:
                self.inline = decode_inline(transceiver.receiver, take)
        self._spawn(self._receive(track))

    async def _receive(self, track: MediaStreamTrack) -> None:
        """The browser's voice that aiortc decodes itself (G.711; Opus only where
        :func:`decode_inline` could not take over) into the mixer, as :meth:`_take` does."""
        down = Downsampler()
        while not self.closed:
            try:
                frame = await track.recv()
            except MediaStreamError:
                return
            if not isinstance(frame, av.AudioFrame) or self.line.seat is None:
                continue
            for samples in down.feed(frame):
                self._take(samples)

    def _take(self, samples: Int16Array) -> None:
        """One 20 ms frame of the browser's voice into the mixer as this seat's source
        (spectators feed none).

        A speaker muted by a moderator (O5) is still decoded, so the line stays in step, but
        no frame of theirs enters the mixer: nobody hears it, no recording holds it. The
        check is asked per frame, so the voice returns on the frame the mute ends."""
        seat = self.line.seat
        if seat is None or self.closed:
            return
        self.frames_in += 1
        if self.muted is not None and self.muted():
            self.frames_muted += 1
            return
        conference = self.line.conference
        if conference is not None:
            conference.voice.push(conference.slot, samples)
            return
        rooms = self.voice.rooms
        room = rooms.room_of(self)
        if room is not None:
            room.mixer.push(seat, samples)
        elif rooms.relay is not None and (relayed := rooms.relay.lines.get(self)) is not None:
            relayed.push(seat, samples)  # to the game's room on its owner, with the next tick

    # -- audio out -------------------------------------------------------------------------
    def tick(self) -> None:
        """Called every 20 ms by the voice clock: this listener's mix to the browser."""
        conference = self.line.conference
        if conference is not None:
            self.track.put(conference.voice.pull(conference.slot, puller=self))
            self.frames_out += 1
            return
        frame, heard = self._mix()
        self.track.put(frame)
        self.frames_out += 1
        if heard is None or self.on_status is None:
            return
        self._heard.update(heard)
        self._ticks += 1
        if self._ticks % STATUS_TICKS:
            return
        place = self.voice.rooms.place(self.line.game_id, self.line.listener)
        if place is None:
            return
        status: dict[str, Any] = {
            "room": place.kind.value,
            "other": place.other,
            "speaking": sorted(self._heard),
        }
        self._heard.clear()
        if status != self._last_status:
            self._last_status = status
            self.on_status(status)

    def _mix(self) -> tuple[Int16Array | None, Iterable[int] | None]:
        """This tick's mix for the listener and the houses heard speaking in it: from the
        game's room when the game runs in this process, else through the relay from the room
        on its owner, as a telephone line on a worker that does not own its game (None, None:
        the game runs nowhere this process knows of)."""
        game_id, listener = self.line.game_id, self.line.listener
        rooms = self.voice.rooms
        room = rooms.room_for(game_id)
        rooms.attach(self, room)
        relay = rooms.relay
        if relay is not None:
            if room is None:
                relayed = relay.link(self, game_id, listener)
                return relayed.pull(), relayed.take_heard()
            relay.unlink(self)  # the game runs here now: the local room serves the peer
        if room is None:
            return None, None
        return room.mixer.pull(listener, puller=self), room.mixer.heard(listener, SPEAKING_RMS)

    # -- life ------------------------------------------------------------------------------
    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        """Hang up: leave the clock and the room, close the peer connection."""
        if self.closed:
            return
        self.closed = True
        self.voice.forget(self)
        self.track.stop()
        current = asyncio.current_task()
        for task in list(self._tasks):
            if task is not current:
                task.cancel()
        with contextlib.suppress(Exception):
            await self.pc.close()


def answered_codec(sdp: str) -> str | None:
    """The codec the audio stream is sent with: the first format of the answer's m=audio.

    >>> answered_codec("m=audio 9 UDP/TLS/RTP/SAVPF 111 0\\na=rtpmap:111 opus/48000/2\\n")
    'opus'
    """
    lines = sdp.replace("\r\n", "\n").split("\n")
    first = next((line.split()[3] for line in lines if line.startswith("m=audio ")), None)
    for line in lines:
        if first is not None and line.startswith(f"a=rtpmap:{first} "):
            return line.split()[1].split("/")[0].lower()
    return None


def _audio_codecs() -> list[Any]:
    from aiortc.rtcrtpsender import RTCRtpSender  # noqa: PLC0415 - capabilities, once per offer

    return list(RTCRtpSender.getCapabilities("audio").codecs)


def rtc_configuration(voice: BrowserVoice) -> RTCConfiguration:
    """No ICE servers unless the operator names some (aiortc would ask Google's)."""
    servers = [
        RTCIceServer(s["urls"], s.get("username"), s.get("credential"))
        for s in voice.ice_servers("vollmond-service")
    ]
    policy = RTCIceTransportPolicy.RELAY if voice.settings.relay_only else None
    if policy is None:
        return RTCConfiguration(iceServers=servers)
    return RTCConfiguration(iceServers=servers, iceTransportPolicy=policy)
