"""The mayor rule set through the `RuleSet` protocol only: registry, options codec, a whole
game played with the protocol's own bots, and the per-seed determinism of the simulation."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from typing import Any

import pytest

from vollmond.engine.core import Rejection, Viewer
from vollmond.engine.mayor.commands import Command, TimerCommand
from vollmond.engine.mayor.options import Durations, InvalidOptionsError, MayorOptions
from vollmond.engine.mayor.replay import rng_for
from vollmond.engine.mayor.routing import Route
from vollmond.engine.mayor.ruleset import RULESET, MayorRuleSet
from vollmond.engine.mayor.sim import play_game, win_rates
from vollmond.engine.mayor.state import MayorState
from vollmond.engine.mayor.view import MayorView
from vollmond.engine.ruleset import OptionsDecodeError, RuleSet, get_ruleset, ruleset_ids

# mypy's structural check: the mayor rule set satisfies the protocol with its own types.
_TYPED: RuleSet[MayorState, Command, TimerCommand, MayorOptions, MayorView, Route] = MayorRuleSet()


def test_the_registry_lists_and_loads_the_mayor_rule_set() -> None:
    assert "mayor" in ruleset_ids()
    assert get_ruleset("mayor") is RULESET
    assert RULESET.id == "mayor"


@pytest.mark.parametrize(
    "options",
    [
        MayorOptions(players=7),
        MayorOptions(
            players=12,
            nazis=4,
            lovers=False,
            durations=Durations(night_s=30.0, defence_s=10.0),
            stalemate_rounds=2,
        ),
    ],
)
def test_the_options_codec_round_trips(options: MayorOptions) -> None:
    encoded = RULESET.encode_options(options)
    assert RULESET.decode_options(json.loads(json.dumps(encoded))) == options


@pytest.mark.parametrize(
    "junk",
    [
        {},
        {"players": "many"},
        {"players": True},
        {"players": 8, "durations": {"nap_s": 3}},
        {"players": 8, "durations": 3},
        {"players": 8, "nazis": "two"},
    ],
)
def test_junk_options_raise_one_specific_error(junk: Mapping[str, Any]) -> None:
    with pytest.raises(OptionsDecodeError):
        RULESET.decode_options(junk)


@pytest.mark.parametrize(
    "options",
    [MayorOptions(players=3), MayorOptions(players=41), MayorOptions(players=8, nazis=4)],
)
def test_options_that_make_no_fair_game_are_refused(options: MayorOptions) -> None:
    with pytest.raises(InvalidOptionsError):
        RULESET.new_game(options, random.Random(1))


@pytest.mark.parametrize("seed", range(3))
def test_a_whole_game_through_the_protocol_only(seed: int) -> None:
    rules = get_ruleset("mayor")
    options = rules.decode_options({"players": 8})
    result = rules.new_game(options, rng_for(seed, 0))
    state = result.state
    pending = list(result.timers)
    bots = [rules.bots["random"](seat, random.Random(seed * 100 + seat)) for seat in range(1, 9)]
    for step in range(5000):
        if rules.is_over(state):
            break
        for bot in bots:
            command = bot.choose(state)
            if command is None:
                continue
            assert command in rules.legal(state, bot.seat)
            outcome = rules.apply(state, command, rng_for(seed, step + 1))
            assert not isinstance(outcome, Rejection)
            state = outcome.state
            pending.extend(outcome.timers)
            break
        else:
            timer = pending.pop(0)
            outcome = rules.apply(state, timer.command, rng_for(seed, step + 1))
            if not isinstance(outcome, Rejection):
                state = outcome.state
                pending.extend(outcome.timers)
        view = rules.view(state, Viewer.player(1))
        json.dumps(view.to_json())
        rules.routing(state)
    assert rules.is_over(state)
    assert rules.view(state, Viewer.spectator()).to_json()["outcome"] is not None


def test_the_simulation_is_deterministic_per_seed() -> None:
    options = MayorOptions(players=9)
    first, second = play_game(options, 5), play_game(options, 5)
    assert first.commands == second.commands and first.state == second.state
    assert play_game(options, 6).commands != first.commands
    rates = win_rates(options, range(10))
    assert rates == win_rates(options, range(10))
    report = json.loads(json.dumps(rates.to_json()))
    assert report["games"] == 10 and sum(report["wins"].values()) == 10
