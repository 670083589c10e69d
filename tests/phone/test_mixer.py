"""The voice-room mixer: `out = G @ frames` from the routing table, a limiter, prompts on top.

Seat layout: 1, 2 evil; 3 seer; 4 doctor; 5, 6 filler. Each source plays its own tone
(frequency 300 + 100 * seat Hz), so what a listener hears can be told apart by spectrum.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.phone.helpers import ToneSource
from tests.scenario import Scenario
from vollmond.engine.kit.routing import Route
from vollmond.engine.standard import CallSettings
from vollmond.engine.standard.routing import DUCKED, HALB_GAIN, SPECTATORS, Listener, routing
from vollmond.engine.standard.types import DayCallModes
from vollmond.phone.media import Int16Array
from vollmond.voice.frames import FRAME_SAMPLES
from vollmond.voice.mixer import (
    CATCH_UP_TICKS,
    CEILING,
    MAX_QUEUED,
    ROOM_UNDER_PROMPT,
    GameMixer,
    gain_matrix,
    overlay,
)

TABLE = "evil evil seer doctor filler filler"
SEATS = 6
LISTENERS: tuple[Listener, ...] = (*range(1, SEATS + 1), SPECTATORS)


def tone_of(seat: int) -> float:
    return 300.0 + 100.0 * seat


def level_at(samples: Int16Array, freq: float) -> float:
    """Amplitude of one frequency in a stretch of 8 kHz audio (a DFT bin, window-corrected)."""
    x = samples.astype(np.float64)
    n = np.arange(len(x))
    bin_ = np.sum(x * np.hanning(len(x)) * np.exp(-2j * np.pi * freq * n / 8000))
    return float(2 * abs(bin_) / np.sum(np.hanning(len(x))))


def run_mixer(g: Scenario, speakers: set[int], ticks: int = 25) -> dict[Listener, Int16Array]:
    """Every speaker plays its tone for `ticks` frames; returns what each listener heard."""
    mixer = GameMixer(SEATS)
    mixer.set_routing(routing(g.state))
    tones = {seat: ToneSource(tone_of(seat), 4000.0) for seat in speakers}
    heard: dict[Listener, list[Int16Array]] = {listener: [] for listener in LISTENERS}
    silence = np.zeros(160, dtype=np.int16)
    for _ in range(ticks):
        for seat, tone in tones.items():
            mixer.push(seat, tone())
        for listener in LISTENERS:
            frame = mixer.pull(listener)
            heard[listener].append(silence if frame is None else frame)
    return {listener: np.concatenate(frames) for listener, frames in heard.items()}


def test_gain_matrix_follows_the_routing_table() -> None:
    g = Scenario(TABLE).to_day().run("interject 4")
    matrix = gain_matrix(routing(g.state), SEATS)
    assert matrix.shape == (SEATS + 1, SEATS)
    assert matrix[0, 3] == 1.0  # house 1 hears the floor holder at full gain
    assert matrix[0, 2] == pytest.approx(DUCKED)
    assert matrix[0, 0] == 0.0  # nobody hears themself
    assert matrix[SEATS].tolist() == pytest.approx([DUCKED, DUCKED, DUCKED, 1.0, DUCKED, DUCKED])


@pytest.mark.rule("N1", "X6")
def test_the_night_room_reaches_only_the_evil_team() -> None:
    g = Scenario(TABLE)  # night 1, the night room is open
    heard = run_mixer(g, {1})
    assert level_at(heard[2][400:], tone_of(1)) > 3000
    for listener in (1, 3, 4, 5, 6, SPECTATORS):
        assert not heard[listener].any(), listener


@pytest.mark.rule("D2")
def test_by_day_the_market_mixes_every_speaker() -> None:
    g = Scenario(TABLE).to_day()
    heard = run_mixer(g, {1, 3})
    for listener in (2, 4, 5, 6, SPECTATORS):
        assert level_at(heard[listener][400:], tone_of(1)) > 3000
        assert level_at(heard[listener][400:], tone_of(3)) > 3000
    assert level_at(heard[1][400:], tone_of(1)) < 50  # one's own voice is not fed back
    assert level_at(heard[1][400:], tone_of(3)) > 3000


@pytest.mark.rule("C6", "C9", "X6")
def test_a_private_call_by_day_is_absent_from_the_market() -> None:
    g = Scenario(TABLE, calls=CallSettings(by_day=True, day_modes=DayCallModes.BOTH)).to_day()
    g.run("call 3 -> 4; accept 4")
    heard = run_mixer(g, {3, 5})
    assert level_at(heard[4][400:], tone_of(3)) > 3000
    for listener in (1, 2, 5, 6, SPECTATORS):
        assert level_at(heard[listener][400:], tone_of(3)) < 50, listener
    # The call starts stumm: the market place is not heard in it.
    assert level_at(heard[4][400:], tone_of(5)) < 50


@pytest.mark.rule("C9")
def test_halbmodus_puts_the_market_quietly_underneath() -> None:
    g = Scenario(TABLE, calls=CallSettings(by_day=True, day_modes=DayCallModes.BOTH)).to_day()
    g.run("call 3 -> 4; accept 4; toggle 3")
    heard = run_mixer(g, {4, 5})
    partner = level_at(heard[3][400:], tone_of(4))
    market = level_at(heard[3][400:], tone_of(5))
    assert market / partner == pytest.approx(HALB_GAIN, rel=0.05)


@pytest.mark.rule("S19")
def test_an_interjection_ducks_everyone_but_the_floor_holder() -> None:
    g = Scenario(TABLE).to_day().run("interject 4")
    heard = run_mixer(g, {4, 5})
    floor = level_at(heard[1][400:], tone_of(4))
    other = level_at(heard[1][400:], tone_of(5))
    assert other / floor == pytest.approx(DUCKED, rel=0.05)


def test_the_limiter_keeps_a_loud_room_below_full_scale_without_wrapping() -> None:
    g = Scenario(TABLE).to_day()
    mixer = GameMixer(SEATS)
    mixer.set_routing(routing(g.state))
    tones = [ToneSource(tone_of(seat), 30000.0) for seat in range(1, SEATS + 1)]
    peaks = []
    for _ in range(20):
        for seat, tone in enumerate(tones, start=1):
            mixer.push(seat, tone())
        frame = mixer.pull(SPECTATORS)
        assert frame is not None
        peaks.append(int(np.max(np.abs(frame.astype(np.int32)))))
    assert max(peaks) <= CEILING + 1
    assert min(peaks[2:]) > 0.5 * CEILING  # limited, not muted


def test_a_source_queue_is_bounded_and_a_silent_tick_is_none() -> None:
    g = Scenario(TABLE).to_day()
    mixer = GameMixer(SEATS)
    mixer.set_routing(routing(g.state))
    tone = ToneSource(500.0)
    for _ in range(10):
        mixer.push(1, tone())
    frames = [mixer.pull(2) for _ in range(MAX_QUEUED + 2)]
    assert [f is not None for f in frames] == [True] * MAX_QUEUED + [False, False]


def test_every_line_pulling_starts_one_tick_even_when_lines_share_a_listener() -> None:
    g = Scenario(TABLE).to_day()
    mixer = GameMixer(SEATS)
    mixer.set_routing(routing(g.state))
    for _ in range(4):
        mixer.push(1, ToneSource(500.0)())
        for line in ("a", "b", "c"):  # three spectators on the phone
            assert mixer.pull(SPECTATORS, puller=line) is not None
    assert mixer.ticks == 4


def test_prompts_are_mixed_on_top_of_a_ducked_room() -> None:
    prompt = np.full(160, 1000, dtype=np.int16)
    room = np.full(160, 2000, dtype=np.int16)
    assert overlay(None, None) is None
    assert overlay(prompt, None) is prompt
    assert overlay(None, room) is room
    mixed = overlay(prompt, room)
    assert mixed is not None
    assert int(mixed[0]) == 1000 + int(2000 * ROOM_UNDER_PROMPT)
    loud = overlay(np.full(160, 32000, dtype=np.int16), np.full(160, 32000, dtype=np.int16))
    assert loud is not None and int(loud.max()) == 32767


def test_a_standing_backlog_is_shed_after_a_while() -> None:
    """A burst leaves a frame waiting behind the next one at every tick (a standing delay of
    one frame, the speaker's and the mixer's clocks keep their pace): after CATCH_UP_TICKS
    ticks one frame is skipped and the delay is gone; a single late frame costs nothing."""
    mixer = GameMixer(2)
    mixer.set_routing({2: (Route(1, 1.0),)})
    mixer.push(1, np.full(FRAME_SAMPLES, 1, dtype=np.int16))  # the burst: two at once
    heard = []
    for n in range(2, 2 + CATCH_UP_TICKS + 2):
        mixer.push(1, np.full(FRAME_SAMPLES, n, dtype=np.int16))
        frame = mixer.pull(2)
        heard.append(int(frame[0]) if frame is not None else 0)
    behind = CATCH_UP_TICKS - 1
    assert heard[:behind] == list(range(1, behind + 1))  # one frame behind, every frame heard
    assert mixer.skipped == 1  # frame CATCH_UP_TICKS was skipped
    assert heard[behind:] == list(range(CATCH_UP_TICKS + 1, CATCH_UP_TICKS + 4))  # caught up


def test_heard_names_the_speakers_of_the_listeners_own_row_in_this_tick() -> None:
    """The speaking indicator's levels are made when asked, from the frames of the tick the
    listener was just given: a speaker the row does not route is never named, a quiet one
    not above the threshold, and a tick in which nobody spoke names nobody."""
    mixer = GameMixer(3)
    mixer.set_routing({1: (Route(2, 1.0), Route(3, 1.0)), 2: (Route(1, 1.0),)})
    loud, quiet = np.full(FRAME_SAMPLES, 2000, np.int16), np.full(FRAME_SAMPLES, 50, np.int16)
    for seat, frame in ((1, loud), (2, loud), (3, quiet)):
        mixer.push(seat, frame)
    mixer.pull(1)
    assert mixer.heard(1, 100.0) == (2,)  # 3 speaks below the threshold
    assert mixer.heard(1) == (2, 3)
    assert mixer.heard(2, 100.0) == (1,)
    assert mixer.heard(3, 0.0) == ()  # routes nobody
    mixer.push(3, loud)
    mixer.pull(1)  # the next tick: only 3 spoke
    assert mixer.heard(1, 100.0) == (3,)
    assert mixer.heard(2, 100.0) == ()
    mixer.pull(1)  # nobody spoke
    assert mixer.heard(1) == ()


# -- many pullers at once (the media process's batched tick) ------------------------------------

_PULLERS = st.lists(st.integers(0, 5), min_size=1, max_size=6, unique=True)


@settings(max_examples=200, deadline=None)
@given(
    seats=st.integers(1, 4),
    gains=st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0]), min_size=20, max_size=20),
    ticks=st.lists(
        st.tuples(_PULLERS, st.lists(st.integers(1, 4), max_size=6), st.integers(0, 2**16)),
        min_size=1,
        max_size=12,
    ),
)
def test_pull_all_gives_each_puller_what_pulling_one_by_one_gives(
    seats: int, gains: list[float], ticks: list[tuple[list[int], list[int], int]]
) -> None:
    """Twin rooms, the same voices pushed: in each tick the pullers (a random set, in a
    random order, so some are new to the room and come first) pull one by one from one room
    and all at once from the other; each hears the same samples, row by row, tick by tick."""
    one, many = GameMixer(seats), GameMixer(seats)
    matrix = np.asarray(gains[: (seats + 1) * seats], np.float32).reshape(seats + 1, seats)
    one.set_gains(matrix)
    many.set_gains(matrix)
    for pullers, speakers, seed in ticks:
        voices = np.random.default_rng(seed).integers(-20000, 20000, (len(speakers), 160))
        for seat, voice in zip(speakers, voices.astype(np.int16), strict=True):
            one.push(min(seat, seats), voice)
            many.push(min(seat, seats), voice)
        rows = [puller % (seats + 1) for puller in pullers]  # several lines on one row too
        k, before, after = many.pull_all(pullers)
        for i, (puller, row) in enumerate(zip(pullers, rows, strict=True)):
            frame = one.pull(SPECTATORS if row == seats else row + 1, puller=puller)
            mix, audible = before if i < k else after
            assert bool(audible[row]) == (frame is not None)
            expected = np.zeros(160, np.int16) if frame is None else frame
            assert (mix[row] * audible[row]).tolist() == expected.tolist()
        assert one.ticks == many.ticks


def test_a_line_new_to_a_room_that_pulls_first_hears_the_last_mix_as_one_by_one() -> None:
    """Lines a and b pulled last tick; c joins ahead of them in the clock's order: it hears
    the last tick's mix (one by one it would too) and a starts the new one."""
    mixer = GameMixer(2)
    mixer.set_gains(np.asarray([[0, 1], [1, 0], [1, 1]], np.float32))
    mixer.push(1, np.full(160, 100, np.int16))
    assert mixer.pull_all(["a", "b"])[0] == 0
    mixer.push(1, np.full(160, 300, np.int16))
    k, before, after = mixer.pull_all(["c", "a", "b"])
    assert k == 1 and int(before[0][1][0]) == 100 and int(after[0][1][0]) == 300
