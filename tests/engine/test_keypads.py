"""Every action of the standard, classic and mayor rules has keys (`HasKeypad`), in every
state a bot game passes through: each legal player command (leaving and chat aside, which are
not moves) is offered with its key entries, one entry sequence gives at most one command per
offer, and an entry of one command is never the start of another's (the phone could not tell
them apart). Driven through the `RuleSet` protocol only, with the rule set's own bots."""

from __future__ import annotations

import random
from typing import Any

import pytest

from vollmond.engine.ruleset import HasKeypad, get_ruleset

NOT_MOVES = frozenset({"Leave", "Say"})


def states(ruleset_id: str, options: Any, seed: int, limit: int = 400) -> list[Any]:
    """The states of one game: the rule set's random bot in every seat, a pending timer fired
    when no bot acts."""
    rules = get_ruleset(ruleset_id)
    rng = random.Random(seed)
    result = rules.new_game(options, rules.rng_for(seed, 0))
    state, timers = result.state, list(result.timers)
    bots = [rules.bots["random"](seat, rng) for seat in range(1, options.players + 1)]
    seen = [state]
    for index in range(1, limit):
        if rules.is_over(state):
            break
        command = next((c for b in bots if (c := b.choose(state)) is not None), None)
        if command is None:
            live = [t for t in timers if rules.validate(state, t.command) is None]
            assert live, "no bot acts and no timer is pending"
            command = live[0].command
        outcome = rules.apply(state, command, rules.rng_for(seed, index))
        assert not hasattr(outcome, "code"), outcome
        state, timers = outcome.state, [*timers, *outcome.timers]
        seen.append(state)
    return seen


def check_keypad(ruleset_id: str, options: Any, seed: int) -> int:
    rules = get_ruleset(ruleset_id)
    assert isinstance(rules, HasKeypad)
    offered = 0
    for state in states(ruleset_id, options, seed):
        for seat in range(1, options.players + 1):
            legal = [c for c in rules.legal(state, seat) if type(c).__name__ not in NOT_MOVES]
            actions = list(rules.keypad(state, seat))
            assert [a.command for a in actions] == legal
            entries = [a.presses for a in actions]
            for i, a in enumerate(entries):
                for j, b in enumerate(entries):
                    if i != j and len(a) < len(b):
                        assert b[: len(a)] != a, (a, b)
            by_offer = {(a.offer, a.presses) for a in actions}
            assert len(by_offer) == len(actions), "one entry, two commands of one offer"
            offered += len(actions)
    return offered


@pytest.mark.parametrize("seed", range(4))
def test_every_classic_action_has_keys(seed: int) -> None:
    from vollmond.engine.classic.options import ClassicOptions  # noqa: PLC0415
    from vollmond.engine.classic.types import DeckId  # noqa: PLC0415

    for players, deck in ((5, DeckId.CLASSIC), (10, DeckId.FULL)):
        options = ClassicOptions(players=players, deck=deck)
        assert check_keypad("classic", options, seed) > 0


@pytest.mark.parametrize("seed", range(4))
def test_every_mayor_action_has_keys(seed: int) -> None:
    from vollmond.engine.mayor.options import MayorOptions  # noqa: PLC0415

    assert check_keypad("mayor", MayorOptions(players=7), seed) > 0


@pytest.mark.parametrize("seed", range(4))
def test_every_standard_action_has_keys(seed: int) -> None:
    from vollmond.engine.standard import GameOptions  # noqa: PLC0415

    for players in (6, 12):
        assert check_keypad("standard", GameOptions(players=players), seed) > 0


def test_the_standard_keys_are_the_call_lines_keys() -> None:
    """The standard rules are played with the call line (`HasCalls`); the others are not."""
    from vollmond.engine.ruleset import HasCalls  # noqa: PLC0415

    assert isinstance(get_ruleset("standard"), HasCalls)
    assert not isinstance(get_ruleset("classic"), HasCalls)
    assert not isinstance(get_ruleset("mayor"), HasCalls)
