"""The room a voice page names for a listener (`place_of`): a rule set's own names where it
has them (standard), else read from the listener's routes (classic, mayor). Either way it may
say nothing the listener's routes do not: a night room only to those who hear one."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from vollmond.engine.classic.options import ClassicOptions
from vollmond.engine.classic.properties import wolves_room
from vollmond.engine.classic.replay import simulate as classic_game
from vollmond.engine.core import Rejection
from vollmond.engine.kit.routing import Route, RoutingTable, place_by_routes
from vollmond.engine.ruleset import (
    AnyRuleSet,
    PlacesListeners,
    RoomKind,
    WhereAmI,
    get_ruleset,
    place_of,
)
from vollmond.engine.standard import GameOptions
from vollmond.engine.standard.properties import bonds_known, night_room
from vollmond.engine.standard.sim import play_game


def states(rules: AnyRuleSet, options: Any, seed: int, commands: list[Any]) -> Iterator[Any]:
    state = rules.new_game(options, rules.rng_for(seed, 0)).state
    yield state
    for index, command in enumerate(commands, start=1):
        outcome = rules.apply(state, command, rules.rng_for(seed, index))
        assert not isinstance(outcome, Rejection)
        state = outcome.state
        yield state


def check_places(rules: AnyRuleSet, state: Any, night_room: frozenset[int]) -> set[RoomKind]:
    """Each listener's place agrees with what they hear, and only the members of the night
    room (`night_room`, by the rules' own account) are told of it; returns the kinds seen."""
    table = rules.routing(state)
    night = rules.phase_name(state).startswith("night")
    seen: set[RoomKind] = set()
    for listener, routes in table.items():
        place = place_of(rules, state, listener)
        seen.add(place.kind)
        hears = {r.source for r in routes if r.gain > 0 and r.source != listener}
        if place.kind is RoomKind.NIGHT_ROOM:
            assert night and listener in night_room, (listener, routes)
        if place.kind in (RoomKind.CALL, RoomKind.HALB):
            assert place.other in hears, (listener, place, routes)
        if night and listener not in night_room and place.kind is not RoomKind.CALL:
            assert place.kind is RoomKind.SILENT, (listener, place)
    return seen


@pytest.mark.rule("N1")
@pytest.mark.parametrize("seed", range(6))
def test_standard_places_name_only_rooms_the_listener_hears(seed: int) -> None:
    rules = get_ruleset("standard")
    assert isinstance(rules, PlacesListeners)
    options = GameOptions(players=8)
    game = play_game(options, seed)
    seen: set[RoomKind] = set()
    for state in states(rules, options, seed, game.commands):
        members = night_room(state) if bonds_known(state) else frozenset()
        seen |= check_places(rules, state, members)
    assert {RoomKind.MARKET, RoomKind.NIGHT_ROOM, RoomKind.SILENT} <= seen


@pytest.mark.rule("A1")
@pytest.mark.parametrize("seed", range(6))
def test_classic_places_are_read_from_the_routes(seed: int) -> None:
    rules = get_ruleset("classic")
    assert not isinstance(rules, PlacesListeners)
    options = ClassicOptions(players=9)
    game = classic_game(options, seed)
    seen: set[RoomKind] = set()
    for state in states(rules, options, seed, list(game.commands)):
        seen |= check_places(rules, state, wolves_room(state))
    assert {RoomKind.MARKET, RoomKind.NIGHT_ROOM, RoomKind.SILENT} <= seen


def test_routes_alone_place_a_listener() -> None:
    table: RoutingTable = {
        1: (Route(2, 1.0),),
        2: (Route(1, 1.0),),
        3: (),
        4: (Route(4, 1.0), Route(1, 0.0)),
    }
    assert place_by_routes(table, 1, night=True) == WhereAmI(RoomKind.NIGHT_ROOM)
    assert place_by_routes(table, 1, night=False) == WhereAmI(RoomKind.MARKET)
    assert place_by_routes(table, 3, night=False) == WhereAmI(RoomKind.SILENT)
    assert place_by_routes(table, 4, night=True) == WhereAmI(RoomKind.SILENT)  # self, muted
    assert place_by_routes(table, 9, night=False) == WhereAmI(RoomKind.SILENT)  # unknown
