"""The custom-deck fairness check is the rule set's (`ChecksDecks`, issue 12/14): the web asks
the rule set, never the standard rules by name. A rule set without the part has no check."""

from __future__ import annotations

import pytest

from vollmond.engine.ruleset import ChecksDecks, get_ruleset
from vollmond.engine.standard import GameOptions
from vollmond.engine.standard.types import DeckId, RoleId


def custom(players: int, roles: list[tuple[str, int]]) -> GameOptions:
    cards = tuple((RoleId(role), count) for role, count in roles)
    return GameOptions(players, deck=DeckId.CUSTOM, custom_roles=cards)


@pytest.mark.parametrize(
    ("options", "code"),
    [
        (custom(7, [("seer", 1), ("filler", 6)]), "deck_no_evil"),
        (custom(7, [("evil", 4), ("filler", 3)]), "deck_evil_majority"),
        (custom(7, [("evil", 2), ("twin", 1), ("filler", 4)]), "deck_twins_unpaired"),
        (custom(7, [("evil", 3), ("twin", 2), ("filler", 2)]), None),
        (GameOptions(7), None),
    ],
)
def test_the_standard_rules_judge_a_deck_through_the_protocol(
    options: GameOptions, code: str | None
) -> None:
    rules = get_ruleset("standard")
    assert isinstance(rules, ChecksDecks)
    assert rules.deck_problem(options) == code


@pytest.mark.parametrize("ruleset_id", ["classic", "mayor"])
def test_rule_sets_without_hand_mixed_decks_have_no_check(ruleset_id: str) -> None:
    assert not isinstance(get_ruleset(ruleset_id), ChecksDecks)
