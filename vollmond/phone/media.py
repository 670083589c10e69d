"""Per-call RTP endpoint: sends 20 ms G.711 frames on an absolute schedule and receives audio
and telephone-events.

The endpoint knows nothing about SIP; the user agent creates one per call, tells it where to
send and which payload types were negotiated, and gets decoded frames and digits back through
two callbacks.

Media is symmetric and latched (docs/security.md): only packets from the host of
``MediaParams.remote`` are taken, and the first of them fixes the peer's address and port
(a NAT may change the port); from then on packets from anywhere else are dropped and counted,
and frames go to that latched address. So a stranger can neither inject audio or key presses
into a call nor redirect its media to a third party.

All endpoints of a server share one :class:`MediaTicker`, so the number of timer wake-ups does
not grow with the number of calls.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import numpy as np

from vollmond.phone.dtmf import DtmfParseError, DtmfReceiver, InbandDtmfDetector
from vollmond.phone.g711 import G711Codec
from vollmond.phone.rtp import RtpClock, RtpParseError, RtpSender, parse_rtp
from vollmond.voice import frames

log = logging.getLogger(__name__)

# The frame is the voice rooms' unit (shared with the browser's voice), named here for the phone.
FRAME_SAMPLES = frames.FRAME_SAMPLES
FRAME_SECONDS = frames.FRAME_SECONDS
Int16Array = frames.Int16Array

#: Called every 20 ms for the next frame: 160 int16 samples, or None for silence.
AudioSource = Callable[[], Int16Array | None]


#: Told why a datagram on the media port was dropped: "foreign" or "malformed".
DropCallback = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class MediaParams:
    """What signalling negotiated for the stream. ``remote`` is where to send until the peer's
    first packet latches the address; only packets from its host are accepted."""

    remote: tuple[str, int]
    codec: G711Codec
    audio_pt: int
    dtmf_pt: int | None
    send: bool = True


def _fit_frame(frame: Int16Array) -> Int16Array:
    """Pad or cut a source frame to exactly 160 samples so a sloppy source cannot break RTP."""
    if frame.shape == (FRAME_SAMPLES,):
        return frame
    flat = np.ravel(frame)[:FRAME_SAMPLES]
    return np.pad(flat, (0, FRAME_SAMPLES - len(flat))).astype(np.int16)


class MediaTicker:
    """One 20 ms clock that sends the next frame of every registered endpoint.

    A sleeping task per call would mean 50 wake-ups per second per call; with hundreds of calls
    the event loop spends its time on timers and falls behind. One tick for all calls costs 50
    wake-ups per second in total, and every call inherits the same absolute, drift-free
    schedule (:class:`RtpClock`).
    """

    def __init__(self) -> None:
        self._endpoints: dict[RtpEndpoint, None] = {}
        self._task: asyncio.Task[None] | None = None
        self._clock: RtpClock | None = None

    def add(self, endpoint: RtpEndpoint) -> None:
        """Start sending for ``endpoint`` from the next tick."""
        self._endpoints[endpoint] = None
        if self._task is None or self._task.done():
            loop = asyncio.get_running_loop()
            self._clock = RtpClock(
                start=loop.time(), period=FRAME_SECONDS, samples_per_frame=FRAME_SAMPLES
            )
            self._task = loop.create_task(self._run(self._clock))

    def remove(self, endpoint: RtpEndpoint) -> None:
        """Stop sending for ``endpoint``; the clock stops when nobody is left."""
        self._endpoints.pop(endpoint, None)
        if not self._endpoints and self._task is not None:
            self._task.cancel()
            self._task = None

    async def _run(self, clock: RtpClock) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(clock.delay(loop.time()))
            index = clock.advance(loop.time())
            for endpoint in list(self._endpoints):
                endpoint.send_frame(index)


class RtpEndpoint(asyncio.DatagramProtocol):
    """One call's media socket."""

    def __init__(
        self,
        params: MediaParams,
        on_audio: Callable[[Int16Array], None],
        on_digit: Callable[[str], None],
        on_drop: DropCallback | None = None,
    ) -> None:
        self._params = params
        self._on_drop = on_drop
        #: The peer's address once its first packet came from the signalled host.
        self.latched: tuple[str, int] | None = None
        self._on_audio = on_audio
        self._on_digit = on_digit
        self._transport: asyncio.DatagramTransport | None = None
        self._source: AudioSource | None = None
        self._sender = RtpSender(
            ssrc=secrets.randbits(32), payload_type=params.audio_pt, sequence=secrets.randbits(16)
        )
        self._ts_base = secrets.randbits(32)
        self._dtmf = DtmfReceiver()
        self._inband = InbandDtmfDetector() if params.dtmf_pt is None else None
        self._ticker: MediaTicker | None = None
        self._first_index: int | None = None
        self.last_received = asyncio.get_running_loop().time()
        self.packets_sent = 0
        self.packets_received = 0
        self.packets_dropped = 0
        self.packets_foreign = 0

    @classmethod
    async def open(
        cls,
        host: str,
        params: MediaParams,
        on_audio: Callable[[Int16Array], None],
        on_digit: Callable[[str], None],
        on_drop: DropCallback | None = None,
    ) -> RtpEndpoint:
        """Bind a fresh UDP port on ``host`` (the OS picks a free one)."""
        loop = asyncio.get_running_loop()
        _, endpoint = await loop.create_datagram_endpoint(
            lambda: cls(params, on_audio, on_digit, on_drop), local_addr=(host, 0)
        )
        return endpoint

    @property
    def local_port(self) -> int:
        """The bound port, to put in the SDP answer."""
        if self._transport is None:
            raise RuntimeError("endpoint is not open")
        port: int = self._transport.get_extra_info("sockname")[1]
        return port

    @property
    def params(self) -> MediaParams:
        """The current negotiated parameters."""
        return self._params

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # Datagram endpoints always get a datagram transport (not a subclass in CPython 3.11).
        self._transport = cast(asyncio.DatagramTransport, transport)

    def update(self, params: MediaParams) -> None:
        """Apply a re-negotiation (re-INVITE): new address, codec or hold state. A new remote
        address is latched afresh."""
        if params.remote != self._params.remote:
            self.latched = None
        self._params = params
        self._sender.payload_type = params.audio_pt
        self._inband = (self._inband or InbandDtmfDetector()) if params.dtmf_pt is None else None
        self.last_received = asyncio.get_running_loop().time()

    def set_source(self, source: AudioSource | None) -> None:
        """Where outgoing audio comes from; None sends silence."""
        self._source = source

    def start(self, ticker: MediaTicker | None = None) -> None:
        """Begin sending a frame on every tick of ``ticker`` (a private one if None)."""
        if self._ticker is None:
            self._ticker = ticker or MediaTicker()
            self._ticker.add(self)

    def close(self) -> None:
        """Stop sending and release the port."""
        if self._ticker is not None:
            self._ticker.remove(self)
            self._ticker = None
        if self._transport is not None:
            self._transport.close()

    def send_frame(self, index: int) -> None:
        """Pull one frame from the source and send it; ``index`` is the ticker's frame number,
        so frames the ticker skipped after a stall still advance the RTP timestamp."""
        if self._first_index is None:
            self._first_index = index
        frame = self._source() if self._source is not None else None
        if not self._params.send or self._transport is None:
            return
        codec = self._params.codec
        payload = (
            bytes([codec.silence]) * FRAME_SAMPLES
            if frame is None
            else codec.encode(_fit_frame(frame))
        )
        timestamp = (self._ts_base + (index - self._first_index) * FRAME_SAMPLES) & 0xFFFFFFFF
        target = self.latched or self._params.remote
        self._transport.sendto(self._sender.packet(payload, timestamp).build(), target)
        self.packets_sent += 1

    def _drop(self, why: str) -> None:
        if self._on_drop is not None:
            self._on_drop(why)

    def _foreign(self, source: tuple[str, int]) -> bool:
        """Not from the latched peer, or (before the latch) not from the signalled host."""
        if self.latched is not None:
            return source != self.latched
        return source[0] != self._params.remote[0]

    def datagram_received(self, data: bytes, addr: tuple[str | object, int]) -> None:
        source = (str(addr[0]), int(addr[1]))
        if self._foreign(source):
            self.packets_foreign += 1
            self._drop("foreign")
            return
        try:
            packet = parse_rtp(data)
        except RtpParseError as exc:
            self.packets_dropped += 1
            self._drop("malformed")
            log.debug("dropping malformed RTP from %s: %s", addr, exc)
            return
        params = self._params
        if self.latched is None:
            if packet.payload_type not in (params.audio_pt, params.dtmf_pt):
                self.packets_dropped += 1
                self._drop("malformed")
                return
            # Only a well-formed packet of the negotiated stream latches the peer's port.
            self.latched = source
        self.packets_received += 1
        self.last_received = asyncio.get_running_loop().time()
        if packet.payload_type == params.audio_pt:
            samples = params.codec.decode(packet.payload)
            self._on_audio(samples)
            if self._inband is not None:
                for digit in self._inband.feed(samples):
                    self._on_digit(digit)
        elif params.dtmf_pt is not None and packet.payload_type == params.dtmf_pt:
            try:
                event_digit = self._dtmf.feed(packet.ssrc, packet.timestamp, packet.payload)
            except DtmfParseError as exc:
                self.packets_dropped += 1
                self._drop("malformed")
                log.debug("dropping bad telephone-event from %s: %s", addr, exc)
                return
            if event_digit is not None:
                self._on_digit(event_digit)

    def error_received(self, exc: Exception) -> None:
        # ICMP port unreachable while the peer is not yet listening is normal on UDP.
        log.debug("RTP socket error: %s", exc)
