"""The relayed line's jitter buffer (vollmond/voice/relay.py `JitterBuffer`): order, caps, the
standing delay shed, silence told apart from a gap, and the playout delay that grows after
gaps and shrinks when calm — driven tick by tick, as the landing's media clock pulls it."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from vollmond.voice.frames import FRAME_SAMPLES, Int16Array
from vollmond.voice.relay import (
    CALM_TICKS,
    CATCH_UP_TICKS,
    DEPTH,
    MAX_PREFILL,
    PREFILL,
    JitterBuffer,
)


def frame(n: int) -> Int16Array:
    return np.full(FRAME_SAMPLES, n, dtype=np.int16)


def test_the_buffer_delays_reorders_and_caps() -> None:
    frames = {n: frame(n) for n in range(1, 9)}
    buffer = JitterBuffer(prefill=2, depth=3, most=2)  # a fixed delay: it cannot grow
    buffer.put(2, frames[2])
    assert buffer.get() is None  # one frame is not yet the playout delay
    buffer.put(1, frames[1])  # late but in time: played in order
    assert buffer.get() is frames[1] and buffer.get() is frames[2]
    assert buffer.get() is None and buffer.underruns == 1
    buffer.put(1, frames[1])  # older than what was played: dropped
    assert buffer.late == 1 and len(buffer) == 0
    for n in (3, 4, 5, 6):  # a burst beyond the depth: the oldest goes
        buffer.put(n, frames[n])
    assert buffer.dropped == 1 and len(buffer) == 3
    assert buffer.get() is frames[4]  # three wait: the playout delay plus one, kept


def test_a_standing_delay_is_shed_one_frame_per_catch_up() -> None:
    """With a delay of one frame, a burst leaves two waiting: shed after CATCH_UP_TICKS pulls
    that each found more than one frame waiting, by skipping one frame."""
    first, second = frame(1), frame(2)
    buffer = JitterBuffer(prefill=1, depth=3)
    buffer.put(1, first)
    buffer.put(2, second)
    played = []
    for n in range(3, 2 + CATCH_UP_TICKS):  # one pull short of the catch-up
        played.append(buffer.get())
        buffer.put(n, frame(n))
    assert played[0] is first and played[1] is second and buffer.dropped == 0
    assert buffer.get() is not None and buffer.dropped == 1 and len(buffer) == 0


def test_silence_from_the_owner_is_no_gap() -> None:
    """A tick the listener hears nothing in is answered all the same: it plays as silence and
    neither counts as an underrun nor lengthens the delay (a pause in the talk is no stall)."""
    buffer = JitterBuffer()
    for tick in range(1, 201):
        heard = frame(tick) if tick % 50 < 25 else None  # talk spurts and pauses
        buffer.put(tick, heard)
        got = buffer.get()
        assert (got is None) == (heard is None)
    assert buffer.underruns == 0 and buffer.prefill == PREFILL and buffer.deepest == PREFILL


def test_a_gap_lengthens_the_delay_and_calm_gives_it_back() -> None:
    buffer = JitterBuffer()
    assert (buffer.prefill, buffer.depth) == (PREFILL, DEPTH)
    buffer.put(1, frame(1))
    assert buffer.get() is not None
    assert buffer.get() is None  # tick 2's answer has not come: a gap
    assert buffer.underruns == 1 and buffer.prefill == PREFILL + 1
    assert buffer.depth == DEPTH + 1  # the room for a burst moves with the delay
    # The late answer and the next one come together: played from now on one frame later.
    buffer.put(2, frame(2))
    assert buffer.get() is None  # one waits: not yet the new delay
    buffer.put(3, frame(3))
    tick = 3
    for _ in range(CALM_TICKS - 1):  # steady: one answer a tick, two waiting at each pull
        got = buffer.get()
        assert got is not None
        tick += 1
        buffer.put(tick, frame(tick))
    assert buffer.prefill == PREFILL + 1 and buffer.underruns == 1
    assert buffer.get() is not None  # the last calm pull: a frame of the delay given back
    assert buffer.prefill == PREFILL and buffer.deepest == PREFILL + 1
    dropped = buffer.dropped
    for _ in range(CATCH_UP_TICKS):  # the frame now standing is shed by the catch-up
        tick += 1
        buffer.put(tick, frame(tick))
        assert buffer.get() is not None
    assert buffer.dropped == dropped + 1
    tick += 1
    buffer.put(tick, frame(tick))
    assert len(buffer) == PREFILL  # one frame's delay again


def test_the_delay_grows_no_further_than_its_most() -> None:
    buffer = JitterBuffer()
    seq = 0
    for _ in range(3 * MAX_PREFILL):  # answers in bursts of the delay, then none: a gap each
        for _ in range(buffer.prefill):
            seq += 1
            buffer.put(seq, frame(seq))
        while buffer.get() is not None:
            pass
    assert buffer.underruns == 3 * MAX_PREFILL
    assert buffer.prefill == MAX_PREFILL and buffer.deepest == MAX_PREFILL


def played_gaps(buffer: JitterBuffer, ticks: int, stall_every: int, stall: int) -> int:
    """Ticks the caller heard a gap in, when the owner answers each tick before the next
    one's pull, except that every `stall_every` ticks it stalls for `stall` ticks and then
    answers everything waiting at once (what a busy process does). The start, before the
    first answer is played, is no gap."""
    waiting: list[int] = []
    gaps = 0
    started = False
    for tick in range(1, ticks + 1):
        if tick % stall_every >= stall:  # the owner runs: what it was asked is answered
            for answered in waiting:
                buffer.put(answered, frame(answered))
            waiting.clear()
        got = buffer.get()
        started = started or got is not None
        gaps += started and got is None
        waiting.append(tick)  # this tick's record goes to the owner
    return gaps


def test_a_stalling_owner_costs_gaps_only_until_the_delay_has_grown() -> None:
    """An owner that stalls for three ticks once a second, for a minute: with the delay fixed
    at one frame every stall is heard as a gap; with the delay free to grow, only the first
    few stalls are, and the delay stays within its most."""
    minute = 3000
    fixed = played_gaps(JitterBuffer(most=PREFILL), minute, stall_every=50, stall=3)
    adaptive = JitterBuffer()
    grown = played_gaps(adaptive, minute, stall_every=50, stall=3)
    # Each of the 59 stalls after the start is heard: the frame waiting covers at most one
    # of its three ticks.
    assert fixed >= 59 * 2
    assert grown <= 3 * 5  # a handful of stalls, while the delay grows to cover them
    assert PREFILL < adaptive.prefill <= MAX_PREFILL


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(-3, 40), st.booleans(), st.booleans()), min_size=1, max_size=300)
)
def test_any_order_of_answers_keeps_the_buffer_within_its_bounds(
    steps: list[tuple[int, bool, bool]],
) -> None:
    """Answers of any tick (early, late, repeated, silent) and pulls in any order: it never
    holds more than its depth, never plays an answer twice or out of order, and its delay
    stays between where it started and its most."""
    buffer = JitterBuffer()
    played: list[int] = []
    for seq, silent, pull in steps:
        buffer.put(seq, None if silent else frame(seq))
        assert len(buffer) <= buffer.depth
        if pull:
            got = buffer.get()
            if got is not None:
                played.append(int(got[0]))
        assert PREFILL <= buffer.prefill <= MAX_PREFILL
    assert played == sorted(set(played))
