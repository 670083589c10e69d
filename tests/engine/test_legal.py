"""Legal actions ask the common questions once per group and filter candidates cheaply
(legal.py); the filter must say exactly what `validate` says, for every candidate of every
group, in every state of real games — otherwise a menu would offer something the rules refuse,
or hide something they allow, and bots would play differently from before."""

from __future__ import annotations

from functools import partial

import pytest

from tests.engine.driver import states_along
from vollmond.engine.standard import DeckId, GameOptions
from vollmond.engine.standard.legal import command_groups
from vollmond.engine.standard.replay import rng_for
from vollmond.engine.standard.rules import apply, new_game, validate
from vollmond.engine.standard.sim import play_game

GAMES = [
    (GameOptions(players=8, world="werwolf"), 1),
    (GameOptions(players=7, world="vampir", deck=DeckId.STARTER), 2),
    (GameOptions(players=13, world="mafia", deck=DeckId.TRIBUNAL, instant_kill=True), 3),
    (GameOptions(players=12), 4),
    (GameOptions(players=10, deck=DeckId.CAULDRON), 6),
    (GameOptions(players=11, deck=DeckId.MAY_DANCE), 7),
    (GameOptions(players=16, deck=DeckId.FULL_MOON), 5),
]


@pytest.mark.parametrize(("options", "seed"), GAMES)
def test_group_filter_agrees_with_validate_on_every_candidate(
    options: GameOptions, seed: int
) -> None:
    game = play_game(options, seed)
    opened = new_game(options, rng_for(seed, 0))
    states = states_along(opened, apply, game.commands, partial(rng_for, seed))
    checked = offered = 0
    for state in states:
        for seat in range(1, options.players + 1):
            for group in command_groups(state, seat):
                for command in group.candidates():
                    allowed = group.allowed(command)
                    assert allowed == (validate(state, command) is None), (command, state.phase)
                    checked += 1
                    offered += allowed
    assert offered > 0 and checked > offered  # both answers occur
