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
not grow with the number of calls, and the per-packet work is batched: once per 20 ms tick the
ticker decodes every call's received audio in one numpy lookup, pulls every call's next frame,
encodes them all in one lookup into one buffer (:mod:`vollmond.phone.rtp_batch`) and sends each
packet with a single ``sendto`` from that buffer. Telephone-events are handled on arrival.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import socket
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
import numpy.typing as npt

from vollmond.phone.dtmf import DtmfParseError, DtmfReceiver, InbandDtmfDetector
from vollmond.phone.g711 import G711Codec
from vollmond.phone.rtp import RtpClock, RtpParseError, RtpSender, parse_rtp
from vollmond.phone.rtp_batch import HEADER_BYTES, PACKET_BYTES, PacketBatch, decode_all
from vollmond.voice import frames

log = logging.getLogger(__name__)

# The frame is the voice rooms' unit (shared with the browser's voice), named here for the phone.
FRAME_SAMPLES = frames.FRAME_SAMPLES
FRAME_SECONDS = frames.FRAME_SECONDS
Int16Array = frames.Int16Array

#: Called every 20 ms for the next frame: 160 int16 samples, or None for silence.
AudioSource = Callable[[], Int16Array | None]

#: A source's answer "no frame yet, send nothing this tick": the frame comes late and leaves
#: with :meth:`RtpEndpoint.send_late` (a media process whose signalling loop was late).
HOLD: Int16Array = np.zeros(0, np.int16)


#: Makes every endpoint's frame of a tick at once (a media process's mixing): writes row ``i``
#: of the array for ``endpoints[i]`` (zeros: silence) and returns which rows are held back
#: (:data:`HOLD`), or None when none is. Set as :attr:`MediaTicker.batch_source`, it replaces
#: the endpoints' own sources, one Python call per tick instead of one per call.
BatchSource = Callable[[Sequence["RtpEndpoint"], Int16Array], "npt.NDArray[np.bool_] | None"]

#: Takes every frame received since the last tick at once: ``samples[i]`` (decoded) came
#: to ``endpoints[i]``, in arrival order. Set as :attr:`MediaTicker.batch_sink`, it replaces
#: the endpoints' own audio callbacks (in-band key tones are still detected per endpoint).
BatchSink = Callable[[list["RtpEndpoint"], Int16Array], None]

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


def fit_frame(frame: Int16Array) -> Int16Array:
    """Pad or cut a source frame to exactly 160 samples so a sloppy source cannot break RTP."""
    if frame.shape == (FRAME_SAMPLES,):
        return frame
    flat = np.ravel(frame)[:FRAME_SAMPLES]
    return np.pad(flat, (0, FRAME_SAMPLES - len(flat))).astype(np.int16)


@dataclass(frozen=True, slots=True)
class TickReport:
    """What one tick did, for benchmarks and metrics: frame ``index`` was due at ``deadline``
    (on :func:`time.monotonic`); ``sent_at`` holds the time each packet left, when the
    ticker was asked to stamp them (:attr:`MediaTicker.stamp`)."""

    index: int
    deadline: float
    started: float
    finished: float
    sent: int
    unsent: int
    sent_at: tuple[float, ...] = ()


TickObserver = Callable[[TickReport], None]

#: How long before its deadline the clock starts making a tick's frames, at first and at
#: most; it learns from each tick how long the making takes, plus a margin
#: (:meth:`MediaTicker._learn_lead`).
FIRST_LEAD_S = 0.002
MAX_LEAD_S = 0.010
LEAD_MARGIN_S = 0.001
#: Per tick, how fast the lead comes down after a slow tick (to 37 % in ~10 s at 50 ticks/s).
LEAD_DECAY = 0.998


@dataclass(frozen=True, slots=True)
class ClockStats:
    """What an operator watches of the media clocks (``/metrics``): packets sent and refused,
    ticks sent a whole period late and frames skipped, and the lead — how long before its
    deadline a tick's making starts, learnt from how long it takes; one near
    :data:`MAX_LEAD_S` says the clock is running short of time before packets leave late."""

    sent: int = 0
    unsent: int = 0
    late_ticks: int = 0
    skipped_ticks: int = 0
    lead_s: float = 0.0

    def __add__(self, other: ClockStats) -> ClockStats:
        """Several clocks (media processes) as one: counts summed, the longest lead."""
        return ClockStats(
            self.sent + other.sent,
            self.unsent + other.unsent,
            self.late_ticks + other.late_ticks,
            self.skipped_ticks + other.skipped_ticks,
            max(self.lead_s, other.lead_s),
        )


@dataclass(frozen=True, slots=True)
class PreparedTick:
    """A tick's frames, made and encoded in the batch, waiting for their deadline: the
    endpoints to send to, each with its row of the batch."""

    index: int
    started: float
    sending: list[tuple[socket.socket, RtpEndpoint]]
    rows: Sequence[int]


class MediaTicker:
    """One 20 ms clock for every registered endpoint: per tick, the audio received since the
    last tick is decoded in one batch and handed on, then every call's next frame is pulled,
    all frames are G.711-encoded in one batch and each packet leaves with one ``sendto``.

    A sleeping task per call would mean 50 wake-ups per second per call; with hundreds of calls
    the event loop spends its time on timers and falls behind. One tick for all calls costs 50
    wake-ups per second in total, and every call inherits the same absolute, drift-free
    schedule (:class:`RtpClock` on :func:`time.monotonic`: tick ``k`` is due at
    ``start + k * 20 ms``, whatever the event loop's own timer resolution). Nothing is lost
    silently: ticks sent a whole period late are counted (:attr:`late_ticks`), frames
    skipped after a stall too (:attr:`skipped_ticks`, per tick), and packets the kernel
    refused (:attr:`unsent`).

    Making a tick's frames takes time that grows with the calls (decoding, mixing, encoding:
    ~3–5 ms at 300 calls); made after the deadline, every packet left that much late. So the
    clock wakes :attr:`lead_s` early, makes the frames, and sends them when they are due. The
    lead is learnt from the ticks themselves (:meth:`_learn_lead`). What a caller hears is
    delayed by the lead's margin only: audio waits for the next making instead of the next
    deadline, then for the deadline instead of for its making to end.
    """

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._sleep = sleep  # with `clock`: tests run the schedule on a clock of their own
        self._endpoints: dict[RtpEndpoint, None] = {}
        self._order: list[RtpEndpoint] = []
        self._task: asyncio.Task[None] | None = None
        self._clock: RtpClock | None = None
        self._now = clock
        self._batch = PacketBatch()
        self._received: list[tuple[RtpEndpoint, bytes]] = []
        self.ticks = 0
        self.late_ticks = 0
        self.skipped_ticks = 0
        self.sent = 0
        self.unsent = 0
        #: Told about every tick (benchmarks); None costs nothing.
        self.observer: TickObserver | None = None
        #: Stamp each packet's departure into the observer's report (benchmarks only).
        self.stamp = False
        #: Every frame of a tick in one call (see :data:`BatchSource`); None: per endpoint.
        self.batch_source: BatchSource | None = None
        #: Every received frame of a tick in one call (see :data:`BatchSink`).
        self.batch_sink: BatchSink | None = None
        #: How long before the deadline the next tick's frames are made (learnt per tick).
        self.lead_s = FIRST_LEAD_S

    def clock_stats(self) -> ClockStats:
        return ClockStats(self.sent, self.unsent, self.late_ticks, self.skipped_ticks, self.lead_s)

    @property
    def clock(self) -> RtpClock | None:
        """The running schedule (None while no endpoint is registered)."""
        return self._clock

    def add(self, endpoint: RtpEndpoint) -> None:
        """Start sending for ``endpoint`` from the next tick."""
        self._endpoints[endpoint] = None
        self._order = list(self._endpoints)
        if self._task is None or self._task.done():
            self._clock = RtpClock(
                start=self._now(), period=FRAME_SECONDS, samples_per_frame=FRAME_SAMPLES
            )
            self._task = asyncio.get_running_loop().create_task(self._run(self._clock))

    def remove(self, endpoint: RtpEndpoint) -> None:
        """Stop sending for ``endpoint``; the clock stops when nobody is left."""
        if self._endpoints.pop(endpoint, 0) is None:
            self._order = list(self._endpoints)
        if not self._endpoints and self._task is not None:
            self._task.cancel()
            self._task = None
            self._received.clear()

    def received(self, endpoint: RtpEndpoint, payload: bytes) -> None:
        """A 160-byte audio payload for ``endpoint``, decoded with the others at the next tick."""
        self._received.append((endpoint, payload))

    async def _run(self, clock: RtpClock) -> None:
        while True:
            # Wake early enough to have every frame made when the tick is due (lead).
            await self._sleep(max(0.0, clock.deadline() - self.lead_s - self._now()))
            now = self._now()
            due = clock.index
            index = clock.advance(now)
            if index != due:
                self.skipped_ticks += index - due
            try:
                prepared = self.prepare(index)
            except Exception:  # a bug in one tick must not stop every call's audio
                log.exception("media tick %d failed", index)
                continue
            self._learn_lead(self._now() - prepared.started)
            wait = clock.deadline(index) - self._now()
            if wait > 0:
                await self._sleep(wait)
            if self._now() - clock.deadline(index) > clock.period:
                self.late_ticks += 1
            try:
                self.send(prepared)
            except Exception:
                log.exception("media tick %d failed", index)

    def _learn_lead(self, making_s: float) -> None:
        """Follow how long making a tick's frames takes: at once when it takes longer, slowly
        back down when it takes less, so one slow tick keeps the lead up for a few seconds."""
        self.lead_s = min(MAX_LEAD_S, max(making_s + LEAD_MARGIN_S, self.lead_s * LEAD_DECAY))

    def tick(self, index: int) -> None:
        """Frame ``index`` for every endpoint, made and sent at once (tests and benchmarks;
        the clock makes the frames ahead of the deadline and sends them when due)."""
        self.send(self.prepare(index))

    def prepare(self, index: int) -> PreparedTick:
        """Make frame ``index`` of every endpoint: the audio received so far handed on, every
        frame pulled, headers written and all payloads encoded into the batch, to be sent by
        :meth:`send` (nothing else may tick in between)."""
        started = self._now()
        self.ticks += 1
        if self._received:
            self._deliver()
        batch = self._batch
        batch.reserve(len(self._order))
        rows: Sequence[int]
        if self.batch_source is not None:
            sending, rows = self._batched_frames(index)
        else:
            sending = self._frames(index)
            rows = range(len(sending))
        return PreparedTick(index, started, sending, rows)

    def send(self, prepared: PreparedTick) -> None:
        """Send a prepared tick's packets, one ``sendto`` each straight from the batch; an
        endpoint closed since its frame was made is left out (its call has ended)."""
        batch = self._batch
        stamps: list[float] | None = [] if self.stamp else None
        now = self._now
        sent = unsent = 0
        for row, (sock, endpoint) in zip(prepared.rows, prepared.sending, strict=True):
            if endpoint._transport is None:
                continue
            try:
                sock.sendto(batch.packet(row), endpoint.latched or endpoint._params.remote)
            except OSError as exc:  # a full socket buffer, an unreachable peer, a closed port
                endpoint.packets_unsent += 1
                unsent += 1
                log.debug("RTP send failed: %s", exc)
                continue
            endpoint.packets_sent += 1
            sent += 1
            if stamps is not None:
                stamps.append(now())
        self.sent += sent
        self.unsent += unsent
        if self.observer is not None and self._clock is not None:
            self.observer(
                TickReport(
                    prepared.index,
                    self._clock.deadline(prepared.index),
                    prepared.started,
                    now(),
                    sent,
                    unsent,
                    tuple(stamps or ()),
                )
            )

    def _frames(self, index: int) -> list[tuple[socket.socket, RtpEndpoint]]:
        """Pull each endpoint's frame from its source into the batch, packed from row 0 (a
        held or unsent frame takes no row); headers written, payloads encoded."""
        batch = self._batch
        frames, buffer = batch.frames, batch.buffer
        sending: list[tuple[socket.socket, RtpEndpoint]] = []
        codecs: list[G711Codec] = []
        row = 0
        for endpoint in self._order:
            source = endpoint._source
            frame = source() if source is not None else None
            if endpoint._first_index is None:
                endpoint._first_index = index
            if frame is HOLD:
                continue
            params = endpoint._params
            if not params.send or endpoint._transport is None or endpoint._sock is None:
                continue
            if frame is None:
                frames[row] = 0  # G.711 of zero is each law's silence code
            elif frame.shape == (FRAME_SAMPLES,):
                frames[row] = frame
            else:
                frames[row] = fit_frame(frame)
            timestamp = endpoint._ts_base + (index - endpoint._first_index) * FRAME_SAMPLES
            endpoint._sender.pack_header(buffer, row * PACKET_BYTES, timestamp)
            sending.append((endpoint._sock, endpoint))
            codecs.append(params.codec)
            row += 1
        batch.encode(row, codecs)
        return sending

    def _batched_frames(
        self, index: int
    ) -> tuple[list[tuple[socket.socket, RtpEndpoint]], list[int]]:
        """Every frame at once from :attr:`batch_source`, row ``i`` for endpoint ``i``;
        then headers for the rows that are sent (not held, sending, open) and one encode."""
        assert self.batch_source is not None
        order = self._order
        batch = self._batch
        frames, buffer = batch.frames, batch.buffer
        held = self.batch_source(order, frames[: len(order)])
        skip = held.tolist() if held is not None else None
        sending: list[tuple[socket.socket, RtpEndpoint]] = []
        rows: list[int] = []
        codecs: list[G711Codec] = []
        for row, endpoint in enumerate(order):
            if endpoint._first_index is None:
                endpoint._first_index = index
            params = endpoint._params
            codecs.append(params.codec)
            if skip is not None and skip[row]:
                continue
            sock = endpoint._sock
            if not params.send or endpoint._transport is None or sock is None:
                continue
            timestamp = endpoint._ts_base + (index - endpoint._first_index) * FRAME_SAMPLES
            endpoint._sender.pack_header(buffer, row * PACKET_BYTES, timestamp)
            sending.append((sock, endpoint))
            rows.append(row)
        batch.encode(len(order), codecs)
        return sending, rows

    def _deliver(self) -> None:
        """Decode every audio payload received since the last tick in one batch and hand each
        frame to its endpoint, in arrival order."""
        received, self._received = self._received, []
        samples = decode_all(
            [payload for _, payload in received],
            [endpoint._params.codec for endpoint, _ in received],
        )
        sink = self.batch_sink
        if sink is None:
            for row, (endpoint, _) in enumerate(received):
                if endpoint._transport is not None:
                    endpoint._audio(samples[row])
            return
        endpoints = [endpoint for endpoint, _ in received]
        if any(endpoint._transport is None for endpoint in endpoints):  # closed meanwhile
            keep = [row for row, ep in enumerate(endpoints) if ep._transport is not None]
            endpoints, samples = [endpoints[row] for row in keep], samples[keep]
        sink(endpoints, samples)
        for row, endpoint in enumerate(endpoints):
            if endpoint._inband is not None:
                endpoint._tones(samples[row])


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
        self._sock: socket.socket | None = None  # set by open()
        self._source: AudioSource | None = None
        self._sender = RtpSender(
            ssrc=secrets.randbits(32), payload_type=params.audio_pt, sequence=secrets.randbits(16)
        )
        self._ts_base = secrets.randbits(32)
        self._dtmf = DtmfReceiver()
        self._inband = InbandDtmfDetector() if params.dtmf_pt is None else None
        self._ticker: MediaTicker | None = None
        self._home: MediaTicker | None = None  # the clock start() joins by default
        self._first_index: int | None = None
        self._loop = asyncio.get_running_loop()
        self.last_received = self._loop.time()
        self.packets_sent = 0
        self.packets_unsent = 0
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
        *,
        ticker: MediaTicker | None = None,
    ) -> RtpEndpoint:
        """Bind a fresh UDP port on ``host`` (the OS picks a free one); :meth:`start` will join
        ``ticker``."""
        loop = asyncio.get_running_loop()
        infos = await loop.getaddrinfo(host, 0, type=socket.SOCK_DGRAM)
        family, _, _, _, address = infos[0]
        sock = socket.socket(family, socket.SOCK_DGRAM)
        try:
            sock.setblocking(False)
            sock.bind(address)
            _, endpoint = await loop.create_datagram_endpoint(
                lambda: cls(params, on_audio, on_digit, on_drop), sock=sock
            )
        except BaseException:
            sock.close()
            raise
        # The media clock sends straight on the socket (the transport owns and closes it).
        endpoint._sock = sock
        endpoint._home = ticker
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
        self.last_received = self._loop.time()

    def set_source(self, source: AudioSource | None) -> None:
        """Where outgoing audio comes from; None sends silence."""
        self._source = source

    def start(self, ticker: MediaTicker | None = None) -> None:
        """Begin sending a frame on every tick of ``ticker`` (the one given to :meth:`open`,
        else a private one, if None)."""
        if self._ticker is None:
            self._ticker = ticker or self._home or MediaTicker()
            self._ticker.add(self)

    def close(self) -> None:
        """Stop sending and release the port."""
        if self._ticker is not None:
            self._ticker.remove(self)
            self._ticker = None
        if self._transport is not None:
            self._transport.close()
            self._transport = None

    def send_late(self, frame: Int16Array, index: int) -> bool:
        """Send the frame of tick ``index`` now, after its tick (it came late; the tick sent
        nothing for it, :data:`HOLD`). Its timestamp is that tick's, so the receiver's jitter
        buffer puts it in its place, as when the in-process clock sends late."""
        params = self._params
        if not params.send or self._sock is None or self._first_index is None:
            return False
        packet = bytearray(PACKET_BYTES)
        timestamp = self._ts_base + (index - self._first_index) * FRAME_SAMPLES
        self._sender.pack_header(packet, 0, timestamp)
        packet[HEADER_BYTES:] = params.codec.encode(fit_frame(frame))
        try:
            self._sock.sendto(packet, self.latched or params.remote)
        except OSError as exc:
            self.packets_unsent += 1
            log.debug("RTP send failed: %s", exc)
            return False
        self.packets_sent += 1
        return True

    def _drop(self, why: str) -> None:
        if self._on_drop is not None:
            self._on_drop(why)

    def _foreign(self, source: tuple[str, int]) -> bool:
        """Not from the latched peer, or (before the latch) not from the signalled host."""
        if self.latched is not None:
            return source != self.latched
        return source[0] != self._params.remote[0]

    def datagram_received(self, data: bytes, addr: tuple[str | object, int]) -> None:
        params = self._params
        if (
            addr == self.latched
            and len(data) == PACKET_BYTES
            and data[0] == 0x80  # version 2, no padding, extension or CSRC
            and data[1] & 0x7F == params.audio_pt
            and self._ticker is not None
        ):
            # The common packet of a latched call: its audio waits for the tick's batch decode.
            self.packets_received += 1
            self.last_received = self._loop.time()
            self._ticker.received(self, data[HEADER_BYTES:])
            return
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
        if self.latched is None:
            if packet.payload_type not in (params.audio_pt, params.dtmf_pt):
                self.packets_dropped += 1
                self._drop("malformed")
                return
            # Only a well-formed packet of the negotiated stream latches the peer's port.
            self.latched = source
        self.packets_received += 1
        self.last_received = self._loop.time()
        if packet.payload_type == params.audio_pt:
            if self._ticker is not None and len(packet.payload) == FRAME_SAMPLES:
                self._ticker.received(self, packet.payload)
            else:  # a peer sending other than 20 ms: still one 160-sample frame a packet
                self._audio(fit_frame(params.codec.decode(packet.payload)))
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

    def _audio(self, samples: Int16Array) -> None:
        """One decoded frame of the caller's voice (and any in-band key press in it)."""
        self._on_audio(samples)
        if self._inband is not None:
            self._tones(samples)

    def _tones(self, samples: Int16Array) -> None:
        """In-band key tones in a decoded frame (a peer without telephone-events)."""
        if self._inband is not None:
            for digit in self._inband.feed(samples):
                self._on_digit(digit)

    def error_received(self, exc: Exception) -> None:
        # ICMP port unreachable while the peer is not yet listening is normal on UDP.
        log.debug("RTP socket error: %s", exc)
