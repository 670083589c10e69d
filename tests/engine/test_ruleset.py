"""The RuleSet seam: the registry, and the standard rule set played through the protocol only."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from typing import Any

import pytest

from tests.scenario import Scenario, next_night
from vollmond.engine.core import Event, Rejection, Viewer
from vollmond.engine.ruleset import (
    AnyRuleSet,
    OptionsDecodeError,
    RuleSet,
    UnknownRuleSetError,
    get_ruleset,
    ruleset_ids,
)
from vollmond.engine.standard import CallSettings, Command, DeckId, GameOptions, GameState
from vollmond.engine.standard.commands import TimerCommand
from vollmond.engine.standard.routing import Route
from vollmond.engine.standard.ruleset import RULESET, StandardRuleSet
from vollmond.engine.standard.view import StandardView, view

# mypy's structural check: the standard rule set satisfies the protocol with its own types.
_TYPED: RuleSet[GameState, Command, TimerCommand, GameOptions, StandardView, Route] = (
    StandardRuleSet()
)


def test_the_registry_lists_and_loads_the_standard_rule_set() -> None:
    assert "standard" in ruleset_ids()
    assert get_ruleset("standard") is RULESET
    assert RULESET.id == "standard"


def test_an_unknown_rule_set_is_a_clear_error() -> None:
    with pytest.raises(UnknownRuleSetError):
        get_ruleset("no-such-rules")


@pytest.mark.parametrize(
    "options",
    [
        GameOptions(players=8),
        GameOptions(
            players=13,
            deck=DeckId.CUSTOM,
            custom_roles=(),
            lovers=True,
            unanimous=True,
            instant_kill=True,
            calls=CallSettings(by_day=True, per_night=1),
        ),
    ],
)
def test_the_options_codec_round_trips(options: GameOptions) -> None:
    encoded = RULESET.encode_options(options)
    assert RULESET.decode_options(json.loads(json.dumps(encoded))) == options


@pytest.mark.parametrize(
    "junk",
    [{}, {"players": "many"}, {"players": 8, "deck": "nope"}, {"players": 8, "calls": 3}],
)
def test_junk_options_raise_one_specific_error(junk: Mapping[str, Any]) -> None:
    with pytest.raises(OptionsDecodeError):
        RULESET.decode_options(junk)


def _fits_schema(rules: AnyRuleSet, event: Event) -> bool:
    spec = rules.messages.events.get(event.code)
    return spec is not None and spec.admits(event.params)


@pytest.mark.parametrize("seed", range(4))
def test_a_whole_game_through_the_protocol_only(seed: int) -> None:
    """Found, play with the rule set's own bots, fire timers, view, route: no standard names."""
    rules = get_ruleset("standard")
    options = rules.decode_options({"players": 9, "deck": "auto", "instant_kill": True})
    result = rules.new_game(options, random.Random(seed))
    state = result.state
    events = list(result.events)
    timers = list(result.timers)
    bot_rng = random.Random(f"bots:{seed}")
    bots = [rules.bots["random"](seat, bot_rng) for seat in range(1, 10)]
    game_rng = random.Random(seed + 1000)
    refused_codes: set[str] = set()
    for _ in range(5000):
        if rules.is_over(state):
            break
        acted = False
        for bot in bots:
            command = bot.choose(state)
            if command is None:
                continue
            assert command in rules.legal(state, bot.seat)
            outcome = rules.apply(state, command, game_rng)
            assert not isinstance(outcome, Rejection)
            state, acted = outcome.state, True
            events.extend(outcome.events)
            timers.extend(outcome.timers)
            # Another seat trying the same command is refused with a code the schema knows.
            other = (bot.seat % 9) + 1
            tried = rules.apply(
                state, type(command)(**{**vars_of(command), "actor": other}), game_rng
            )
            if isinstance(tried, Rejection):
                refused_codes.add(tried.code)
                assert rules.messages.rejections[tried.code].admits(tried.params), tried
            else:
                state = tried.state
                events.extend(tried.events)
                timers.extend(tried.timers)
        if not acted:
            while timers:
                timer = timers.pop(0)
                outcome = rules.apply(state, timer.command, game_rng)
                if not isinstance(outcome, Rejection):
                    state = outcome.state
                    events.extend(outcome.events)
                    timers.extend(outcome.timers)
                    break
        for viewer in (Viewer.spectator(), Viewer.player(1 + seed)):
            projected = rules.view(state, viewer)
            assert projected.to_json() == view(state, viewer)
            json.dumps(projected.to_json())
        assert set(rules.routing(state)) >= set(range(1, 10))
    assert rules.is_over(state)
    assert events[-1].code == "game_over"
    assert all(_fits_schema(rules, e) for e in events), [
        e for e in events if not _fits_schema(rules, e)
    ]
    assert refused_codes


def vars_of(command: object) -> dict[str, Any]:
    return {name: getattr(command, name) for name in getattr(command, "__slots__", ())}


def test_the_typed_view_reads_without_string_keys() -> None:
    result = RULESET.new_game(GameOptions(players=8), random.Random(3))
    seen = RULESET.view(result.state, Viewer.player(1))
    assert seen.me is not None and seen.me.seat == 1
    assert seen.me.role is result.state.player(1).role
    assert [s.seat for s in seen.seats] == list(range(1, 9))
    assert RULESET.view(result.state, Viewer.spectator()).me is None


@pytest.mark.rule("S2", "S3", "S5", "S16")
def test_the_typed_role_state_shows_as_the_protocols_memory() -> None:
    """The role state is typed inside; the view still sends `memory` as documented."""
    g = Scenario("evil evil witch doctor hunter princess filler filler", stalemate_rounds=9)
    assert g.view(3)["me"]["memory"] == {"heal": 1, "poison": 1}
    assert g.view(4)["me"]["memory"] == {}
    assert g.view(5)["me"]["memory"] == {"bullets": 1}
    g.run("protect 4 -> 6; evil 1,2 -> 7; heal 3 -> 7; timeout").to_day()
    assert g.view(3)["me"]["memory"] == {"heal": 0, "poison": 1}
    assert g.view(4)["me"]["memory"] == {"last_protect": 6}
    g.run("nominate 1 -> 6; timeout; vote 1,2,3,4,5,6,7,8 -> 6")
    assert g.view(6)["me"]["memory"] == {"spared": 1}
    next_night(g)
    assert g.view(4)["me"]["memory"] == {"last_protect": 0}
