"""The recording notice on a caller's line (O2, O4): the spoken warning and the tone.

A :class:`RecordingNoticeLine` follows the hub's notice board for the caller's game while
the caller is at the table (seated or listening). When a table is warned, or when the caller
arrives while a recording runs, it speaks the warning and plays the notice tone, both not
skippable by keys; when the recording ends it says so. The recorder waits for the awaitable
it returns (the tone has been played) before it starts recording.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from vollmond.phone.session.prompts import Priority, tones
from vollmond.service.notices import RecordingNotice, notice_text
from vollmond.worlds import World

if TYPE_CHECKING:
    from vollmond.phone.session.session import PhoneSession

TONE: Final = "recording_notice"
#: How often the line looks whether the tone has been played (one media frame).
PLAYED_POLL_S: Final = 0.02


class RecordingNoticeLine:
    def __init__(
        self,
        session: PhoneSession,
        game_id: str,
        world: World,
        ended: str = "moderation.recording.ended",
    ) -> None:
        """`game_id` is the key on the notice board (a conference room's too); `ended`
        the catalogue line said when the recording is over."""
        self.s = session
        self.game_id = game_id
        self.world = world
        self.ended = ended
        self.told: int | None = None  # the alarm whose recording this caller was told of
        self._unwatch: Callable[[], None] | None = None

    def start(self) -> None:
        """Follow the table's notices; a recording already running is announced now (O4)."""
        notices = self.s.hub.notices
        self._unwatch = notices.watch(self.game_id, self.on_notice)
        current = notices.current(self.game_id)
        if current is not None:
            self.on_notice(current)

    def stop(self) -> None:
        if self._unwatch is not None:
            self._unwatch()
            self._unwatch = None

    def on_notice(self, notice: RecordingNotice | None) -> asyncio.Task[None] | None:
        if notice is None:
            if self.told is not None:
                self.told = None
                ended = self.s.t(self.ended, self.world)
                self.s.say(ended, priority=Priority.NEWS, remember=False)
            return None
        if self.told == notice.alarm_id:
            return None  # warned already; the same recording has only started
        self.told = notice.alarm_id
        prompts = self.s.prompts
        words = notice_text(notice, self.s.lang, self.world)
        # An alert: cuts whatever plays (game news is heard again afterwards), goes before any
        # backlog (turn prompts are urgent too, and a recording waits for this notice), and
        # keys cannot skip it.
        prompts.say(words.sentence, Priority.ALERT)
        prompts.play(TONE, tones.recording_notice(), Priority.ALERT)
        return self.s.spawn(self._played(), name=f"recording-notice:{self.game_id}")

    async def _played(self) -> None:
        """Done once the notice tone (after the spoken warning) has left the prompt queue."""
        while TONE in self.s.prompts.queued_tones:
            await asyncio.sleep(PLAYED_POLL_S)
