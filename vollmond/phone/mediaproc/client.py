"""The signalling side of the media processes: start them, talk to them, replace a dead one.

:class:`MediaProcesses` is the SIP server's :class:`~vollmond.phone.callmedia.MediaBackend`
when ``[phone] media_processes`` is 1 or more. A new call goes to the process with the fewest
calls and gets a :class:`RemoteEndpoint`, which the SIP server and the sessions use as they
would an in-process endpoint.

What a call hears is made in its media process, on its clock: the telephone service gives the
endpoint a :class:`LineDriver`, which at each tick's message (the cue) sends only what changed
— the call's place (:meth:`RemoteEndpoint.route`: a room's copy, its row, its house) and its
prompts (:meth:`RemoteEndpoint.play`: clips, sent once per process by the prompt cache's
array) — and hears back which prompts were played. A room mixed here (its
:class:`~vollmond.voice.mixer.GameMixer`, with browser peers, relays and recordings) is copied
in every media process with a call in it: its gains are sent when its routing changes, and the
frames of the sources that process does not receive itself are forwarded at each tick (the
mixer's tee). Only two kinds of frame are still made here and sent :data:`~.worker.LEAD_TICKS`
ahead: the room audio of a game run on another process (the relay), and the whole frame of an
endpoint given a plain source instead of a driver (tests, the benchmarks' echo).

When a media process ends (crash, kill), every call it carried is handed to ``on_lost`` (the
SIP server hangs them up with a BYE) and a new process is started in its place.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import socket
import sys
import time
import weakref
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from vollmond.engine.ruleset import SPECTATORS
from vollmond.phone.callmedia import LostCallback
from vollmond.phone.media import (
    FRAME_SAMPLES,
    FRAME_SECONDS,
    AudioSource,
    ClockStats,
    DropCallback,
    Int16Array,
    MediaParams,
    fit_frame,
)
from vollmond.phone.mediaproc import protocol as p
from vollmond.phone.mediaproc.worker import LEAD_TICKS, MAX_LATE_TICKS
from vollmond.voice.mixer import GameMixer

log = logging.getLogger(__name__)

#: Longest wait for a media process to open a port before the INVITE gets a 503.
OPEN_TIMEOUT_S = 5.0
#: Pause before a dead media process is replaced, doubled while replacements die at once.
RESTART_DELAY_S = 0.2
RESTART_DELAY_MAX_S = 10.0
#: At most this many ticks a media process skipped are made up in a recording (10 s): a
#: longer silence of the process is a hang, which its watchdog handles.
MAX_FILLED_TICKS = 500
#: A cue taken later than this after its tick pulls nothing: its frames, due LEAD_TICKS after
#: it, would reach the media process after the longest lateness it still sends them with
#: (MAX_LATE_TICKS; one tick is left for the way there).
CUE_LATE_S = (LEAD_TICKS + MAX_LATE_TICKS - 1) * FRAME_SECONDS
#: A media process that says nothing for this long hangs: it is killed and replaced.
WATCHDOG_S = 5.0
#: ... but not before its first word, which may take this long: starting Python and numpy
#: takes seconds on a loaded machine (a watchdog of 0.8 s killed healthy starting processes).
START_WATCHDOG_S = 30.0
#: Frames are not queued behind a media process that does not read: past this many bytes
#: waiting in the socket, a tick's block is dropped (and counted).
MAX_BACKLOG_BYTES = 1_000_000


class MediaLostError(OSError):
    """The media process is gone (or never answered): the call cannot have media there."""


class LineDriver(Protocol):
    """Drives a call whose audio is mixed in its media process (``PhoneService``'s line):
    asked at every tick for what changed, told when its prompts were played."""

    def sync(self, endpoint: RemoteEndpoint) -> Int16Array | None:
        """Send what changed (:meth:`RemoteEndpoint.route`, :meth:`RemoteEndpoint.play`);
        return room audio the signalling process makes for this tick (a relayed game), or
        None."""

    def played(self, tags: Sequence[int]) -> None:
        """The prompts with these tags were played to their end."""


#: A call's place in its media process: (room mixer, listener row, source house, fed).
_Place = tuple[GameMixer | None, int | None, int | None, bool]
_NOWHERE: _Place = (None, None, None, False)


@dataclass(eq=False)
class _Mirror:
    """A room mixed here and copied in one media process: its id there, the routing version
    sent, the houses that process's own calls speak as (their voice is pushed there, not
    forwarded), and the other sources' frames to forward at the next tick."""

    room: int
    mixer: GameMixer
    version: int = -1
    users: int = 0
    local: Counter[int] = field(default_factory=Counter)
    pending: list[tuple[int, Int16Array]] = field(default_factory=list)

    def tee(self, house: int, samples: Int16Array) -> None:
        if not self.local[house]:
            self.pending.append((house, samples))


class RemoteEndpoint:
    """A call's endpoint in a media process, as seen from the signalling process. Its counters
    are the media process's, refreshed twice a second."""

    def __init__(
        self,
        process: MediaProcess,
        call: int,
        params: MediaParams,
        on_audio: Callable[[Int16Array], None],
        on_digit: Callable[[str], None],
        on_drop: DropCallback | None,
    ) -> None:
        self._process = process
        self.call = call
        self._params = params
        self.on_audio = on_audio
        self.on_digit = on_digit
        self._on_drop = on_drop
        self.port = 0
        self.source: AudioSource | None = None
        #: Set for a call mixed in the media process (then ``source`` is not used).
        self.driver: LineDriver | None = None
        self.place: _Place = _NOWHERE
        self.started = False
        self.closed = False
        self.latched: tuple[str, int] | None = None
        self.last_received = asyncio.get_running_loop().time()
        self.packets_sent = 0
        self.packets_unsent = 0
        self.packets_received = 0
        self.packets_foreign = 0
        self.packets_dropped = 0

    @property
    def local_port(self) -> int:
        return self.port

    @property
    def params(self) -> MediaParams:
        return self._params

    def update(self, params: MediaParams) -> None:
        """A re-negotiation; as in process, a new remote address is latched afresh."""
        if params.remote != self._params.remote:
            self.latched = None
        self._params = params
        self.last_received = asyncio.get_running_loop().time()
        self._process.send_control(p.Update(self.call, params))

    def set_source(self, source: AudioSource | None) -> None:
        self.source = source

    def route(
        self, mixer: GameMixer | None, listener: int | None, source: int | None, fed: bool
    ) -> None:
        """This call hears row ``listener`` of ``mixer``'s copy in the media process and
        speaks there as house ``source`` (sent only when it changed)."""
        place = (mixer, listener, source, fed)
        if place != self.place and not self.closed:
            self._process.route(self, place)

    def play(self, items: Sequence[tuple[int, Int16Array, int | None]]) -> None:
        """The call's prompts from now on, back to back: (tag, audio, offset or None)."""
        if not self.closed:
            self._process.play(self.call, items)

    def start(self) -> None:
        if not self.started and not self.closed:
            self.started = True
            self._process.send_control(p.Start(self.call))

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._process.forget(self)

    def take_stats(self, stats: p.CallStats, now: float) -> None:
        """Mirror the media process's counters; drops are passed on to the SIP server's."""
        if self._on_drop is not None:
            for _ in range(max(0, stats.foreign - self.packets_foreign)):
                self._on_drop("foreign")
            for _ in range(max(0, stats.dropped - self.packets_dropped)):
                self._on_drop("malformed")
        self.latched = stats.latched
        self.packets_sent, self.packets_unsent = stats.sent, stats.unsent
        self.packets_received = stats.received
        self.packets_foreign, self.packets_dropped = stats.foreign, stats.dropped
        self.last_received = max(self.last_received, now - stats.quiet_s)


class MediaProcess:
    """One media process and its control channel."""

    def __init__(self, on_exit: Callable[[MediaProcess], None], priority: int = 0) -> None:
        self._on_exit = on_exit
        #: The real-time priority asked for (0: none), and whether the system granted it.
        self.priority = priority
        self.realtime = False
        self.calls: dict[int, RemoteEndpoint] = {}
        self._opening: dict[int, asyncio.Future[int]] = {}
        self._measured: asyncio.Future[p.Measured] | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._process: asyncio.subprocess.Process | None = None
        self._reader_task: asyncio.Task[None] | None = None
        self.alive = False
        self._closing = False
        #: The media process's clock counters, as last reported.
        self.counters: dict[str, int] = {}
        self.lead_s = 0.0
        #: Blocks not sent because the media process did not read (see MAX_BACKLOG_BYTES).
        self.blocks_dropped = 0
        self.bad_messages = 0
        #: Cues taken too late to send their frames in time (nothing was pulled for them).
        self.cues_skipped = 0
        #: The index of the last tick the media process reported (its `A` block).
        self._last_tick: int | None = None
        #: Frames made here and sent ahead (``F``): calls not driven, relayed rooms' audio.
        self.frames_fed = 0
        #: When the last message came (event loop time): a living media process reports
        #: twice a second, so a long silence means it hangs (MediaProcesses' watchdog).
        self.last_heard = 0.0
        #: Whether it has said anything yet (the watchdog waits longer for the first word).
        self.heard = False
        #: Rooms copied in this media process, by the mixer's identity.
        self._mirrors: dict[int, _Mirror] = {}
        self._room_ids = itertools.count(1)
        #: Clips sent to it, by the audio array's identity (forgotten when the array goes).
        self._clips: dict[int, int] = {}
        self._clip_ids = itertools.count(1)
        #: Clips whose arrays went, to be forgotten at the next tick (a finalizer runs
        #: wherever the collector does, so it only notes them).
        self._forgotten: list[int] = []

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    async def start(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "vollmond.phone.mediaproc",
                str(theirs.fileno()),
                pass_fds=(theirs.fileno(),),
                stdin=asyncio.subprocess.DEVNULL,
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        reader, self._writer = await asyncio.open_unix_connection(sock=ours)
        if self.priority:
            self.realtime = _make_realtime(self._process.pid, self.priority)
        self.alive = True
        self.last_heard = asyncio.get_running_loop().time()
        self._reader_task = asyncio.get_running_loop().create_task(self._read(reader))

    # -- to the media process ----------------------------------------------------------------
    def _send(self, kind: int, payload: bytes) -> None:
        if self.alive and self._writer is not None and not self._writer.is_closing():
            self._writer.write(p.frame(kind, payload))

    def send_control(self, message: p.Control) -> None:
        self._send(p.CONTROL, p.encode_control(message))

    async def open(
        self,
        call: int,
        host: str,
        params: MediaParams,
        on_audio: Callable[[Int16Array], None],
        on_digit: Callable[[str], None],
        on_drop: DropCallback | None,
    ) -> RemoteEndpoint:
        if not self.alive:
            raise MediaLostError("the media process is not running")
        endpoint = RemoteEndpoint(self, call, params, on_audio, on_digit, on_drop)
        opened = asyncio.get_running_loop().create_future()
        self._opening[call] = opened
        self.calls[call] = endpoint
        try:
            self.send_control(p.Open(call, host, params))
            endpoint.port = await asyncio.wait_for(opened, OPEN_TIMEOUT_S)
        except BaseException as exc:
            endpoint.close()
            if isinstance(exc, TimeoutError):
                raise MediaLostError("the media process did not open a port in time") from exc
            raise
        finally:
            self._opening.pop(call, None)
        return endpoint

    def forget(self, endpoint: RemoteEndpoint) -> None:
        if self.calls.pop(endpoint.call, None) is not None:
            self._leave(endpoint)
            self.send_control(p.Close(endpoint.call))

    # -- mixing in the media process -------------------------------------------------------------
    def route(self, endpoint: RemoteEndpoint, place: _Place) -> None:
        """Move a call to ``place``: the room's copy is made (gains first) before the call is
        routed to it, and dropped when its last call of this process left."""
        mixer, listener, source, fed = place
        room: int | None = None
        if mixer is not None:
            mirror = self._mirror(mixer)
            mirror.users += 1
            if source is not None:
                mirror.local[source] += 1
            room = mirror.room
        self._leave(endpoint)
        endpoint.place = place
        self.send_control(p.Route(endpoint.call, room, listener, source, fed))

    def _leave(self, endpoint: RemoteEndpoint) -> None:
        mixer, _, source, _ = endpoint.place
        endpoint.place = _NOWHERE
        if mixer is None:
            return
        mirror = self._mirrors.get(id(mixer))
        if mirror is None:
            return
        mirror.users -= 1
        if source is not None:
            mirror.local[source] -= 1
        if mirror.users <= 0:
            del self._mirrors[id(mixer)]
            if mirror.tee in mixer.tees:
                mixer.tees.remove(mirror.tee)
            self.send_control(p.DropRoom(mirror.room))

    def _mirror(self, mixer: GameMixer) -> _Mirror:
        mirror = self._mirrors.get(id(mixer))
        if mirror is None:
            mirror = _Mirror(next(self._room_ids), mixer)
            self._mirrors[id(mixer)] = mirror
            mixer.tees.append(mirror.tee)
            self._send_gains(mirror)
        return mirror

    def _send_gains(self, mirror: _Mirror) -> None:
        mirror.version = mirror.mixer.version
        self._send(p.GAINS, p.Gains(mirror.room, np.array(mirror.mixer.gains)).encode())

    def play(self, call: int, items: Sequence[tuple[int, Int16Array, int | None]]) -> None:
        played = tuple(p.PlayItem(tag, self._clip(audio), offset) for tag, audio, offset in items)
        self.send_control(p.Play(call, played))

    def _clip(self, audio: Int16Array) -> int:
        """The clip id of a prompt's audio, sending its samples the first time. The prompt
        cache shares one array among every caller told the same words, so a sentence said to
        200 callers crosses once."""
        key = id(audio)
        clip = self._clips.get(key)
        if clip is None:
            clip = self._clips[key] = next(self._clip_ids)
            self._send(p.CLIP, p.Clip(clip, audio).encode())
            weakref.finalize(audio, self._forget_clip, key, clip)
        return clip

    def _forget_clip(self, key: int, clip: int) -> None:
        if self._clips.get(key) == clip:
            del self._clips[key]
            self._forgotten.append(clip)

    def _flush_rooms(self, skipped: int = 0) -> None:
        """Per tick: new gains, and the rooms' other sources' frames, to the copies; a room
        being recorded is ticked here too (the tap takes its mix from this process's copy,
        which nobody else may pull), once more for each tick the media process `skipped`,
        so that a recording keeps the window's length (those ticks' frames were never sent
        to the room's callers either: the recording has them as the mixer does, mostly
        silence)."""
        forgotten, self._forgotten = self._forgotten, []
        for clip in forgotten:
            self.send_control(p.Forget(clip))
        ids: list[int] = []
        frames: list[Int16Array] = []
        for mirror in self._mirrors.values():
            mixer = mirror.mixer
            if mixer.version != mirror.version:
                self._send_gains(mirror)
            if mirror.pending:
                for house, samples in mirror.pending:
                    ids.append(p.source_id(mirror.room, house))
                    frames.append(samples)
                mirror.pending = []
            if mixer.recording:
                for _ in range(1 + skipped):
                    mixer.pull(SPECTATORS, puller=mirror)
        if ids:
            block = p.Block(0, np.array(ids, np.uint32), np.stack(frames))
            self._send(p.SOURCES, block.encode())

    async def measure(self, on: bool) -> p.Measured | None:
        """Start a lateness measurement, or end it and return what was measured."""
        if not on:
            self._measured = asyncio.get_running_loop().create_future()
        self.send_control(p.Measure(on))
        if on or self._measured is None:
            return None
        return await asyncio.wait_for(self._measured, OPEN_TIMEOUT_S)

    def _tick(self, block: p.Block) -> None:
        """A tick in the media process: hand on what it heard, then send the frames of the
        tick LEAD_TICKS ahead (never raises: a failing source is skipped).

        A cue taken so late that its frames could not reach the media process in time pulls
        nothing (``cues_skipped``): those calls send silence for that tick, and their prompts
        and rooms go on from where they were, as when the in-process clock skips a tick. Frames
        pulled and then dropped for being late would cut pieces out of the prompts."""
        calls = self.calls
        for row, call in enumerate(block.ids.tolist()):
            endpoint = calls.get(call)
            if endpoint is not None and not endpoint.closed:
                try:
                    endpoint.on_audio(block.samples[row])
                except Exception:
                    log.exception("media process: audio handler failed")
        skipped = 0
        if self._last_tick is not None:  # ticks the media process's clock skipped (a stall)
            skipped = min(max(0, block.index - self._last_tick - 1), MAX_FILLED_TICKS)
        self._last_tick = block.index
        late = bool(block.deadline) and time.monotonic() > block.deadline + CUE_LATE_S
        if late:
            self.cues_skipped += 1
        sending = [ep for ep in calls.values() if ep.started]
        frames = np.empty((len(sending), FRAME_SAMPLES), np.int16)
        ids = np.empty(len(sending), np.uint32)
        rows = 0
        for endpoint in sending:
            driver = endpoint.driver
            try:
                if driver is not None:
                    frame = driver.sync(endpoint)  # changes out; only relayed rooms' audio back
                elif endpoint.source is not None and not late:
                    frame = endpoint.source()
                else:
                    frame = None
            except Exception:
                log.exception("media process: audio source failed")
                continue
            if frame is None or late:
                continue
            frames[rows] = frame if frame.shape == (FRAME_SAMPLES,) else fit_frame(frame)
            ids[rows] = endpoint.call
            rows += 1
        self._flush_rooms(skipped)
        if late:
            return
        writer = self._writer
        if writer is not None and writer.transport.get_write_buffer_size() > MAX_BACKLOG_BYTES:
            self.blocks_dropped += 1
            return
        self.frames_fed += rows
        out = p.Block(block.index + LEAD_TICKS, ids[:rows], frames[:rows])
        self._send(p.FRAMES, out.encode())

    def _control(self, message: p.Control) -> None:
        match message:
            case p.Opened(call, port):
                opening = self._opening.get(call)
                if opening is not None and not opening.done():
                    opening.set_result(port)
            case p.Failed(call, error):
                opening = self._opening.get(call)
                if opening is not None and not opening.done():
                    opening.set_exception(OSError(error))
            case p.Digit(call, key):
                endpoint = self.calls.get(call)
                if endpoint is not None and endpoint.started:
                    endpoint.on_digit(key)
            case p.Played(call, tags):
                endpoint = self.calls.get(call)
                if endpoint is not None and endpoint.driver is not None:
                    endpoint.driver.played(tags)
            case p.Stats(rows, counters, lead_s):
                now = asyncio.get_running_loop().time()
                for stats in rows:
                    endpoint = self.calls.get(stats.call)
                    if endpoint is not None:
                        endpoint.take_stats(stats, now)
                self.counters, self.lead_s = counters, lead_s
            case p.Measured():
                if self._measured is not None and not self._measured.done():
                    self._measured.set_result(message)
            case _:
                raise p.ProtocolError(f"{type(message).__name__} is not for signalling")

    async def _read(self, reader: asyncio.StreamReader) -> None:
        try:
            while True:
                kind, payload = await p.read_message(reader)
                self.last_heard = asyncio.get_running_loop().time()
                self.heard = True
                try:
                    if kind == p.AUDIO:
                        self._tick(p.Block.decode(payload))
                    elif kind == p.CONTROL:
                        self._control(p.decode_control(payload))
                    else:
                        raise p.ProtocolError(f"kind {kind} is not for signalling")
                except p.ProtocolError as exc:
                    self.bad_messages += 1
                    log.warning("media process %s: bad message: %s", self.pid, exc)
        except (asyncio.IncompleteReadError, ConnectionError, p.ProtocolError) as exc:
            if not self._closing:
                log.error("media process %s: channel ended: %s", self.pid, exc)
        finally:
            self._lost()

    def _drop_mirrors(self) -> None:
        for mirror in self._mirrors.values():
            if mirror.tee in mirror.mixer.tees:
                mirror.mixer.tees.remove(mirror.tee)
        self._mirrors.clear()
        self._clips.clear()

    def _lost(self) -> None:
        self._drop_mirrors()
        if not self.alive or self._closing:
            self.alive = False
            return
        self.alive = False
        for opening in self._opening.values():
            if not opening.done():
                opening.set_exception(MediaLostError("the media process ended"))
        if self._writer is not None:
            self._writer.close()
        if self._process is not None and self._process.returncode is None:
            self._process.kill()
        self._on_exit(self)

    def kill(self) -> None:
        """End a process that hangs (its channel then closes: the calls are lost)."""
        if self._process is not None and self._process.returncode is None:
            self._process.kill()

    async def close(self) -> None:
        """End the process: closing the channel ends it; killed if it does not go."""
        self._closing = True
        self.calls.clear()
        self._drop_mirrors()
        if self._writer is not None:
            self._writer.close()
        if self._process is not None:
            try:
                await asyncio.wait_for(self._process.wait(), 2.0)
            except TimeoutError:
                self._process.kill()
                await self._process.wait()
        if self._reader_task is not None:
            self._reader_task.cancel()


class MediaProcesses:
    """``count`` media processes; a new call goes to the one with the fewest calls."""

    def __init__(
        self,
        count: int,
        *,
        watchdog_s: float = WATCHDOG_S,
        start_watchdog_s: float = START_WATCHDOG_S,
        priority: int = 0,
    ) -> None:
        if count < 1:
            raise ValueError("at least one media process")
        self.count = count
        self.priority = priority
        self.watchdog_s = watchdog_s
        self.start_watchdog_s = start_watchdog_s
        self._watchdog: asyncio.Task[None] | None = None
        self.processes: list[MediaProcess] = []
        self.on_lost: LostCallback | None = None
        self.restarts = 0
        self._ids = itertools.count(1)
        self._restarting: set[asyncio.Task[None]] = set()
        self._closing = False

    async def start(self) -> None:
        for _ in range(self.count):
            process = MediaProcess(self._exited, self.priority)
            await process.start()
            self.processes.append(process)
        self._watchdog = asyncio.get_running_loop().create_task(self._watch())

    async def _watch(self) -> None:
        """Kill a media process that has said nothing for ``watchdog_s`` (it hangs): its calls
        are then hung up and it is replaced, as if it had died. One that has not yet said its
        first word is given ``start_watchdog_s``."""
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(min(1.0, self.watchdog_s / 4))
            for process in self.processes:
                limit = self.watchdog_s if process.heard else self.start_watchdog_s
                if process.alive and loop.time() - process.last_heard > limit:
                    log.error(
                        "media process %s silent for %.1f s: killed",
                        process.pid,
                        loop.time() - process.last_heard,
                    )
                    process.kill()

    async def open(
        self,
        host: str,
        params: MediaParams,
        on_audio: Callable[[Int16Array], None],
        on_digit: Callable[[str], None],
        on_drop: DropCallback | None = None,
    ) -> RemoteEndpoint:
        alive = [process for process in self.processes if process.alive]
        if not alive:
            raise MediaLostError("no media process is running")
        process = min(alive, key=lambda proc: len(proc.calls))
        return await process.open(next(self._ids), host, params, on_audio, on_digit, on_drop)

    def _exited(self, process: MediaProcess) -> None:
        calls = list(process.calls.values())
        process.calls.clear()
        log.error("media process %s ended with %d calls", process.pid, len(calls))
        for endpoint in calls:
            endpoint.closed = True
            if self.on_lost is not None:
                try:
                    self.on_lost(endpoint)
                except Exception:
                    log.exception("media process: hanging up a call failed")
        if not self._closing:
            task = asyncio.get_running_loop().create_task(self._replace(process))
            self._restarting.add(task)
            task.add_done_callback(self._restarting.discard)

    async def _replace(self, dead: MediaProcess) -> None:
        """Start a new process in the dead one's place (with a growing pause if they die)."""
        delay = RESTART_DELAY_S
        while not self._closing:
            await asyncio.sleep(delay)
            process = MediaProcess(self._exited, self.priority)
            try:
                await process.start()
            except OSError:
                log.exception("media process: restart failed")
                delay = min(delay * 2, RESTART_DELAY_MAX_S)
                continue
            if self.closing:
                await process.close()
                return
            self.processes = [process if proc is dead else proc for proc in self.processes]
            self.restarts += 1
            log.warning("media process %s replaced by %s", dead.pid, process.pid)
            return

    def clock_stats(self) -> ClockStats:
        """The processes' clocks as last reported (a replaced process starts from zero, which
        Prometheus takes as a counter reset)."""
        stats = ClockStats()
        for process in self.processes:
            c = process.counters
            stats += ClockStats(
                c.get("sent", 0),
                c.get("unsent", 0),
                c.get("late_ticks", 0),
                c.get("skipped_ticks", 0),
                process.lead_s,
            )
        return stats

    @property
    def closing(self) -> bool:
        """Closing: a process that ends now is not replaced."""
        return self._closing

    async def measure(self, on: bool) -> list[p.Measured]:
        """Start (``on``) or end a send-lateness measurement in every media process."""
        results = await asyncio.gather(*(proc.measure(on) for proc in self.processes))
        return [result for result in results if result is not None]

    async def close(self) -> None:
        self._closing = True
        if self._watchdog is not None:
            self._watchdog.cancel()
        for task in list(self._restarting):
            task.cancel()
        await asyncio.gather(*(process.close() for process in self.processes))


_refusal_told = False


def _make_realtime(pid: int, priority: int) -> bool:
    """Put a media process in the round-robin real-time class at ``priority``: its clock then
    runs as soon as a tick is due, whatever else the machine runs, as a PBX's media threads do
    (Asterisk ``-p``, FreeSWITCH ``-rp``). It sleeps between ticks, and the kernel keeps 5 %
    of every second for ordinary processes. Refused (no CAP_SYS_NICE or RLIMIT_RTPRIO), it
    runs ordinarily, and that is said once per service, not at every (re)start: the priority
    is tried by default, and a machine that does not grant it is not an error."""
    global _refusal_told  # noqa: PLW0603 - one line per process, whatever the media processes
    try:
        os.sched_setscheduler(pid, os.SCHED_RR, os.sched_param(priority))
    except OSError as exc:
        if not _refusal_told:
            _refusal_told = True
            log.warning(
                "media processes run at ordinary priority: real-time priority %d refused (%s); "
                "grant CAP_SYS_NICE or LimitRTPRIO (docs/voice.md)",
                priority,
                exc,
            )
        return False
    return True
