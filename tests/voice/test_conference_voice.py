"""A conference room's voice (X2): everyone who talks is heard by every other member, nobody
hears themselves, a muted or listening member is heard by nobody, and two rooms never mix.

Each member plays its own tone through the real mixer; spectra tell who heard whom.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.phone.helpers import ToneSource
from tests.phone.test_mixer import level_at
from vollmond.phone.media import Int16Array
from vollmond.voice.conference import ConferenceVoice

HEARD = 1000.0
SILENT = 1.0


def tone_of(room: int, slot: int) -> float:
    return 300.0 + 400.0 * room + 100.0 * slot


def run(rooms: list[ConferenceVoice], ticks: int = 25) -> dict[tuple[int, int], Int16Array]:
    """Every slot of every room plays its tone (also the muted and listening ones: the room
    must drop them); returns what each slot heard."""
    tones = {
        (r, slot): ToneSource(tone_of(r, slot), 4000.0)
        for r, voice in enumerate(rooms)
        for slot in range(1, voice.size + 1)
    }
    heard: dict[tuple[int, int], list[Int16Array]] = {key: [] for key in tones}
    silence = np.zeros(160, dtype=np.int16)
    for _ in range(ticks):
        for (r, slot), tone in tones.items():
            rooms[r].push(slot, tone())
        for r, slot in tones:
            frame = rooms[r].pull(slot, puller=(r, slot))
            heard[(r, slot)].append(silence if frame is None else frame)
    return {key: np.concatenate(frames) for key, frames in heard.items()}


@pytest.mark.rule("X2")
def test_members_hear_each_other_not_themselves_and_not_another_room() -> None:
    first, second = ConferenceVoice(3), ConferenceVoice(3)
    first.seat(1, talking=True)
    first.seat(2, talking=True)
    second.seat(1, talking=True)
    heard = run([first, second])

    assert level_at(heard[(0, 1)], tone_of(0, 2)) > HEARD
    assert level_at(heard[(0, 2)], tone_of(0, 1)) > HEARD
    assert level_at(heard[(0, 1)], tone_of(0, 1)) < SILENT  # not herself
    for slot in (1, 2):  # the other room is not heard, nor heard from
        assert level_at(heard[(0, slot)], tone_of(1, 1)) < SILENT
        assert level_at(heard[(1, 1)], tone_of(0, slot)) < SILENT
    assert not np.any(heard[(0, 3)])  # an empty slot hears nothing


@pytest.mark.rule("X2")
def test_a_muted_or_listening_member_hears_the_room_and_is_heard_by_nobody() -> None:
    voice = ConferenceVoice(3)
    voice.seat(1, talking=True)
    voice.seat(2, talking=False)  # muted
    voice.seat(3, talking=False)  # listening
    heard = run([voice])
    for slot in (2, 3):
        assert level_at(heard[(0, slot)], tone_of(0, 1)) > HEARD
        assert level_at(heard[(0, 1)], tone_of(0, slot)) < SILENT
    voice.seat(2, talking=True)  # unmuted
    heard = run([voice])
    assert level_at(heard[(0, 1)], tone_of(0, 2)) > HEARD
    assert level_at(heard[(0, 3)], tone_of(0, 2)) > HEARD
    voice.unseat(2)  # gone: heard by nobody, hears nothing
    heard = run([voice])
    assert level_at(heard[(0, 3)], tone_of(0, 2)) < SILENT
    assert not np.any(heard[(0, 2)])


@pytest.mark.rule("X2", "O2")
def test_the_recording_takes_every_talking_member_and_nobody_else() -> None:
    voice = ConferenceVoice(3)
    voice.seat(1, talking=True)
    voice.seat(2, talking=True)
    voice.seat(3, talking=False)
    frames: list[Int16Array] = []
    voice.record(frames.append)
    run([voice])
    recorded = np.concatenate(frames)
    assert level_at(recorded, tone_of(0, 1)) > HEARD
    assert level_at(recorded, tone_of(0, 2)) > HEARD
    assert level_at(recorded, tone_of(0, 3)) < SILENT
    voice.record(None)
    count = len(frames)
    run([voice])
    assert len(frames) == count
