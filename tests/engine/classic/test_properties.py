"""Properties of whole classic bot games over random founding options (DESIGN §5):
every game ends; replay from the command log is exact; every event fits the message schema;
no seat receives an event or a view holding a secret it may not know; spectators get public
events only; a refused command changes nothing and `validate` agrees with `apply`.

The secrecy model is written from the rules (RULES A3-A13, docs/decisions.md), not from the
view code, so the two check each other."""

from __future__ import annotations

import copy
from collections.abc import Callable
from functools import partial
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.engine.driver import states_along
from vollmond.engine.classic.codes import Ev
from vollmond.engine.classic.commands import (
    Act,
    BreakTie,
    Command,
    Elect,
    Leave,
    NameSuccessor,
    PhaseTimeout,
    Vote,
)
from vollmond.engine.classic.legal import legal_actions
from vollmond.engine.classic.messages import SCHEMA
from vollmond.engine.classic.options import ClassicOptions
from vollmond.engine.classic.properties import pack, wolves_room
from vollmond.engine.classic.replay import MAX_COMMANDS, replay, rng_for, simulate
from vollmond.engine.classic.routing import SPECTATORS, routing
from vollmond.engine.classic.rules import apply, new_game, validate
from vollmond.engine.classic.state import GameState
from vollmond.engine.classic.types import DeckId, Kind, Phase
from vollmond.engine.classic.view import project
from vollmond.engine.core import AudienceKind, Event, Rejection, Viewer


@st.composite
def foundings(draw: st.DrawFn) -> ClassicOptions:
    return ClassicOptions(
        players=draw(st.integers(5, 16)),
        deck=draw(st.sampled_from([DeckId.BASIC, DeckId.CLASSIC, DeckId.FULL])),
        captain=draw(st.booleans()),
    )


seeds = st.integers(0, 1_000_000)

PUBLIC = frozenset(
    {
        Ev.GAME_STARTED,
        Ev.PHASE_STARTED,
        Ev.ELECTION_VOTE,
        Ev.CAPTAIN_ELECTED,
        Ev.MORNING_REPORT,
        Ev.VOTE_CAST,
        Ev.TIE_TO_CAPTAIN,
        Ev.VOTE_RESULT,
        Ev.SUCCESSOR_NAMED,
        Ev.PLAYER_LEFT,
        Ev.GAME_OVER,
    }
)


def _own(state: GameState, event: Event, seat: int) -> bool:
    return event.audience.seats == {seat}


def _holder(kind: Kind) -> Callable[[GameState, Event, int], bool]:
    def rule(state: GameState, event: Event, seat: int) -> bool:
        return event.audience.seats == {seat} and state.player(seat).spec.ability(kind) is not None

    return rule


def _room(state: GameState, event: Event, seat: int) -> bool:
    room = wolves_room(state, living_only=False)
    return seat in room and event.audience.seats <= room


def _lovers(state: GameState, event: Event, seat: int) -> bool:
    lovers = {p.seat for p in state.players if p.lover}
    return seat in lovers and set(event.params["seats"]) == lovers  # type: ignore[arg-type]


def _pact(state: GameState, event: Event, seat: int) -> bool:
    me = state.player(seat)
    # The werewolves living when the pact maker is told (a wolf who left the table before the
    # first night is not named): all that live after the command, and nobody but wolves.
    wolves = set(event.params["wolves"])  # type: ignore[arg-type]
    return me.spec.learns_wolves and pack(state) <= wolves <= pack(state, living_only=False)


SECRET: dict[str, Callable[[GameState, Event, int], bool]] = {
    Ev.ROLE_ASSIGNED: _own,
    Ev.ROLE_TAKEN: _own,
    Ev.THIEF_CARDS: _holder(Kind.TAKE_CARD),
    Ev.LOVERS_CHOSEN: _holder(Kind.LINK),
    Ev.LOVERS_REVEALED: _lovers,
    Ev.PACK_REVEALED: _room,
    Ev.WOLF_VOTE_CAST: _room,
    Ev.WOLVES_CHOSE: _room,
    Ev.WOLVES_TOLD: _pact,
    Ev.SEEK_RESULT: _holder(Kind.SEEK),
    Ev.CHECK_RESULT: _holder(Kind.CHECK),
    Ev.WITCH_VICTIM: _holder(Kind.HEAL),
    Ev.SANDMAN_RESULT: _holder(Kind.SENSE),
    Ev.ACTION_CONFIRMED: _own,
}
"""Who may receive each private code; `roles_dealt` is absent on purpose: nobody may."""


def check_events(state: GameState, events: tuple[Event, ...]) -> None:
    for event in events:
        spec = SCHEMA.events.get(event.code)
        assert spec is not None and spec.admits(event.params), event
        if event.code in PUBLIC:
            assert event.audience.kind is AudienceKind.PUBLIC, event
            continue
        if event.code == Ev.ROLES_DEALT:
            assert event.audience.kind is AudienceKind.SYSTEM, event
            continue
        assert event.audience.kind is AudienceKind.SEATS, event
        for seat in event.audience.seats:
            assert SECRET[event.code](state, event, seat), (seat, event)
        assert not event.audience.includes(Viewer.spectator())


def may_know_role(state: GameState, viewer: int, seat: int) -> bool:
    p = state.player(seat)
    return viewer == seat or p.revealed or state.phase is Phase.OVER


def check_views(state: GameState) -> None:
    for seat in range(1, len(state.players) + 1):
        view = project(state, Viewer.player(seat))
        for s in view.seats:
            if s.role is not None:
                assert may_know_role(state, seat, s.seat), (seat, s)
                assert s.role is state.player(s.seat).role
        me = view.me
        assert me is not None
        mine = state.player(seat)
        if me.wolves_room:
            assert mine.spec.wakes_with_wolves
        if me.wolves:
            assert mine.spec.learns_wolves
        if me.lovers:
            assert mine.lover or mine.spec.ability(Kind.LINK) is not None
        if me.cards:
            assert mine.spec.ability(Kind.TAKE_CARD) is not None
        if me.victim is not None:
            assert mine.spec.wakes_with_wolves or mine.spec.ability(Kind.HEAL) is not None
        view.to_json()
    spectator = project(state, Viewer.spectator())
    assert spectator.me is None
    assert all(
        s.role is None or state.player(s.seat).revealed or state.phase is Phase.OVER
        for s in spectator.seats
    )


def check_routing(state: GameState) -> None:
    table = routing(state)
    room = wolves_room(state)
    for listener, routes in table.items():
        sources = {r.source for r in routes}
        if state.phase is Phase.NIGHT:
            assert listener != SPECTATORS or not sources
            if sources:
                assert listener in room and sources <= room
        else:
            assert all(state.player(s).alive for s in sources)


@pytest.mark.rule("A1", "A6", "A9")
@settings(max_examples=25, deadline=None)
@given(options=foundings(), seed=seeds)
def test_every_game_ends_replays_exactly_and_keeps_its_secrets(
    options: ClassicOptions, seed: int
) -> None:
    game = simulate(options, seed)
    assert game.state.phase is Phase.OVER and game.state.outcome is not None
    assert len(game.commands) < MAX_COMMANDS
    again = replay(options, seed, game.commands)
    assert again.state == game.state and again.events == game.events
    state = new_game(options, rng_for(seed, 0)).state
    for index, command in enumerate(game.commands, start=1):
        outcome = apply(state, command, rng_for(seed, index))
        assert not isinstance(outcome, Rejection)
        state = outcome.state
        check_events(state, outcome.events)
        if index % 3 == 0 or state.phase is Phase.OVER:
            check_views(state)
            check_routing(state)


def commands_against(state: GameState) -> st.SearchStrategy[Command]:
    n = len(state.players)
    seats = st.one_of(st.integers(1, n), st.sampled_from((0, -1, 99)))
    targets = st.one_of(st.none(), seats)
    return st.one_of(
        st.builds(Act, seats, st.sampled_from(list(Kind)), targets, targets),
        st.builds(Elect, seats, seats),
        st.builds(Vote, seats, targets),
        st.builds(BreakTie, seats, seats),
        st.builds(NameSuccessor, seats, seats),
        st.builds(Leave, seats),
        st.builds(PhaseTimeout, st.integers(-1, state.phase_seq + 2)),
    )


@pytest.mark.rule("A6", "A7", "A9")
@settings(max_examples=25, deadline=None)
@given(options=foundings(), seed=seeds, data=st.data())
def test_refused_commands_change_nothing_and_legal_commands_are_accepted(
    options: ClassicOptions, seed: int, data: st.DataObject
) -> None:
    game = simulate(options, seed)
    opened = new_game(options, rng_for(seed, 0))
    states = states_along(opened, apply, game.commands, partial(rng_for, seed))
    for probe in range(3):
        state = states[data.draw(st.integers(0, len(states) - 1), label="state")]
        seat = data.draw(st.integers(1, len(state.players)), label="seat")
        for offered in legal_actions(state, seat):
            assert validate(state, offered) is None, offered
        for attempt in range(10):
            command = data.draw(commands_against(state), label="command")
            pristine = copy.deepcopy(state)
            expected = validate(state, command)
            got: Any = apply(state, command, rng_for(seed, 10_000 + 100 * probe + attempt))
            assert state == pristine
            if isinstance(got, Rejection):
                assert expected == got
                assert SCHEMA.rejections[got.code].admits(got.params)
            else:
                assert expected is None
                check_events(got.state, got.events)
