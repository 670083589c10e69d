"""O2: how long a recording runs — a game's until the round ends, at most the maximum; a
conference room's exactly its length."""

from __future__ import annotations

from datetime import timedelta

import pytest

from vollmond.moderation.limits import RecordingPlace, RecordingWindow
from vollmond.settings.moderation import ModerationSettings

from .conftest import START

SETTINGS = ModerationSettings()


@pytest.mark.rule("O2")
def test_game_recording_stops_at_round_end_or_five_minutes() -> None:
    start = START
    window = RecordingWindow.for_game(start, round=4, max_s=SETTINGS.recording_max_s)
    assert window.place is RecordingPlace.GAME
    assert window.deadline == start + timedelta(minutes=5)
    assert not window.must_stop(start + timedelta(minutes=4, seconds=59), round=4)
    assert window.must_stop(start + timedelta(minutes=5), round=4)
    assert window.must_stop(start + timedelta(seconds=30), round=5)  # the round ended
    assert window.remaining(start + timedelta(minutes=1)) == timedelta(minutes=4)
    assert window.remaining(start + timedelta(minutes=9)) == timedelta(0)


@pytest.mark.rule("O2")
def test_conference_recording_runs_exactly_its_length() -> None:
    start = START
    window = RecordingWindow.for_conference(start, length_s=SETTINGS.conference_recording_s)
    assert window.place is RecordingPlace.CONFERENCE
    assert not window.must_stop(start + timedelta(minutes=4, seconds=59), round=9)
    assert window.must_stop(start + timedelta(minutes=5))
