"""`RuleSet.views_follow_events`: when a rule set says a change shows only to the viewers its
events reach, the runtime does not rebuild the others' views (issue 16). A wrong "yes" would
leave a player looking at a stale view, so every rule set's answer is held to its views over
whole bot games: every command, every seat and a spectator."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from vollmond.engine.classic.options import ClassicOptions
from vollmond.engine.classic.replay import simulate as classic_game
from vollmond.engine.core import Rejection, Viewer
from vollmond.engine.mayor.options import MayorOptions
from vollmond.engine.mayor.sim import play_game as mayor_game
from vollmond.engine.ruleset import AnyRuleSet, get_ruleset
from vollmond.engine.standard import GameOptions
from vollmond.engine.standard.options import CallSettings
from vollmond.engine.standard.sim import play_game as standard_game


@dataclass
class Tally:
    quiet_steps: int = 0  # a viewer no event reached, in a change the rule set called quiet
    stale: int = 0  # ... whose view changed all the same


def tally(ruleset: AnyRuleSet, options: Any, seed: int, commands: Sequence[Any]) -> Tally:
    state = ruleset.new_game(options, ruleset.rng_for(seed, 0)).state
    viewers = [Viewer.player(s) for s in range(1, options.players + 1)] + [Viewer.spectator()]
    shown = {v: ruleset.view(state, v).to_json() for v in viewers}
    out = Tally()
    for index, command in enumerate(commands, start=1):
        result = ruleset.apply(state, command, ruleset.rng_for(seed, index))
        assert not isinstance(result, Rejection), (command, result)
        before, state = state, result.state
        quiet = ruleset.phase_seq(before) == ruleset.phase_seq(state) and (
            ruleset.views_follow_events(before, state)
        )
        for viewer in viewers:
            now = ruleset.view(state, viewer).to_json()
            if quiet and not any(e.audience.includes(viewer) for e in result.events):
                out.quiet_steps += 1
                out.stale += now != shown[viewer]
            shown[viewer] = now
    return out


STANDARD = [
    GameOptions(players=12),
    GameOptions(players=12, lovers=True, calls=CallSettings(by_day=True)),
    GameOptions(players=20, calls=CallSettings(by_day=True)),
]


@pytest.mark.parametrize("seed", range(9))
def test_standard_views_follow_events_in_bot_games(seed: int) -> None:
    options = STANDARD[seed % len(STANDARD)]
    played = standard_game(
        options, seed, smart_seats=frozenset({1, 2}) if seed % 2 else frozenset()
    )
    result = tally(get_ruleset("standard"), options, seed, played.commands)
    assert result.stale == 0
    assert result.quiet_steps > 0  # night actions reach few seats: the skip is used


@pytest.mark.parametrize("seed", range(4))
def test_mayor_views_follow_events_in_bot_games(seed: int) -> None:
    options = MayorOptions(players=8 + seed)
    result = tally(get_ruleset("mayor"), options, seed, mayor_game(options, seed).commands)
    assert result.stale == 0
    assert result.quiet_steps > 0


def test_classic_never_claims_quiet_changes() -> None:
    """Classic shows a wolf's vote to the other wolves without an event (its view's
    `me.wolf_votes`), so it answers no and every view is rebuilt."""
    options = ClassicOptions(players=10)
    result = tally(get_ruleset("classic"), options, 3, classic_game(options, 3).commands)
    assert result.quiet_steps == 0


def test_an_answered_call_by_day_is_not_quiet() -> None:
    """The one public thing without a public event in the standard rules: by day everyone sees
    who is away from the market in an answered call. A rule set that forgot it fails here."""
    options = GameOptions(players=12, calls=CallSettings(by_day=True))
    ruleset = get_ruleset("standard")
    spectator = Viewer.spectator()
    for seed in range(30):
        state = ruleset.new_game(options, ruleset.rng_for(seed, 0)).state
        for index, command in enumerate(standard_game(options, seed).commands, start=1):
            result = ruleset.apply(state, command, ruleset.rng_for(seed, index))
            assert not isinstance(result, Rejection)
            before, state = state, result.state
            seats_before = ruleset.view(before, spectator).to_json()["seats"]
            if ruleset.view(state, spectator).to_json()["seats"] != seats_before and not any(
                e.audience.includes(spectator) for e in result.events
            ):
                assert not ruleset.views_follow_events(before, state)
                return
    pytest.fail("no bot game sent a seat away from the market without a public event")
