"""The moderation service the channels talk to: one object per running service, built at
start from the store, the settings and the data directory, with the clock injected.

Each entry path makes ONE call here (docs/moderation.md lists which): the phone's `*9#` and
the web button call :meth:`Moderation.raise_alarm`, every login/join/found/spectate/room/
mailbox/friends path calls :meth:`Moderation.access`, the mixer calls
:meth:`Moderation.start_recording` and the retention loop runs :meth:`Moderation.run_retention`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

from vollmond.moderation import alarms, recordings, sanctions
from vollmond.moderation.alarms import Alarm, Caller, Outcome
from vollmond.moderation.areas import Area
from vollmond.moderation.feed import AlarmFeed
from vollmond.moderation.limits import RecordingWindow
from vollmond.moderation.recordings import Vault
from vollmond.moderation.sanctions import Access, Sanction, SanctionKind
from vollmond.moderation.subjects import Subject
from vollmond.moderation.vault import RecordingWriter
from vollmond.settings.moderation import ModerationSettings
from vollmond.store.db import Sessions
from vollmond.store.types import utcnow

Clock = Callable[[], datetime]


class Moderation:
    """Alarms, sanctions, access and recordings bound to one store, settings and clock."""

    def __init__(
        self,
        sessions: Sessions,
        settings: ModerationSettings,
        data_dir: Path,
        *,
        clock: Clock = utcnow,
    ) -> None:
        self.sessions = sessions
        self.settings = settings
        self.clock = clock
        self.feed = AlarmFeed()
        self._data_dir = data_dir
        self._vault: Vault | None = None

    @property
    def vault(self) -> Vault:
        """Opened on first use, so a service that never records needs no key file."""
        if self._vault is None:
            self._vault = Vault.open(self.settings, self._data_dir)
        return self._vault

    async def raise_alarm(
        self,
        *,
        game_id: str | None,
        round: int,
        phase: str,
        caller: Caller,
        reason: int | None = None,
        accused_house: int | None = None,
        conference: str | None = None,
    ) -> Alarm:
        """Store an operator call (from a game, or from the conference room `conference`)
        and notify every subscribed moderator at once."""
        alarm = await alarms.raise_alarm(
            self.sessions,
            self.settings,
            game_id=game_id,
            round=round,
            phase=phase,
            caller=caller,
            reason=reason,
            accused_house=accused_house,
            now=self.clock(),
            conference=conference,
        )
        self.feed.publish(alarm)
        return alarm

    async def take(self, alarm_id: int, *, by: int) -> Alarm:
        alarm = await alarms.take_alarm(
            self.sessions, self.settings, alarm_id, by=by, now=self.clock()
        )
        self.feed.publish(alarm)
        return alarm

    async def resolve(self, alarm_id: int, *, by: int, outcome: Outcome, note: str = "") -> Alarm:
        alarm = await alarms.resolve_alarm(
            self.sessions,
            self.settings,
            alarm_id,
            by=by,
            outcome=outcome,
            note=note,
            now=self.clock(),
        )
        self.feed.publish(alarm)
        return alarm

    async def access(self, subject: Subject, *areas: Area) -> Access:
        """THE entry check (O5): :data:`~vollmond.moderation.sanctions.ALLOWED` or a
        :class:`~vollmond.moderation.sanctions.Denied` with reason and expiry to tell."""
        return await sanctions.access(self.sessions, subject, *areas, now=self.clock())

    async def muted(self, subject: Subject) -> Sanction | None:
        """The mute in force for `subject`, or None: rooms and chat ask before letting their
        voice or text through."""
        return await sanctions.muted_until(self.sessions, subject, self.clock())

    async def impose(
        self,
        *,
        by: int,
        subject: Subject,
        kind: SanctionKind,
        reason: str,
        area: Area | None = None,
        duration: timedelta | None = None,
        game_id: str | None = None,
        alarm_id: int | None = None,
    ) -> Sanction:
        return await sanctions.impose(
            self.sessions,
            self.settings,
            by=by,
            subject=subject,
            kind=kind,
            reason=reason,
            area=area,
            duration=duration,
            game_id=game_id,
            alarm_id=alarm_id,
            now=self.clock(),
        )

    async def lift(self, sanction_id: int, *, by: int) -> Sanction:
        return await sanctions.lift(
            self.sessions, self.settings, sanction_id, by=by, now=self.clock()
        )

    async def start_recording(
        self, *, room: str, game_id: str | None = None, alarm_id: int | None = None
    ) -> RecordingWriter:
        """Begin an encrypted recording; call only after the warning and tone were played."""
        return await recordings.start_recording(
            self.sessions,
            self.vault,
            room=room,
            game_id=game_id,
            alarm_id=alarm_id,
            now=self.clock(),
        )

    async def finish_recording(self, writer: RecordingWriter) -> None:
        await recordings.finish_recording(self.sessions, writer, now=self.clock())

    def game_window(self, round: int) -> RecordingWindow:
        """The O2 window of a game recording starting now in round `round`."""
        return RecordingWindow.for_game(
            self.clock(), round=round, max_s=self.settings.recording_max_s
        )

    def conference_window(self) -> RecordingWindow:
        return RecordingWindow.for_conference(
            self.clock(), length_s=self.settings.conference_recording_s
        )

    async def purge_expired(self) -> list[str]:
        return await recordings.purge_expired(self.sessions, self.vault, now=self.clock())

    async def run_retention(self, interval_s: float = 3600.0) -> None:
        """The scheduled retention job: purge now, then every `interval_s`, until cancelled."""
        while True:
            await self.purge_expired()
            await asyncio.sleep(interval_s)
