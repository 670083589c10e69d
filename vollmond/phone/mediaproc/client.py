"""The signalling side of the media processes: start them, talk to them, replace a dead one.

:class:`MediaProcesses` is the SIP server's :class:`~vollmond.phone.callmedia.MediaBackend`
when ``[phone] media_processes`` is 1 or more. A new call goes to the process with the fewest
calls and gets a :class:`RemoteEndpoint`, which the SIP server and the sessions use as they
would an in-process endpoint. The frames still come from the call's audio source on this
event loop (the session's prompts over its room, :meth:`PhoneService._frame`), but not on a
clock of its own: each tick's message from a media process (the audio it received) is the cue
to pull every call's frame of the tick :data:`~.worker.LEAD_TICKS` ahead and send them in one
block. The sending itself, on time, is the media process's.

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
from collections.abc import Callable

import numpy as np

from vollmond.phone.callmedia import LostCallback
from vollmond.phone.media import (
    FRAME_SAMPLES,
    FRAME_SECONDS,
    AudioSource,
    DropCallback,
    Int16Array,
    MediaParams,
    fit_frame,
)
from vollmond.phone.mediaproc import protocol as p
from vollmond.phone.mediaproc.worker import LEAD_TICKS, MAX_LATE_TICKS

log = logging.getLogger(__name__)

#: Longest wait for a media process to open a port before the INVITE gets a 503.
OPEN_TIMEOUT_S = 5.0
#: Pause before a dead media process is replaced, doubled while replacements die at once.
RESTART_DELAY_S = 0.2
RESTART_DELAY_MAX_S = 10.0
#: A cue taken later than this after its tick pulls nothing: its frames, due LEAD_TICKS after
#: it, would reach the media process after the longest lateness it still sends them with
#: (MAX_LATE_TICKS; one tick is left for the way there).
CUE_LATE_S = (LEAD_TICKS + MAX_LATE_TICKS - 1) * FRAME_SECONDS
#: A media process that says nothing for this long hangs: it is killed and replaced.
WATCHDOG_S = 5.0
#: Frames are not queued behind a media process that does not read: past this many bytes
#: waiting in the socket, a tick's block is dropped (and counted).
MAX_BACKLOG_BYTES = 1_000_000


class MediaLostError(OSError):
    """The media process is gone (or never answered): the call cannot have media there."""


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
        #: Blocks not sent because the media process did not read (see MAX_BACKLOG_BYTES).
        self.blocks_dropped = 0
        self.bad_messages = 0
        #: Cues taken too late to send their frames in time (nothing was pulled for them).
        self.cues_skipped = 0
        #: When the last message came (event loop time): a living media process reports
        #: twice a second, so a long silence means it hangs (MediaProcesses' watchdog).
        self.last_heard = 0.0

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
            self.send_control(p.Close(endpoint.call))

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
        if block.deadline and time.monotonic() > block.deadline + CUE_LATE_S:
            self.cues_skipped += 1
            return
        sending = [ep for ep in calls.values() if ep.started and ep.source is not None]
        frames = np.empty((len(sending), FRAME_SAMPLES), np.int16)
        ids = np.empty(len(sending), np.uint32)
        rows = 0
        for endpoint in sending:
            assert endpoint.source is not None
            try:
                frame = endpoint.source()
            except Exception:
                log.exception("media process: audio source failed")
                continue
            if frame is None:
                continue
            frames[rows] = frame if frame.shape == (FRAME_SAMPLES,) else fit_frame(frame)
            ids[rows] = endpoint.call
            rows += 1
        writer = self._writer
        if writer is not None and writer.transport.get_write_buffer_size() > MAX_BACKLOG_BYTES:
            self.blocks_dropped += 1
            return
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
            case p.Stats(rows, counters):
                now = asyncio.get_running_loop().time()
                for stats in rows:
                    endpoint = self.calls.get(stats.call)
                    if endpoint is not None:
                        endpoint.take_stats(stats, now)
                self.counters = counters
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

    def _lost(self) -> None:
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

    def __init__(self, count: int, *, watchdog_s: float = WATCHDOG_S, priority: int = 0) -> None:
        if count < 1:
            raise ValueError("at least one media process")
        self.count = count
        self.priority = priority
        self.watchdog_s = watchdog_s
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
        are then hung up and it is replaced, as if it had died."""
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(min(1.0, self.watchdog_s / 4))
            for process in self.processes:
                if process.alive and loop.time() - process.last_heard > self.watchdog_s:
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


def _make_realtime(pid: int, priority: int) -> bool:
    """Put a media process in the round-robin real-time class at ``priority``: its clock then
    runs as soon as a tick is due, whatever else the machine runs, as a PBX's media threads do
    (Asterisk ``-p``, FreeSWITCH ``-rp``). It sleeps between ticks, and the kernel keeps 5 %
    of every second for ordinary processes. Refused (no CAP_SYS_NICE), it runs ordinarily."""
    try:
        os.sched_setscheduler(pid, os.SCHED_RR, os.sched_param(priority))
    except OSError as exc:
        log.warning("media process %s: real-time priority %d refused: %s", pid, priority, exc)
        return False
    return True
