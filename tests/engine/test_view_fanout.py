"""A fan-out builds every seat's view of one state from a part shared by all of them (public
houses, the day, their JSON, the menus' common targets) and each seat's own part. Whatever is
shared, every view must be exactly the one worked out for that viewer alone, with nothing
of anyone else's secrets: checked against a straightforward recomputation over every state of
whole bot games, every seat and a spectator, in the order a fan-out asks."""

from __future__ import annotations

import dataclasses
from functools import partial
from typing import Any

import pytest

from tests.engine.driver import states_along
from vollmond.engine.core import Viewer, ViewerKind
from vollmond.engine.standard import GameOptions
from vollmond.engine.standard.legal import command_groups
from vollmond.engine.standard.menus import describe
from vollmond.engine.standard.options import CallSettings
from vollmond.engine.standard.properties import bonds_known, night_room, spec_of
from vollmond.engine.standard.replay import rng_for
from vollmond.engine.standard.rules import apply, new_game, validate
from vollmond.engine.standard.sim import play_game
from vollmond.engine.standard.state import GameState
from vollmond.engine.standard.types import Phase, Trait
from vollmond.engine.standard.view import project, view

GAMES = [
    (GameOptions(players=12), 0),
    (GameOptions(players=12, lovers=True, calls=CallSettings(by_day=True)), 1),
    (GameOptions(players=64), 2),
]


def role_seen(state: GameState, viewer: Viewer, seat: int) -> bool:
    """Whether the viewer may see this seat's role (RULES: revealed, the end, oneself,
    one's team once bonds are known, one's twin)."""
    target = state.player(seat)
    if target.revealed or state.phase is Phase.OVER:
        return True
    if viewer.kind is not ViewerKind.PLAYER or viewer.seat is None:
        return False
    me = state.player(viewer.seat)
    if seat == me.seat:
        return True
    if not bonds_known(state):
        return False
    if spec_of(me).night_room and seat in night_room(state, living_only=False):
        return True
    return Trait.BONDED_PAIR in spec_of(me).traits and target.role is me.role


def lover_seen(state: GameState, viewer: Viewer, seat: int) -> bool:
    if not state.player(seat).lover:
        return False
    if state.phase is Phase.OVER:
        return True
    return viewer.seat is not None and state.player(viewer.seat).lover


def recomputed(state: GameState, viewer: Viewer) -> dict[str, Any]:
    """The view worked out for this viewer alone: houses seat by seat, the menu by asking
    every group's filter of every candidate, the rest through the plain `to_json` of a
    view that shares nothing."""
    alone = dataclasses.replace(project(state, viewer), shared=None, own_seats=None)
    data: dict[str, Any] = alone.to_json()
    day = alone.day
    data["day"] = None if day is None else dataclasses.replace(day).to_json()
    data["seats"] = [
        {
            "seat": p.seat,
            "alive": p.alive,
            "role": p.role.value if role_seen(state, viewer, p.seat) else None,
            "lover": lover_seen(state, viewer, p.seat),
            "present": seat_json["present"],
        }
        for p, seat_json in zip(state.players, data["seats"], strict=True)
    ]
    me = data["me"]
    if isinstance(me, dict) and viewer.seat is not None:
        me["legal"] = [
            describe(cmd)
            for group in command_groups(state, viewer.seat)
            for cmd in group.candidates()
            if validate(state, cmd) is None
        ]
    return data


@pytest.mark.parametrize(("options", "seed"), GAMES)
def test_every_view_of_a_fan_out_is_the_viewers_own(options: GameOptions, seed: int) -> None:
    game = play_game(options, seed)
    opened = new_game(options, rng_for(seed, 0))
    states = states_along(opened, apply, game.commands, partial(rng_for, seed))
    if options.players > 20:
        states = states[:: len(states) // 150]  # every seat of 150 states: still ~10⁴ views
    viewers = [Viewer.player(seat) for seat in range(1, options.players + 1)]
    viewers.append(Viewer.spectator())
    kept_secret = 0
    for state in states:
        for viewer in viewers:
            seen: dict[str, Any] = view(state, viewer)
            assert seen == recomputed(state, viewer), (viewer, state.phase, state.phase_seq)
            kept_secret += sum(1 for s in seen["seats"] if s["role"] is None)
            me = seen["me"]
            if isinstance(me, dict):
                actors = {cmd.get("actor") for cmd in me["legal"]}
                assert actors <= {viewer.seat}, "a menu offers another seat's command"
    assert kept_secret > 0


def test_shared_rows_are_not_changed_by_one_viewers_json() -> None:
    """The JSON rows shared by every view (the houses) are copied where a viewer's own
    differ: a seat's own role in its view never shows in a stranger's, asked right after."""
    state = new_game(GameOptions(players=12), rng_for(0, 0)).state
    stranger = next(seat for seat in range(2, 13) if not role_seen(state, Viewer.player(seat), 1))
    own: dict[str, Any] = view(state, Viewer.player(1))
    theirs: dict[str, Any] = view(state, Viewer.player(stranger))
    spectator: dict[str, Any] = view(state, Viewer.spectator())
    assert own["seats"][0]["role"] is not None
    assert theirs["seats"][0]["role"] is None
    assert spectator["seats"][0]["role"] is None
