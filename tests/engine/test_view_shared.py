"""The part of a view that is the same for every viewer is built once per state and kept by
the state's identity (view.py `_shared`). What one viewer may know must never reach another
through it: every viewer's view is the same whether the cache was filled by a secret holder's
view first, by a spectator's, or not at all."""

from __future__ import annotations

from functools import partial
from typing import Any

from tests.engine.driver import states_along
from vollmond.engine.core import Viewer
from vollmond.engine.standard import GameOptions
from vollmond.engine.standard import view as view_module
from vollmond.engine.standard.replay import rng_for
from vollmond.engine.standard.rules import apply, new_game
from vollmond.engine.standard.sim import play_game
from vollmond.engine.standard.state import GameState
from vollmond.engine.standard.types import Phase


def _views(state: GameState, viewers: list[Viewer], *, fresh: bool) -> dict[Viewer, Any]:
    out: dict[Viewer, Any] = {}
    for viewer in viewers:
        if fresh:
            view_module._shared_parts.clear()
        out[viewer] = view_module.project(state, viewer).to_json()
    return out


def test_views_do_not_depend_on_who_filled_the_shared_part() -> None:
    options = GameOptions(players=10)
    game = play_game(options, 11)
    opened = new_game(options, rng_for(11, 0))
    states = states_along(opened, apply, game.commands, partial(rng_for, 11))
    seats = [Viewer.player(s) for s in range(1, 11)]
    for state in states[::3]:
        alone = _views(state, [*seats, Viewer.spectator()], fresh=True)
        view_module._shared_parts.clear()
        forwards = _views(state, [*seats, Viewer.spectator()], fresh=False)
        backwards = _views(state, [Viewer.spectator(), *reversed(seats)], fresh=False)
        assert alone == forwards == backwards
        if state.phase is not Phase.OVER:
            spectator = alone[Viewer.spectator()]
            assert isinstance(spectator, dict)
            for seat in spectator["seats"]:
                player = state.player(seat["seat"])
                assert seat["role"] is None or player.revealed
                assert not seat["lover"]
