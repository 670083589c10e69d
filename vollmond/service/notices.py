"""The recording notice of each table (O2, O4): whether a game is being recorded, read by
every channel from here — never guessed by a client, never kept in the engine's rules.

The table recorder (:mod:`vollmond.service.recorder`) publishes a :class:`RecordingNotice`
when it warns a table and again when the recording starts, and None when it ends. Channels
*watch* a game: a phone line speaks the warning and plays the tone, a browser shows the
"recording" mark. Whoever starts watching later asks :meth:`RecordingNotices.current` first,
so a player joining or reconnecting during a recording is told as well (O4).

A watcher may answer a notice with an awaitable that is done once the warning has reached
its player (a phone line: once the spoken warning and the tone were played); the recorder
starts recording only after those (or after a bounded wait). The notice board also hands
the recording's audio tap to the voice rooms, so the mixer needs no knowledge of the vault.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import structlog

from vollmond.i18n import text
from vollmond.worlds import World

log = structlog.get_logger(__name__)

#: Takes one recorded 20 ms frame of 8 kHz audio; must not block (the media clock calls it).
FrameSink = Callable[[npt.NDArray[np.int16]], None]


class NoticeStage(enum.StrEnum):
    """WARNING: the table is being told, nothing is recorded yet. RECORDING: it runs."""

    WARNING = "warning"
    RECORDING = "recording"


@dataclass(frozen=True, slots=True)
class RecordingNotice:
    """What everyone at a recorded table may know: that it is recorded and until when at the
    latest. Which seats raised or are accused stays with the moderators (`seats` is for the
    voice rooms and is never sent to a client)."""

    game_id: str
    alarm_id: int
    stage: NoticeStage
    seats: frozenset[int]
    round: int
    since: float  # wall-clock seconds: when this stage began
    max_s: int  # the longest a game recording runs (the operator's recording_max_s)
    until: float | None = None  # wall-clock seconds: the latest end (RECORDING only)
    conference: bool = False  # a conference room (X2): recorded exactly `max_s`, no round

    @property
    def recording(self) -> bool:
        """Whether the recording runs (the voice rooms tap the mix only then)."""
        return self.stage is NoticeStage.RECORDING

    def to_json(self) -> dict[str, object]:
        """The part a client is sent (docs/protocol.md "Recording notice")."""
        return {
            "active": True,
            "stage": self.stage.value,
            "round": self.round,
            "since": self.since,
            "max_s": self.max_s,
            "until": self.until,
        }


@dataclass(frozen=True, slots=True)
class NoticeText:
    """The notice in words: the short mark a screen shows, and the full sentence."""

    mark: str
    sentence: str


def notice_text(notice: RecordingNotice, lang: str, world: World) -> NoticeText:
    """The catalogue's words for `notice` (``moderation.recording.*``), for every channel."""
    warning = notice.stage is NoticeStage.WARNING
    minutes, seconds = divmod(notice.max_s, 60)
    if seconds:
        limit = text("fmt.seconds", lang, world, n=notice.max_s)
    elif minutes == 1:
        limit = text("fmt.minutes_one", lang, world)
    else:
        limit = text("fmt.minutes", lang, world, n=minutes)
    sentence = "warning" if warning else "running"
    mark = "mark_warning" if warning else "mark"
    # A conference room has no round: its recording runs exactly its length (O2).
    said = "rooms.recording" if notice.conference else "moderation.recording"
    return NoticeText(
        text(f"moderation.recording.{mark}", lang, world),
        text(f"{said}.{sentence}", lang, world, limit=limit),
    )


#: Called with the new notice (None: the recording ended). May return an awaitable that is
#: done when the player has been warned; must not block.
NoticeWatcher = Callable[[RecordingNotice | None], Awaitable[object] | None]


class RecordingNotices:
    """Per game: the current notice, its watchers, and the audio tap of a running recording."""

    def __init__(self) -> None:
        self._current: dict[str, RecordingNotice] = {}
        self._watchers: dict[str, dict[int, NoticeWatcher]] = {}
        self._taps: dict[str, FrameSink] = {}
        self._next = 0

    def current(self, game_id: str) -> RecordingNotice | None:
        """The notice in force for `game_id` (None: the table is not recorded)."""
        return self._current.get(game_id)

    def tap(self, game_id: str) -> FrameSink | None:
        """Where the voice room of `game_id` hands its recorded frames, while it records."""
        return self._taps.get(game_id)

    def watch(self, game_id: str, watcher: NoticeWatcher) -> Callable[[], None]:
        """Follow the notices of `game_id`; returns the function that stops following."""
        self._next += 1
        key = self._next
        self._watchers.setdefault(game_id, {})[key] = watcher

        def unwatch() -> None:
            watchers = self._watchers.get(game_id)
            if watchers is not None:
                watchers.pop(key, None)
                if not watchers:
                    del self._watchers[game_id]

        return unwatch

    def watchers(self, game_id: str) -> int:
        return len(self._watchers.get(game_id, {}))

    def publish(
        self, game_id: str, notice: RecordingNotice | None, tap: FrameSink | None = None
    ) -> list[Awaitable[object]]:
        """Set the notice (and the audio tap) of `game_id` and tell every watcher; returns
        the watchers' "warned" awaitables. A failing watcher is logged, never fatal."""
        if notice is None:
            self._current.pop(game_id, None)
        else:
            self._current[game_id] = notice
        if tap is None:
            self._taps.pop(game_id, None)
        else:
            self._taps[game_id] = tap
        acks: list[Awaitable[object]] = []
        for watcher in list(self._watchers.get(game_id, {}).values()):
            try:
                ack = watcher(notice)
            except Exception:
                log.exception("recording_notice_failed", game=game_id)
                continue
            if ack is not None:
                acks.append(ack)
        return acks
