"""How long a recording runs (O2): in a game until the end of the current round but at most
`recording_max_s`; in a conference room exactly `conference_recording_s`.

Pure: the caller (the mixer's clock, a game actor) asks with its own `now` and round.

>>> from datetime import UTC, datetime, timedelta
>>> start = datetime(2026, 12, 1, 20, 0, tzinfo=UTC)
>>> window = RecordingWindow.for_game(start, round=3, max_s=300)
>>> window.must_stop(start + timedelta(seconds=60), round=3)
False
>>> window.must_stop(start + timedelta(seconds=60), round=4)
True
>>> window.must_stop(start + timedelta(seconds=300), round=3)
True
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime, timedelta


class RecordingPlace(enum.StrEnum):
    GAME = "game"
    CONFERENCE = "conference"


@dataclass(frozen=True, slots=True)
class RecordingWindow:
    """When one recording started and when it must end."""

    place: RecordingPlace
    started_at: datetime
    deadline: datetime
    round: int | None = None

    @staticmethod
    def for_game(started_at: datetime, *, round: int, max_s: int) -> RecordingWindow:
        """A game recording: ends with round `round` or after `max_s`, whichever is first."""
        return RecordingWindow(
            RecordingPlace.GAME, started_at, started_at + timedelta(seconds=max_s), round
        )

    @staticmethod
    def for_conference(started_at: datetime, *, length_s: int) -> RecordingWindow:
        """A conference room recording: exactly `length_s`, whatever happens in the room."""
        return RecordingWindow(
            RecordingPlace.CONFERENCE, started_at, started_at + timedelta(seconds=length_s)
        )

    def must_stop(self, now: datetime, round: int | None = None) -> bool:
        """Whether the recording has to stop at `now`, the game being in round `round`."""
        if now >= self.deadline:
            return True
        return self.round is not None and round is not None and round != self.round

    def remaining(self, now: datetime) -> timedelta:
        """Time left until the deadline, for the timer that stops the recording."""
        return max(self.deadline - now, timedelta(0))
