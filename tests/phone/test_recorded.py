"""What a recording after an alarm takes from the voice rooms (O2): one more gain row, derived
from the routing table, mixed by the same mixer; and the bounded hand-over to the vault writer.

Seat layout as in test_mixer.py: 1, 2 evil; 3 seer; 4 doctor; 5, 6 filler; each source plays
its own tone (300 + 100 * seat Hz).
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from tests.phone.helpers import ToneSource
from tests.phone.test_mixer import SEATS, TABLE, level_at, tone_of
from tests.scenario import Scenario
from vollmond.engine.standard import CallSettings
from vollmond.engine.standard.routing import HALB_GAIN, routing
from vollmond.engine.standard.types import DayCallModes
from vollmond.moderation.vault import RecordingWriter, read_recording
from vollmond.phone.media import Int16Array
from vollmond.service.recorder import RecordingSink
from vollmond.voice.mixer import GameMixer
from vollmond.voice.recorded import recorded_gains

CALLS = CallSettings(by_day=True, day_modes=DayCallModes.BOTH)


def record(g: Scenario, seats: frozenset[int], speakers: set[int], ticks: int = 25) -> Int16Array:
    """Every speaker plays its tone; returns what the recording of `seats`' rooms got."""
    mixer = GameMixer(SEATS)
    table = routing(g.state)
    mixer.set_routing(table)
    got: list[Int16Array] = []
    mixer.record(recorded_gains(table, seats, SEATS), got.append)
    tones = {seat: ToneSource(tone_of(seat), 4000.0) for seat in speakers}
    for _ in range(ticks):
        for seat, tone in tones.items():
            mixer.push(seat, tone())
        mixer.pull(1)  # the line's next pull starts the next tick
    return np.concatenate(got)


@pytest.mark.rule("O2")
def test_by_day_the_recording_is_the_market_place_with_the_accused_in_it() -> None:
    g = Scenario(TABLE).to_day()
    got = record(g, frozenset({3}), {3, 5})
    assert level_at(got[400:], tone_of(3)) > 3000  # the accused's own voice
    assert level_at(got[400:], tone_of(5)) > 3000  # the market place around them


@pytest.mark.rule("O2", "C6", "X6")
def test_a_private_call_of_two_other_players_is_not_recorded() -> None:
    g = Scenario(TABLE, calls=CALLS).to_day().run("call 3 -> 4; accept 4")
    gains = recorded_gains(routing(g.state), frozenset({1, 5}), SEATS)
    assert gains[2] == 0.0 and gains[3] == 0.0
    got = record(g, frozenset({1, 5}), {3, 4, 6})
    assert level_at(got[400:], tone_of(3)) < 50
    assert level_at(got[400:], tone_of(4)) < 50
    assert level_at(got[400:], tone_of(6)) > 3000


@pytest.mark.rule("O2")
def test_the_call_is_recorded_when_the_accused_is_in_it_with_the_market_as_they_hear_it() -> None:
    g = Scenario(TABLE, calls=CALLS).to_day().run("call 3 -> 4; accept 4; toggle 3")
    got = record(g, frozenset({3}), {3, 4, 6})
    assert level_at(got[400:], tone_of(3)) > 3000
    assert level_at(got[400:], tone_of(4)) > 3000
    market = level_at(got[400:], tone_of(6)) / level_at(got[400:], tone_of(4))
    assert market == pytest.approx(HALB_GAIN, rel=0.05)


@pytest.mark.rule("O2", "N1")
def test_at_night_the_night_room_is_recorded_and_a_lone_cell_adds_nothing() -> None:
    g = Scenario(TABLE)  # night 1, the night room is open
    got = record(g, frozenset({1}), {1, 2, 5})
    assert level_at(got[400:], tone_of(2)) > 3000
    assert level_at(got[400:], tone_of(1)) > 3000
    assert level_at(got[400:], tone_of(5)) < 50  # a villager's cell is no part of it
    assert not recorded_gains(routing(g.state), frozenset({5}), SEATS).any()


def test_an_alarm_without_a_seat_records_the_market_place_as_spectators_hear_it() -> None:
    g = Scenario(TABLE, calls=CALLS).to_day().run("call 3 -> 4; accept 4")
    gains = recorded_gains(routing(g.state), frozenset(), SEATS)
    assert gains.tolist() == [1.0, 1.0, 0.0, 0.0, 1.0, 1.0]


def test_silent_ticks_are_recorded_as_silence_so_the_recording_keeps_time() -> None:
    g = Scenario(TABLE).to_day()
    got = record(g, frozenset({3}), set(), ticks=10)
    assert len(got) == 10 * 160 and not got.any()  # one frame per tick, speech or not


def test_the_sink_writes_on_its_own_thread_and_drops_rather_than_blocks(tmp_path: Path) -> None:
    key = bytes(32)
    writer = RecordingWriter(tmp_path / "r.vrec", key, "r1")
    sink = RecordingSink(writer, limit=4)
    # Hold the writer thread (it waits on its first write) so the queue fills.
    gate = threading.Event()
    original = writer.write_audio

    def slow(pcm: bytes) -> None:
        gate.wait(5)
        original(pcm)

    writer.write_audio = slow  # type: ignore[method-assign]
    frame = np.full(160, 1000, dtype=np.int16)
    for _ in range(20):
        sink.audio(frame)  # never blocks the caller
    sink.chat("3 (market)", "hallo")
    assert sink.dropped >= 10
    gate.set()

    import asyncio  # noqa: PLC0415

    asyncio.run(sink.close())
    writer.close()
    content = read_recording((tmp_path / "r.vrec").read_bytes(), key, "r1")
    assert content.complete
    assert len(content.audio) == sink.frames * 320 and sink.frames + sink.dropped >= 20
