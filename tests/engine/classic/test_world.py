"""The classic rule set's world Düsterwald (seed 003) names every card and deck."""

from __future__ import annotations

import pytest

from vollmond.engine.classic.types import DeckId, Role
from vollmond.worlds import LANGUAGES, get_world, world_ids


def test_duesterwald_is_the_classic_world_and_not_offered_to_the_standard_rules() -> None:
    assert world_ids("classic") == ("duesterwald",)
    assert "duesterwald" not in world_ids()
    world = get_world("duesterwald")
    assert world.ruleset == "classic"
    assert world.names_in("de").place == "Schwarzseel"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_card_and_deck_has_a_name(lang: str) -> None:
    names = get_world("duesterwald").names_in(lang)
    assert {r.value for r in Role} | {"lovers", "captain"} == set(names.roles)
    assert {d.value for d in DeckId} == set(names.decks)
