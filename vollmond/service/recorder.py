"""The live recording after an alarm (O2-O4): warn the table, then record its rooms.

For every new alarm of a running game (:attr:`Moderation.feed`, so every entry path that
calls ``Moderation.raise_alarm`` is covered without knowing this module) the
:class:`TableRecorder`:

1. publishes a WARNING notice on the hub's notice board: phone lines speak the warning and
   play the tone, browsers show the "recording" mark; it waits until every phone line has
   played both (at most ``recording_notice_wait_s``);
2. starts the encrypted recording (``Moderation.start_recording``) and publishes the
   RECORDING notice with the audio tap: the game's voice room (phone/service.py) mixes one
   extra row — the rooms of the caller and the accused
   (:func:`~vollmond.voice.recorded.recorded_gains`) — and hands each 20 ms frame to
   the tap; the actor's chat events of those rooms go the same way;
3. stops at the end of the round, after ``recording_max_s`` or at the end of the game
   (``Moderation.game_window``), removes the notice and seals the file.

The media clock never waits for the disk: frames go through a bounded queue to one writer
thread per recording (:class:`RecordingSink`); if the disk falls behind, frames are dropped
and counted rather than the calls stuttering.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections import deque
from collections.abc import Coroutine, Sequence
from dataclasses import replace
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import structlog

from vollmond.engine.core import Event, Viewer
from vollmond.engine.ruleset import AnyRuleSet, place_of
from vollmond.moderation import Moderation
from vollmond.moderation.alarms import Alarm, AlarmStatus
from vollmond.moderation.vault import RecordingWriter
from vollmond.service.hub import Hub
from vollmond.service.notices import NoticeStage, RecordingNotice

log = structlog.get_logger(__name__)

#: Frames (20 ms each) and chat lines waiting for the writer thread: 10 s of audio.
QUEUE_LIMIT: Final = 500
#: Alarm ids remembered so that a re-published alarm (taken, resolved) starts nothing.
SEEN_LIMIT: Final = 10_000

_Item = tuple[str, bytes | tuple[str, str]]


class RecordingSink:
    """Hands audio frames and chat lines to a :class:`RecordingWriter` on its own thread.

    :meth:`audio` and :meth:`chat` never block: they are called by the media clock and the
    game actor. The writer (AES-GCM and a file write every ~2 s) runs on the thread.
    """

    def __init__(self, writer: RecordingWriter, limit: int = QUEUE_LIMIT) -> None:
        self.writer = writer
        self._queue: queue.Queue[_Item | None] = queue.Queue(limit)
        self.frames = 0
        self.chat_lines = 0
        self.dropped = 0
        self.failed = False
        self._thread = threading.Thread(
            target=self._drain, name=f"recording:{writer.recording_id}", daemon=True
        )
        self._thread.start()

    def audio(self, frame: npt.NDArray[np.int16]) -> None:
        self._offer(("audio", frame.astype("<i2").tobytes()))

    def chat(self, speaker: str, text: str) -> None:
        self._offer(("chat", (speaker, text)))

    def _offer(self, item: _Item) -> None:
        try:
            self._queue.put_nowait(item)
        except queue.Full:
            self.dropped += 1
            if self.dropped in (1, 100) or self.dropped % 1000 == 0:
                log.warning("recording_behind", recording=self.writer.recording_id)

    def _drain(self) -> None:
        while (item := self._queue.get()) is not None:
            if self.failed:
                continue
            kind, payload = item
            try:
                if kind == "audio":
                    assert isinstance(payload, bytes)
                    self.writer.write_audio(payload)
                    self.frames += 1
                else:
                    assert isinstance(payload, tuple)
                    self.writer.write_chat(*payload)
                    self.chat_lines += 1
            except Exception:  # a full disk ends this recording, not the game
                log.exception("recording_write_failed", recording=self.writer.recording_id)
                self.failed = True

    async def close(self) -> None:
        """Let the thread write what is queued, then stop it (the writer is closed after)."""
        await asyncio.to_thread(self._queue.put, None)
        await asyncio.to_thread(self._thread.join)


def concerned_seats(alarm: Alarm, ruleset: AnyRuleSet, state: Any) -> frozenset[int]:
    """The caller's and the accused's houses, where they are seats of this game (every seat
    is a listener of the rule set's routing table)."""
    seats = {listener for listener in ruleset.routing(state) if isinstance(listener, int)}
    return frozenset(h for h in (alarm.caller.house, alarm.accused_house) if h in seats)


def room_name(ruleset: AnyRuleSet, state: Any, seats: frozenset[int]) -> str:
    """What the recording's metadata calls the place it began in: the rooms of the concerned
    seats as any rule set names them (`place_of`: market, night_room, call, halb, silent);
    the market when the alarm names no seat (the recording takes what spectators hear)."""
    if not seats:
        return "market"
    return "+".join(sorted({place_of(ruleset, state, seat).kind.value for seat in seats}))


def _round(state: Any) -> int:
    """The game's round: every rule set's state counts its rounds (`kit.stages.RoundState`),
    which the recording window stops at; the protocol has no other word for it."""
    return int(state.round)


class AlarmRecorder:
    """What every recorder does with the alarm feed: listen to it, take each open alarm once,
    run one recording task per place (a table, a conference room), end them all on close.
    Subclasses say in `on_alarm` what an alarm of theirs records."""

    listener_name = "recorder"

    def __init__(self, hub: Hub, moderation: Moderation, *, notice_wait_s: float) -> None:
        self.hub = hub
        self.moderation = moderation
        self.notice_wait_s = notice_wait_s
        self.recordings: dict[str, asyncio.Task[None]] = {}
        self.sinks: dict[str, RecordingSink] = {}
        self._seen: set[int] = set()
        self._seen_order: deque[int] = deque()
        self._stack = contextlib.AsyncExitStack()
        self._listener: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Subscribe to the alarm feed (before returning: no alarm raised after is missed)."""
        alarms = await self._stack.enter_async_context(self.moderation.feed.subscribe())

        async def listen() -> None:
            while True:
                self.on_alarm(await alarms.get())

        self._listener = asyncio.create_task(listen(), name=self.listener_name)

    async def close(self) -> None:
        """Stop listening; end every running recording properly (sealed, notice removed)."""
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listener
        tasks = list(self.recordings.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await self._stack.aclose()

    def on_alarm(self, alarm: Alarm) -> None:
        raise NotImplementedError

    def _first_sight(self, alarm: Alarm) -> bool:
        """Whether `alarm` is open and new to this recorder (remembered, boundedly, from now)."""
        if alarm.status is not AlarmStatus.OPEN or alarm.id in self._seen:
            return False
        self._seen.add(alarm.id)
        self._seen_order.append(alarm.id)
        if len(self._seen_order) > SEEN_LIMIT:
            self._seen.discard(self._seen_order.popleft())
        return True

    def _run(self, place: str, recording: Coroutine[Any, Any, None]) -> None:
        """Run `recording` as the one recording of `place` (forgotten when it ends)."""
        task = asyncio.create_task(recording, name=f"recording:{place}")
        self.recordings[place] = task

        def done(finished: asyncio.Task[None]) -> None:
            if self.recordings.get(place) is finished:
                del self.recordings[place]

        task.add_done_callback(done)


class TableRecorder(AlarmRecorder):
    """Records a table after each alarm; one recording per table at a time."""

    listener_name = "table-recorder"

    def on_alarm(self, alarm: Alarm) -> None:
        """A new alarm of a running game starts the warning and then the recording."""
        if alarm.game_id is None:  # a conference room's alarm (service/conference_recorder.py)
            return
        game_id = alarm.game_id
        if not self._first_sight(alarm):
            return
        if game_id in self.recordings:
            # The recording running already covers the table; the alarm is in the queue.
            log.info("recording_already_running", game=game_id, alarm=alarm.id)
            return
        self._run(game_id, self._record(alarm, game_id))

    async def _record(self, alarm: Alarm, game_id: str) -> None:
        notices = self.hub.notices
        try:
            await self._warn_and_record(alarm, game_id)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("recording_failed", game=game_id, alarm=alarm.id)
        finally:
            notices.publish(game_id, None)

    async def _warn_and_record(self, alarm: Alarm, game_id: str) -> None:
        actor = self.hub.actors.get(game_id)
        state = actor.state if actor is not None else None
        if actor is None or state is None or actor.is_over:
            log.info("recording_no_running_game", game=game_id, alarm=alarm.id)
            return
        rules = actor.ruleset
        seats = concerned_seats(alarm, rules, state)
        warning = RecordingNotice(
            game_id,
            alarm.id,
            NoticeStage.WARNING,
            seats,
            _round(state),
            since=self.moderation.clock().timestamp(),
            max_s=self.moderation.settings.recording_max_s,
        )
        acks = [asyncio.ensure_future(a) for a in self.hub.notices.publish(game_id, warning)]
        if acks:
            _, late = await asyncio.wait(acks, timeout=self.notice_wait_s)
            if late:
                log.warning("recording_notice_late", game=game_id, lines=len(late))
            for ack in late:
                ack.cancel()
        state = actor.state
        if state is None or actor.is_over or self.hub.actors.get(game_id) is not actor:
            return
        writer = await self.moderation.start_recording(
            room=room_name(rules, state, seats), game_id=game_id, alarm_id=alarm.id
        )
        window = self.moderation.game_window(_round(state))
        sink = RecordingSink(writer)
        self.sinks[game_id] = sink
        stop = asyncio.Event()

        def observe(first_seq: int, events: Sequence[Event], now_state: Any) -> None:
            for event in events:
                if event.code == "chat" and _reaches(event, seats):
                    speaker = f"{event.params.get('seat')} ({event.params.get('room')})"
                    sink.chat(speaker, str(event.params.get("text", "")))
            if rules.is_over(now_state) or window.must_stop(
                self.moderation.clock(), _round(now_state)
            ):
                stop.set()

        actor.observers.add(observe)
        running = replace(
            warning,
            stage=NoticeStage.RECORDING,
            round=_round(state),
            since=window.started_at.timestamp(),
            until=window.deadline.timestamp(),
        )
        self.hub.notices.publish(game_id, running, tap=sink.audio)
        log.info("recording_started", game=game_id, alarm=alarm.id, recording=writer.recording_id)
        try:
            remaining = window.remaining(self.moderation.clock()).total_seconds()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), remaining)
        finally:
            actor.observers.discard(observe)
            self.hub.notices.publish(game_id, None)
            await self._finish(game_id, sink)  # also when cancelled: the file is sealed

    async def _finish(self, game_id: str, sink: RecordingSink) -> None:
        await sink.close()
        await self.moderation.finish_recording(sink.writer)
        if self.sinks.get(game_id) is sink:
            del self.sinks[game_id]
        log.info(
            "recording_finished",
            game=game_id,
            recording=sink.writer.recording_id,
            frames=sink.frames,
            chat=sink.chat_lines,
            dropped=sink.dropped,
        )


def _reaches(event: Event, seats: frozenset[int]) -> bool:
    """A chat line of a recorded room: one a concerned seat receives (public: the market)."""
    if not seats:
        return event.audience.includes(Viewer.spectator())
    return any(event.audience.includes(Viewer.player(seat)) for seat in seats)
