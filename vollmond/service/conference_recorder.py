"""The recording after an operator call in a conference room (X2, O1-O4).

Like the games' :class:`~vollmond.service.recorder.TableRecorder`, it follows the moderation
alarm feed, so every way of calling the moderators from a room is covered. For a new alarm
that names a conference room it:

1. publishes a WARNING notice on the hub's notice board under the room's key (every phone
   line in the room speaks the warning and plays the tone; a browser shows the mark; whoever
   comes in later is told too, O4) and waits until the lines have played it (bounded by
   ``recording_notice_wait_s``);
2. starts the encrypted recording and hands the room's mix of every talking member
   (:meth:`~vollmond.voice.conference.ConferenceVoice.record`) and its chat lines to it;
3. stops after exactly ``conference_recording_s`` (O2: "in Konferenzräumen genau 5 Minuten")
   — whoever leaves or comes meanwhile, even when the room empties — and seals the file.
"""

from __future__ import annotations

import asyncio

import structlog

from vollmond.moderation.alarms import Alarm
from vollmond.service.conference import (
    ConferenceRoom,
    EventKind,
    RoomEvent,
    RoomNotFoundError,
    conference_rooms,
)
from vollmond.service.notices import NoticeStage, RecordingNotice
from vollmond.service.recorder import AlarmRecorder, RecordingSink

log = structlog.get_logger(__name__)


class ConferenceRecorder(AlarmRecorder):
    """Records a conference room for exactly its length after each alarm; one at a time."""

    listener_name = "conference-recorder"

    def on_alarm(self, alarm: Alarm) -> None:
        room_id = alarm.conference
        if room_id is None or not self._first_sight(alarm):
            return
        if room_id in self.recordings:
            log.info("conference_recording_already_running", room=room_id, alarm=alarm.id)
            return
        try:
            room = conference_rooms(self.hub).by_id(room_id)
        except RoomNotFoundError:
            log.info("conference_recording_no_room", room=room_id, alarm=alarm.id)
            return
        self._run(room_id, self._record(alarm, room))

    async def _record(self, alarm: Alarm, room: ConferenceRoom) -> None:
        notices = self.hub.notices
        key = room.notice_key
        try:
            await self._warn_and_record(alarm, room)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("conference_recording_failed", room=room.id, alarm=alarm.id)
        finally:
            notices.publish(key, None)

    async def _warn_and_record(self, alarm: Alarm, room: ConferenceRoom) -> None:
        key = room.notice_key
        length = self.moderation.settings.conference_recording_s
        warning = RecordingNotice(
            key,
            alarm.id,
            NoticeStage.WARNING,
            frozenset(),
            0,
            since=self.moderation.clock().timestamp(),
            max_s=length,
            conference=True,
        )
        acks = [asyncio.ensure_future(a) for a in self.hub.notices.publish(key, warning)]
        if acks:
            _, late = await asyncio.wait(acks, timeout=self.notice_wait_s)
            for ack in late:
                ack.cancel()
        writer = await self.moderation.start_recording(
            room=f"conference:{room.id}", alarm_id=alarm.id
        )
        window = self.moderation.conference_window()
        sink = RecordingSink(writer)
        self.sinks[room.id] = sink

        def observe(event: RoomEvent) -> None:
            if event.kind is EventKind.CHAT:
                sink.chat(f"{event.slot} ({event.name})", event.text)

        room.observers.add(observe)
        room.voice.record(sink.audio)
        running = RecordingNotice(
            key,
            alarm.id,
            NoticeStage.RECORDING,
            frozenset(),
            0,
            since=window.started_at.timestamp(),
            max_s=length,
            until=window.deadline.timestamp(),
            conference=True,
        )
        self.hub.notices.publish(key, running, tap=sink.audio)
        log.info("conference_recording_started", room=room.id, recording=writer.recording_id)
        try:
            await asyncio.sleep(window.remaining(self.moderation.clock()).total_seconds())
        finally:
            room.voice.record(None)
            room.observers.discard(observe)
            self.hub.notices.publish(key, None)
            await sink.close()
            await self.moderation.finish_recording(sink.writer)
            if self.sinks.get(room.id) is sink:
                del self.sinks[room.id]
            log.info(
                "conference_recording_finished",
                room=room.id,
                recording=writer.recording_id,
                frames=sink.frames,
                dropped=sink.dropped,
            )
