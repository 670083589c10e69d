"""Each rule set's commands draw from their own named streams (kit/rng.py `DerivedRng`): the
key is "name:seed:index", written only when the rules first draw, and the draws are exactly
those of `random.Random(key)`, so stored games replay with the lots they were played with."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from vollmond.engine.classic.replay import rng_for as classic_rng
from vollmond.engine.kit.rng import DerivedRng
from vollmond.engine.mayor.replay import rng_for as mayor_rng
from vollmond.engine.standard.replay import rng_for as standard_rng


@pytest.mark.parametrize(
    ("rng_for", "key"),
    [
        (standard_rng, "vollmond:7:3"),
        (classic_rng, "classic:7:3"),
        (mayor_rng, "vollmond:mayor:7:3"),
    ],
)
def test_a_command_draws_from_its_named_stream(
    rng_for: Callable[[int, int], DerivedRng], key: str
) -> None:
    derived, library = rng_for(7, 3), random.Random(key)
    assert derived.key == key
    drawn, expected = list(range(40)), list(range(40))
    derived.shuffle(drawn)
    library.shuffle(expected)
    assert drawn == expected
    assert derived.choice(range(100)) == library.choice(range(100))
    assert derived.sample(range(100), 5) == library.sample(range(100), 5)


def test_streams_of_other_commands_and_games_differ() -> None:
    keys = {standard_rng(seed, index).key for seed in (1, 2) for index in (0, 1, 12)}
    assert len(keys) == 6
