"""What the runtime asks of every rule set through the protocol (issue 14): the command codec,
the replay streams, leaving, phases and timers — checked on each registered rule set alike."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vollmond.engine.core import Rejection
from vollmond.engine.ruleset import AnyRuleSet, CommandDecodeError, get_ruleset, ruleset_ids

SIZES = {"standard": 8, "classic": 8, "mayor": 8}


def _played(rules: AnyRuleSet, seed: int, steps: int = 60) -> list[Any]:
    """States of a short game: random legal commands, timers when nobody acts."""
    options = rules.decode_options({"players": SIZES[rules.id]})
    result = rules.new_game(options, rules.rng_for(seed, 0))
    state, timers = result.state, list(result.timers)
    states = [state]
    chooser = random.Random(seed)
    for index in range(1, steps):
        if rules.is_over(state):
            break
        legal = [c for seat in range(1, SIZES[rules.id] + 1) for c in rules.legal(state, seat)]
        if legal:
            command = chooser.choice(legal)
        else:
            ends = [t.command for t in timers if rules.timer_phase(t.command) is not None]
            if not ends:
                break
            command = ends[-1]
        outcome = rules.apply(state, command, rules.rng_for(seed, index))
        if isinstance(outcome, Rejection):
            continue
        state, timers = outcome.state, list(outcome.timers)
        states.append(state)
    return states


@pytest.mark.parametrize("ruleset_id", ruleset_ids())
def test_every_legal_command_and_timer_survives_the_codec(ruleset_id: str) -> None:
    rules = get_ruleset(ruleset_id)
    seen = 0
    for state in _played(rules, seed=3):
        for seat in range(1, SIZES[ruleset_id] + 1):
            for command in rules.legal(state, seat):
                data = rules.encode_command(command)
                assert rules.decode_command(data, players_only=True) == command
                assert rules.actor_of(command) == seat
                seen += 1
    assert seen > 0
    options = rules.decode_options({"players": SIZES[ruleset_id]})
    for timer in rules.new_game(options, rules.rng_for(1, 0)).timers:
        data = rules.encode_command(timer.command)
        assert rules.decode_command(data) == timer.command
        assert rules.actor_of(timer.command) is None
        with pytest.raises(CommandDecodeError):  # a client may not end a phase
            rules.decode_command(data, players_only=True)


@pytest.mark.parametrize("ruleset_id", ruleset_ids())
def test_leaving_is_valid_for_a_living_player_and_moves_nothing_else(ruleset_id: str) -> None:
    rules = get_ruleset(ruleset_id)
    state = _played(rules, seed=5, steps=1)[0]
    leave = rules.leave(2)
    assert rules.validate(state, leave) is None
    assert rules.actor_of(leave) == 2
    outcome = rules.apply(state, leave, rules.rng_for(5, 1))
    assert not isinstance(outcome, Rejection)
    assert rules.validate(outcome.state, leave) is not None  # gone: cannot leave twice
    assert rules.phase_seq(state) <= rules.phase_seq(outcome.state)
    assert isinstance(rules.phase_name(state), str)


@pytest.mark.parametrize("ruleset_id", ruleset_ids())
def test_the_replay_streams_are_the_same_for_the_same_seed_and_index(ruleset_id: str) -> None:
    rules = get_ruleset(ruleset_id)
    a, b, c = rules.rng_for(9, 4), rules.rng_for(9, 4), rules.rng_for(9, 5)
    draws = [list(range(20)) for _ in range(3)]
    for rng, xs in zip((a, b, c), draws, strict=True):
        rng.shuffle(xs)
    assert draws[0] == draws[1] != draws[2]


@settings(max_examples=150, deadline=None)
@given(
    ruleset_id=st.sampled_from(ruleset_ids()),
    data=st.one_of(
        st.none(),
        st.integers(),
        st.text(max_size=8),
        st.lists(st.integers(), max_size=3),
        st.dictionaries(
            st.sampled_from(["type", "actor", "target", "kind", "phase_seq", "text", "x"]),
            st.one_of(
                st.none(),
                st.booleans(),
                st.integers(),
                st.text(max_size=6),
                st.sampled_from(["Vote", "Leave", "PhaseTimeout", "Act", "Stand", "Say"]),
            ),
            max_size=5,
        ),
    ),
)
def test_junk_is_refused_with_the_codec_error_only(ruleset_id: str, data: object) -> None:
    rules = get_ruleset(ruleset_id)
    try:
        command = rules.decode_command(data, players_only=True)
    except CommandDecodeError:
        return
    assert rules.encode_command(command) == data  # accepted only if it is exactly a command
