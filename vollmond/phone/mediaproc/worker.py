"""The media process: RTP sockets, latching, key presses, the 20 ms clock, and what every call
hears — its prompts over its room — for many calls.

It is the in-process media path (:class:`~vollmond.phone.media.RtpEndpoint` and
:class:`~vollmond.phone.media.MediaTicker`, unchanged) behind a control socket, with the
mixing of :mod:`.mixing`. Per tick, in this order: the audio received since the last tick is
decoded in one batch and pushed into the rooms mixed here; every call's frame is made — for a
call the signalling process drives, its prompt (from the clips it was sent) over its row of
its room's copy, both on this clock; for any other call, the frame the signalling process sent
ahead (``F``) — then all frames are encoded in one batch, all of it ahead of the tick's deadline
(the clock's learnt lead), and sent when due with one ``sendto`` each; then
the received audio goes to the signalling process in one message (``A``), which is also its cue
to send what changed (routes, gains, playlists, other sources' frames) and the frames it still
makes: the room audio of a game relayed from another process, and the whole frame of a call it
does not drive, :data:`LEAD_TICKS` ahead. A missing block of those is counted
(``missing_blocks``); frames of a call not driven leave late, up to :data:`MAX_LATE_TICKS`.

Key presses (telephone-events, and in-band tones detected on the decoded audio) go back at
once as ``digit`` messages, a prompt played to its end as ``played``, every call's counters
(latched address, packets, seconds since the last packet: the RTP timeout stays in the SIP
server) once at the start and then twice a second as ``stats``.

The tick runs in batches, not per call (:meth:`MediaWorker.frames`, :meth:`MediaWorker.heard_all`,
the clock's ``batch_source`` and ``batch_sink``): the received frames go into the rooms in one
loop, every room mixes once and each driven call's row is one index of the rooms' mixes laid
end to end, the prompts go over their rooms in one ``overlay`` — each call gets exactly the
samples the per-call :meth:`MediaWorker.frame` gives it, which the other calls still take.
At 300 callers the per-call Python of the tick was what made its p99 (docs/voice.md).

The process ends when its control socket closes: a signalling process that died takes its
media processes with it.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np
import numpy.typing as npt

from vollmond.phone.media import (
    FRAME_SAMPLES,
    HOLD,
    Int16Array,
    MediaTicker,
    PreparedTick,
    RtpEndpoint,
    TickReport,
    fit_frame,
)
from vollmond.phone.mediaproc import protocol as p
from vollmond.phone.mediaproc.mixing import Mixing, MixPlan
from vollmond.phone.rtp import RtpClock

log = logging.getLogger(__name__)

#: How many ticks ahead the signalling process makes the frames it still makes (a relayed
#: game's room audio, calls it does not drive): 60 ms its event loop may be late.
LEAD_TICKS = 3
#: Frames that come later than their tick leave late, up to this many ticks (100 ms, as the
#: in-process clock's longest stall before it skips frames); later ones are dropped.
MAX_LATE_TICKS = 5
STATS_PERIOD_S = 0.5


class _Ticker(MediaTicker):
    """The shared clock, with the worker's block chosen before each tick is made and the
    received audio sent once it has left."""

    def __init__(self, worker: MediaWorker) -> None:
        super().__init__()
        self._worker = worker
        self._last: int | None = None
        self._before = 0
        #: Frames due: every call's frame of every tick, a skipped tick's too.
        self.due = 0

    def prepare(self, index: int) -> PreparedTick:
        self._worker.begin(index)
        self._before = self.sent + self.unsent + self._worker.held
        # The audio received since the last tick is decoded first (one table lookup): it goes
        # into the rooms mixed here before this tick's frames are pulled.
        return super().prepare(index)

    def send(self, prepared: PreparedTick) -> None:
        super().send(prepared)
        index = prepared.index
        gap = 1 if self._last is None or index <= self._last else index - self._last
        self.due += (self.sent + self.unsent + self._worker.held - self._before) * gap
        self._last = index
        self._worker.end(index)


@dataclass(eq=False, slots=True)
class _TickPlan:
    """The batched tick's rows for one order of the clock's endpoints: the driven calls'
    plan, and the rows (call, or None for an endpoint not opened here) taken one by one."""

    order: Sequence[RtpEndpoint]
    mix: MixPlan
    others: list[tuple[int, int | None]]


class MediaWorker:
    """One media process's state: its calls, the clock, and the blocks of frames to come."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer
        self.endpoints: dict[int, RtpEndpoint] = {}
        self.mixing = Mixing()
        self.ticker = _Ticker(self)
        self._blocks: dict[int, p.Block] = {}
        self._rows: dict[int, int] = {}
        self._samples: Int16Array = np.zeros((0, FRAME_SAMPLES), np.int16)
        self._heard: list[tuple[int, Int16Array]] = []
        self._heard_blocks: list[tuple[list[int], Int16Array]] = []
        self._calls: dict[RtpEndpoint, int] = {}
        self._first_tick: int | None = None
        self._clock: RtpClock | None = None  # the clock the blocks' tick numbers count on
        self._histogram: npt.NDArray[np.int64] | None = None
        self._response: npt.NDArray[np.int64] | None = None
        self._measure_start: dict[str, int] = {}
        self.counters = {
            "missing_blocks": 0,
            "late_blocks": 0,
            "late_frames": 0,
            "bad_messages": 0,
        }
        self._hold = False
        #: Frames held back because their tick's block was missing (see add_block).
        self.held = 0
        self._plan: _TickPlan | None = None
        self.ticker.batch_source = self.frames
        self.ticker.batch_sink = self.heard_all

    # -- the clock ---------------------------------------------------------------------------
    def begin(self, index: int) -> None:
        """Take this tick's block of frames (older ones are too late now)."""
        clock = self.ticker.clock
        if clock is not self._clock:  # a new clock (the last call had ended): a new count
            self._clock, self._first_tick = clock, index
            self._blocks.clear()
        if self._first_tick is None:
            self._first_tick = index
        for old in [i for i in self._blocks if i < index]:
            del self._blocks[old]
            self.counters["late_blocks"] += 1
        block = self._blocks.pop(index, None)
        self._hold = False
        if block is None:
            self._rows = {}
            if index >= self._first_tick + LEAD_TICKS and self.endpoints:
                self.counters["missing_blocks"] += 1
                self._hold = True  # its frames may come late: send them then (add_block)
            return
        self._rows = dict(zip(block.ids.tolist(), range(len(block.ids)), strict=True))
        self._samples = block.samples

    def frame(self, call: int) -> Int16Array | None:
        """The call's frame of the current tick: for a call the signalling process drives,
        its prompt over its room, mixed here; otherwise its fed frame (HOLD while the tick's
        block is missing)."""
        row = self._rows.get(call)
        fed = None if row is None else self._samples[row]
        line = self.mixing.lines.get(call)
        if line is not None and line.driven:
            return self.mixing.frame(call, line, fed)
        if self._hold:
            self.held += 1
            return HOLD
        return fed

    def frames(self, order: Sequence[RtpEndpoint], out: Int16Array) -> npt.NDArray[np.bool_] | None:
        """Every call's frame of the current tick at once (the clock's
        :data:`~vollmond.phone.media.BatchSource`): what :meth:`frame` gives each call,
        row by row, with the driven calls mixed in one batch (:meth:`Mixing.fill`)."""
        plan = self._plan
        if plan is None or plan.order is not order or plan.mix.version != self.mixing.version:
            plan = self._plan = self._make_plan(order)
        self.mixing.fill(plan.mix, self._rows, self._samples, out)
        held: npt.NDArray[np.bool_] | None = None
        for row, call in plan.others:
            # An endpoint not opened here cannot be on this clock (close() leaves it first).
            frame = self.frame(call) if call is not None else None
            if frame is HOLD:
                if held is None:
                    held = np.zeros(len(order), bool)
                held[row] = True
            elif frame is None:
                out[row] = 0
            else:
                out[row] = fit_frame(frame)
        return held

    def _make_plan(self, order: Sequence[RtpEndpoint]) -> _TickPlan:
        calls = self._calls
        lines = self.mixing.lines
        driven: list[tuple[int, int]] = []
        others: list[tuple[int, int | None]] = []
        for row, endpoint in enumerate(order):
            call = calls.get(endpoint)
            line = lines.get(call) if call is not None else None
            if call is not None and line is not None and line.driven:
                driven.append((row, call))
            else:
                others.append((row, call))
        return _TickPlan(order, self.mixing.plan(driven), others)

    def end(self, index: int) -> None:
        """Send what was heard in this tick; the signalling side answers with a block."""
        heard, self._heard = self._heard, []
        blocks, self._heard_blocks = self._heard_blocks, []
        if heard:  # frames handed on one by one (not 160 bytes), before the tick's batch
            blocks.insert(0, ([call for call, _ in heard], np.stack([s for _, s in heard])))
        if len(blocks) == 1:
            ids, samples = np.asarray(blocks[0][0], np.uint32), blocks[0][1]
        elif blocks:
            ids = np.asarray([call for block in blocks for call in block[0]], np.uint32)
            samples = np.concatenate([block[1] for block in blocks])
        else:
            ids, samples = np.zeros(0, np.uint32), np.zeros((0, FRAME_SAMPLES), np.int16)
        clock = self.ticker.clock
        deadline = clock.deadline(index) if clock is not None else 0.0
        self._send(p.AUDIO, p.Block(index, ids, samples, deadline).encode())
        for played in self.mixing.take_played():
            self._control(played)

    def add_block(self, block: p.Block) -> None:
        clock = self.ticker.clock
        if clock is not None and self._response is not None:
            after_cue = time.monotonic() - clock.deadline(block.index - LEAD_TICKS)
            self._response[_bin(after_cue)] += 1
        if clock is not None and block.index < clock.index:
            self._late(block, clock)
            return
        self._blocks[block.index] = block

    def _late(self, block: p.Block, clock: RtpClock) -> None:
        """A block after its tick: its frames leave now (the tick held them back), unless it
        is more than MAX_LATE_TICKS late (then they are dropped: the in-process clock skips
        frames after such a stall too)."""
        if clock.index - block.index > MAX_LATE_TICKS:
            self.counters["late_blocks"] += 1
            return
        deadline = clock.deadline(block.index)
        lines = self.mixing.lines
        for row, call in enumerate(block.ids.tolist()):
            endpoint = self.endpoints.get(call)
            line = lines.get(call)
            if line is not None and line.driven:
                continue  # its tick was sent, mixed here; late room audio is dropped
            if endpoint is None or not endpoint.send_late(block.samples[row], block.index):
                continue
            self.ticker.sent += 1
            self.counters["late_frames"] += 1
            if self._histogram is not None:
                self._histogram[_bin(time.monotonic() - deadline)] += 1

    def _observe(self, report: TickReport) -> None:
        if self._histogram is None:
            return
        late = (np.asarray(report.sent_at) - report.deadline) / p.LATENESS_BIN_S
        bins = np.clip(late.astype(np.int64), 0, p.LATENESS_BINS - 1)
        np.add.at(self._histogram, bins, 1)

    # -- control -------------------------------------------------------------------------------
    def _send(self, kind: int, payload: bytes) -> None:
        if not self._writer.is_closing():
            self._writer.write(p.frame(kind, payload))

    def _control(self, message: p.Control) -> None:
        self._send(p.CONTROL, p.encode_control(message))

    async def handle(self, message: p.Control) -> None:
        match message:
            case p.Open(call, host, params):
                if call in self.endpoints:
                    raise p.ProtocolError(f"call {call} is open already")
                try:
                    endpoint = await RtpEndpoint.open(
                        host,
                        params,
                        partial(self._heard_from, call),
                        partial(self._digit, call),
                    )
                except OSError as exc:
                    self._control(p.Failed(call, str(exc)))
                    return
                self.endpoints[call] = endpoint
                self._calls[endpoint] = call
                self._control(p.Opened(call, endpoint.local_port))
            case p.Update(call, params):
                self._endpoint(call).update(params)
            case p.Start(call):
                endpoint = self._endpoint(call)
                endpoint.set_source(partial(self.frame, call))
                endpoint.start(self.ticker)
            case p.Route():
                self.mixing.route(message)
            case p.Play():
                self.mixing.play(message)
            case p.Forget(clip):
                self.mixing.clips.pop(clip, None)
            case p.DropRoom(room):
                self.mixing.drop_room(room)
            case p.Close(call):
                self.mixing.forget_call(call)
                endpoint_or_none = self.endpoints.pop(call, None)
                if endpoint_or_none is not None:
                    self._calls.pop(endpoint_or_none, None)
                    endpoint_or_none.close()
            case p.Measure(on):
                self._measure(on)
            case _:
                raise p.ProtocolError(f"{type(message).__name__} is not for a media process")

    def _endpoint(self, call: int) -> RtpEndpoint:
        endpoint = self.endpoints.get(call)
        if endpoint is None:
            raise p.ProtocolError(f"no call {call}")
        return endpoint

    def _heard_from(self, call: int, samples: Int16Array) -> None:
        self._heard.append((call, samples))
        self.mixing.heard(call, samples)

    def heard_all(self, endpoints: list[RtpEndpoint], samples: Int16Array) -> None:
        """Every frame received since the last tick (the clock's
        :data:`~vollmond.phone.media.BatchSink`): into the rooms, and kept for the ``A``
        block, as :meth:`_heard_from` does frame by frame."""
        calls = self._calls
        ids = [calls[endpoint] for endpoint in endpoints]
        self._heard_blocks.append((ids, samples))
        lines, rooms = self.mixing.lines, self.mixing.rooms
        for row, call in enumerate(ids):
            line = lines.get(call)
            if line is None or line.source is None or line.room is None:
                continue
            room = rooms.get(line.room)
            if room is not None:
                room.push(line.source, samples[row])

    def _digit(self, call: int, key: str) -> None:
        self._control(p.Digit(call, key))

    def clock_counters(self) -> dict[str, int]:
        ticker = self.ticker
        return {
            "ticks": ticker.ticks,
            "late_ticks": ticker.late_ticks,
            "skipped_ticks": ticker.skipped_ticks,
            "sent": ticker.sent,
            "unsent": ticker.unsent,
            "frames_due": ticker.due,
            "prompt_frames": self.mixing.prompt_frames,
            "mixed_frames": self.mixing.mixed_frames,
            "unknown_clips": self.mixing.unknown_clips,
            **self.counters,
        }

    def _measure(self, on: bool) -> None:
        if on:
            self._histogram = np.zeros(p.LATENESS_BINS, np.int64)
            self._response = np.zeros(p.LATENESS_BINS, np.int64)
            self._measure_start = self.clock_counters()
            self.ticker.stamp, self.ticker.observer = True, self._observe
            return
        empty = np.zeros(p.LATENESS_BINS, np.int64)
        histogram = self._histogram if self._histogram is not None else empty
        response = self._response if self._response is not None else empty
        now = self.clock_counters()
        start = self._measure_start
        counters = {key: value - start.get(key, 0) for key, value in now.items()}
        counters["calls"] = len(self.endpoints)  # a count at the end, not a difference
        self._histogram = self._response = None
        self.ticker.stamp, self.ticker.observer = False, None
        starts = tuple(self.mixing.starts)
        self.mixing.starts.clear()
        histogram_bins, response_bins = tuple(histogram.tolist()), tuple(response.tolist())
        self._control(p.Measured(histogram_bins, response_bins, counters, starts))

    def stats(self) -> p.Stats:
        now = asyncio.get_running_loop().time()
        calls = tuple(
            p.CallStats(
                call,
                ep.latched,
                ep.packets_sent,
                ep.packets_unsent,
                ep.packets_received,
                ep.packets_foreign,
                ep.packets_dropped,
                max(0.0, now - ep.last_received),
            )
            for call, ep in self.endpoints.items()
        )
        return p.Stats(calls, self.clock_counters(), self.ticker.lead_s)

    async def report(self) -> None:
        """Counters at once (the signalling side's watchdog hears the process is up), then
        twice a second."""
        while not self._writer.is_closing():
            self._control(self.stats())
            await asyncio.sleep(STATS_PERIOD_S)

    def close(self) -> None:
        for endpoint in self.endpoints.values():
            endpoint.close()
        self.endpoints.clear()
        self._calls.clear()

    # -- the channel ---------------------------------------------------------------------------
    async def serve(self, reader: asyncio.StreamReader) -> None:
        """Take messages until the signalling side closes the channel."""
        reporter = asyncio.get_running_loop().create_task(self.report())
        try:
            while True:
                try:
                    kind, payload = await p.read_message(reader)
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                try:
                    if kind == p.FRAMES:
                        self.add_block(p.Block.decode(payload))
                    elif kind == p.SOURCES:
                        self.mixing.sources(p.Block.decode(payload))
                    elif kind == p.CLIP:
                        clip = p.Clip.decode(payload)
                        self.mixing.clips[clip.clip] = clip.samples
                    elif kind == p.GAINS:
                        self.mixing.gains(p.Gains.decode(payload))
                    elif kind == p.CONTROL:
                        await self.handle(p.decode_control(payload))
                    else:
                        raise p.ProtocolError(f"kind {kind} is not for a media process")
                except p.ProtocolError as exc:
                    self.counters["bad_messages"] += 1
                    log.warning("media process: bad control message: %s", exc)
        finally:
            reporter.cancel()
            self.close()


def _bin(seconds: float) -> int:
    """The histogram bin of a delay (0.1 ms each; the last takes everything later)."""
    return min(max(int(seconds / p.LATENESS_BIN_S), 0), p.LATENESS_BINS - 1)


async def run(fd: int) -> None:
    """Serve the control socket ``fd`` (inherited from the signalling process)."""
    sock = socket.socket(fileno=fd)
    reader, writer = await asyncio.open_unix_connection(sock=sock)
    worker = MediaWorker(writer)
    try:
        await worker.serve(reader)
    except p.ProtocolError as exc:  # a header that cannot be skipped: the channel is lost
        log.error("media process: control channel broken: %s", exc)
    finally:
        writer.close()


def main(argv: list[str] | None = None) -> None:
    """``python -m vollmond.phone.mediaproc FD``."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or not args[0].isdigit():
        raise SystemExit("usage: python -m vollmond.phone.mediaproc FD")
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    loop_factory: Callable[[], asyncio.AbstractEventLoop]
    try:
        import uvloop  # noqa: PLC0415 - optional, as for the web service

        loop_factory = uvloop.new_event_loop
    except ImportError:  # pragma: no cover - uvloop is a dependency of the server extra
        loop_factory = asyncio.new_event_loop
    with asyncio.Runner(loop_factory=loop_factory) as runner:
        runner.run(run(int(args[0])))
