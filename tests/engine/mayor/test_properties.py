"""Properties of whole mayor games (DESIGN §5), over random founding options and bots.

For every game hypothesis founds (4 to 16 players, automatic or chosen number of Nazis,
lovers on or off, 1-3 quiet rounds to a draw, bots of random temperament):

- it ends within a bound of commands, and the bots only ever gave legal commands;
- replaying the command log reproduces the final state (==) and every event;
- every event fits the rule set's message schema;
- after every command no view and no received event holds a secret its viewer may not know,
  and no living player hears an out player or a room they are not in. The secrecy model
  here is written from the rules (RULES.md B, docs/decisions.md), not from `view.py`.

A second property throws random, mostly illegal commands at states reached in such games: a
refused command leaves the state untouched and `validate` agrees with `apply`.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from vollmond.engine.core import AudienceKind, Event, Rejection, Viewer
from vollmond.engine.mayor.bots import MayorBot, Temperament
from vollmond.engine.mayor.codes import Ev
from vollmond.engine.mayor.commands import (
    Accuse,
    ChooseVictim,
    Command,
    FloorTimeout,
    Leave,
    PhaseTimeout,
    Say,
    Stand,
    Vote,
    YieldFloor,
)
from vollmond.engine.mayor.legal import legal_commands
from vollmond.engine.mayor.messages import SCHEMA
from vollmond.engine.mayor.options import MayorOptions
from vollmond.engine.mayor.replay import replay, rng_for
from vollmond.engine.mayor.routing import SPECTATORS, routing
from vollmond.engine.mayor.rules import apply, new_game, validate
from vollmond.engine.mayor.sim import MAX_PASSES_PER_STAGE, PlayedGame, play_game
from vollmond.engine.mayor.state import MayorState
from vollmond.engine.mayor.types import Stage
from vollmond.engine.mayor.view import project


@st.composite
def foundings(draw: st.DrawFn) -> MayorOptions:
    players = draw(st.integers(4, 16))
    nazis = draw(st.one_of(st.none(), st.integers(1, (players - 1) // 2)))
    return MayorOptions(
        players=players,
        nazis=nazis,
        lovers=draw(st.booleans()),
        stalemate_rounds=draw(st.integers(1, 3)),
    )


temperaments = st.builds(
    Temperament,
    stand=st.sampled_from((0.0, 0.35, 1.0)),
    accuse=st.sampled_from((0.0, 0.4, 1.0)),
    yield_floor=st.sampled_from((0.0, 0.5, 1.0)),
)
seeds = st.integers(0, 1_000_000)
VIEW_EVERY_STEP_UP_TO = 8
"""Views list every seat's legal commands; beyond this size they are checked per stage."""


def command_bound(options: MayorOptions) -> int:
    """Each round: at most 14 stages, each with a few bot passes per seat and a timer per
    floor; a round without a death ends the game after `stalemate_rounds`."""
    per_stage = MAX_PASSES_PER_STAGE * options.players + options.players + 1
    rounds = (options.players + 1) * (options.stalemate_rounds + 1)
    return rounds * 14 * per_stage


# --- the secrecy model ----------------------------------------------------------------------

PUBLIC = frozenset(
    {
        Ev.GAME_STARTED,
        Ev.STAGE_STARTED,
        Ev.CANDIDATE_STOOD,
        Ev.CANDIDATE_DECLINED,
        Ev.NO_CANDIDATES,
        Ev.FLOOR_GIVEN,
        Ev.FLOOR_RELEASED,
        Ev.BALLOT_OPENED,
        Ev.VOTE_CAST,
        Ev.ELECTION_TIED,
        Ev.MAYOR_ELECTED,
        Ev.MAYOR_LOST,
        Ev.ACCUSED,
        Ev.NO_ACCUSATIONS,
        Ev.TRIAL_OPENED,
        Ev.TRIAL_TIED,
        Ev.IMPRISONED,
        Ev.ACQUITTED,
        Ev.NIGHT_VICTIM,
        Ev.NIGHT_QUIET,
        Ev.PLAYER_LEFT,
        Ev.GAME_OVER,
    }
)


def nazis(state: MayorState) -> frozenset[int]:
    return frozenset(p.seat for p in state.players if p.role.id == "nazi")


def may_know_role(state: MayorState, viewer: Viewer, seat: int) -> bool:
    """Out seats and everything at the end; one's own; Nazis each other from night 1."""
    if state.is_over or not state.player(seat).alive:
        return True
    if viewer.seat is None:
        return False
    if viewer.seat == seat:
        return True
    team = nazis(state)
    return state.bonds_known and viewer.seat in team and seat in team


def role_claims(event: Event) -> list[tuple[int, str]]:
    params: dict[str, Any] = dict(event.params)
    claims = [(d["seat"], d["role"]) for d in params.get("dead", [])]
    if event.code in (Ev.IMPRISONED, Ev.NIGHT_VICTIM):
        claims.append((params["seat"], params["role"]))
    if event.code == Ev.GAME_OVER:
        claims += [(int(s), r) for s, r in params["roles"].items()]
    return claims


def check_event(before: MayorState, after: MayorState, event: Event) -> None:
    """Who may receive each code (audiences), and that public role claims are true and out."""
    msg = f"{event.code} {dict(event.params)} to {event.audience}"
    assert SCHEMA.events[event.code].admits(event.params), msg
    to = event.audience.seats
    params: dict[str, Any] = dict(event.params)
    if event.code in PUBLIC:
        assert event.audience.kind is AudienceKind.PUBLIC, msg
    elif event.code == Ev.ROLES_DEALT:
        assert event.audience.kind is AudienceKind.SYSTEM, msg
    elif event.code == Ev.ROLE_ASSIGNED:
        (seat,) = to
        assert params["role"] == after.player(seat).role.id, msg
    elif event.code == Ev.TEAM_REVEALED:
        assert to == nazis(after) == set(params["members"]), msg
        assert after.stage is Stage.NIGHT, msg  # they first meet at night
    elif event.code == Ev.LOVERS_REVEALED:
        assert to == set(after.lovers()) == set(params["seats"]), msg
    elif event.code == Ev.VICTIM_CHOSEN:
        assert to == before.night_room() and params["voter"] in to, msg
    elif event.code == Ev.CHAT:
        speaker = before.player(params["seat"])
        if params["room"] == "market":
            assert event.audience.kind is AudienceKind.PUBLIC, msg
            assert before.is_over or (speaker.alive and before.stage is not Stage.NIGHT), msg
        elif params["room"] == "night_room":
            assert to == before.night_room() and speaker.seat in to, msg
        else:
            assert params["room"] == "out" and not speaker.alive, msg
            assert to == before.out_seats(), msg
    else:
        raise AssertionError(f"no secrecy rule for {msg}")
    if event.audience.kind is AudienceKind.PUBLIC:
        for seat, role in role_claims(event):
            assert after.is_over or not after.player(seat).alive, msg
            assert role == after.player(seat).role.id, msg


def check_views(state: MayorState) -> None:
    viewers = [Viewer.player(p.seat) for p in state.players] + [Viewer.spectator()]
    for viewer in viewers:
        view = project(state, viewer)
        view.to_json()
        for seat in view.seats:
            if seat.role is not None:
                assert may_know_role(state, viewer, seat.seat), (viewer, seat)
                assert seat.role == state.player(seat.seat).role.id
            if seat.lover:
                knows = viewer.seat in state.lovers() and state.bonds_known
                assert state.is_over or knows, (viewer, seat)
        if view.night_room is not None:
            assert viewer.seat in state.night_room(), viewer
        if view.me is not None and view.me.team:
            assert state.bonds_known and viewer.seat in nazis(state), viewer
    table = routing(state)
    living, out = state.living_seats(), state.out_seats()
    for listener, routes in table.items():
        sources = {r.source for r in routes}
        hears_nothing_at_night = listener == SPECTATORS or (
            listener in living and listener not in nazis(state)
        )
        if state.is_over:
            continue
        if listener == SPECTATORS or listener in living:
            assert not sources & out, (listener, routes)  # B6
        if state.stage is Stage.NIGHT and hears_nothing_at_night:
            assert sources == set(), (listener, routes)


def step_through(game: PlayedGame, check: Callable[[MayorState, MayorState, Event], None]) -> None:
    result = new_game(game.options, rng_for(game.seed, 0))
    state = result.state
    for event in result.events:
        check(state, state, event)
    for index, command in enumerate(game.commands, start=1):
        outcome = apply(state, command, rng_for(game.seed, index))
        assert not isinstance(outcome, Rejection), (command, outcome)
        for event in outcome.events:
            check(state, outcome.state, event)
        small = game.options.players <= VIEW_EVERY_STEP_UP_TO
        if (small and outcome.events) or outcome.state.phase_seq != state.phase_seq:
            check_views(outcome.state)
        state = outcome.state


class CheckedBot(MayorBot):
    """A bot whose every command must be in its seat's legal list."""

    def choose(self, state: MayorState) -> Command | None:
        command = super().choose(state)
        assert command is None or command in legal_commands(state, self.seat), command
        return command


@given(foundings(), seeds, temperaments)
def test_every_game_ends_replays_exactly_and_leaks_nothing(
    options: MayorOptions, seed: int, temperament: Temperament
) -> None:
    game = play_game(options, seed, temperament=temperament, bot=CheckedBot)
    assert game.state is not None and game.state.is_over
    assert len(game.commands) <= command_bound(options)
    replayed = replay(options, seed, game.commands)
    assert replayed.state == game.state
    assert replay(options, seed, game.commands).events == replayed.events
    step_through(game, check_event)


def random_command(rng: random.Random, players: int, state: MayorState) -> Command:
    seat = rng.randint(-1, players + 2)
    target = rng.randint(-1, players + 2)
    makers: list[Callable[[], Command]] = [
        lambda: Stand(seat, rng.random() < 0.5),
        lambda: Vote(seat, target),
        lambda: Accuse(seat, target),
        lambda: ChooseVictim(seat, target),
        lambda: YieldFloor(seat),
        lambda: Say(seat, rng.choice(("", " ", "hallo", "x" * 600))),
        lambda: PhaseTimeout(state.phase_seq + rng.randint(-2, 1)),
        lambda: FloorTimeout(seat, state.phase_seq + rng.randint(-1, 1)),
        lambda: Leave(seat),
    ]
    return rng.choice(makers)()


@given(foundings(), seeds, st.integers(0, 2**32))
def test_refused_commands_change_nothing(options: MayorOptions, seed: int, salt: int) -> None:
    game = play_game(options, seed)
    rng = random.Random(salt)
    result = new_game(options, rng_for(seed, 0))
    state = result.state
    for index, command in enumerate(game.commands, start=1):
        if rng.random() < 0.2:
            probe = random_command(rng, options.players, state)
            before = state
            refused = validate(state, probe)
            outcome = apply(state, probe, rng_for(seed, 10_000 + index))
            assert (refused is None) == (not isinstance(outcome, Rejection)), probe
            if isinstance(outcome, Rejection):
                assert state == before and state is before
                assert SCHEMA.rejections[outcome.code].admits(outcome.params), outcome
        applied = apply(state, command, rng_for(seed, index))
        assert not isinstance(applied, Rejection)
        state = applied.state
