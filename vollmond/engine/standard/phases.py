"""Phases as data: a table of stages and one flow that walks it.

night (a step declared by an ability first, e.g. the vagabond's steal in night 1) → morning →
day → vote (if anyone is nominated) → next round. Each stage is a `StageSpec` (is available,
is over, prepare, on enter, after each command, on end); there is no chain of `if phase ==`.
Victory is checked between every two stages and after every command (rules.apply), so the
hooks only change state and emit events. Time only enters through PhaseTimeout commands.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from vollmond.engine.core import Audience, Json, evolve
from vollmond.engine.kit.stages import announce, never, next_round, nothing, walk
from vollmond.engine.standard.abilities.night import lock_victim
from vollmond.engine.standard.codes import Ev
from vollmond.engine.standard.deaths import death_list, end_calls_of, kill
from vollmond.engine.standard.properties import has_trait, night_room, seen_as_evil
from vollmond.engine.standard.resolution import resolve_night
from vollmond.engine.standard.roles.registry import ROLES
from vollmond.engine.standard.stages import StageSpec
from vollmond.engine.standard.state import DayState, Fact, FactKind, GameState, NightState, Outcome
from vollmond.engine.standard.tx import Tx
from vollmond.engine.standard.types import CallEndReason, NightStep, Phase, Side, Trait
from vollmond.engine.standard.victory import finish, settle
from vollmond.engine.standard.voting import resolve_vote

# Members read on every command, as module constants (types.py: `Phase.NIGHT` is slow on 3.11).
_NIGHT = Phase.NIGHT
_PHASE_STARTED = Ev.PHASE_STARTED

# --- the main night ------------------------------------------------------------------------


def _open_night(tx: Tx) -> None:
    """The main step: a fresh night, or the night a declared step (steal) opened."""
    state = tx.state
    night = state.night
    if night is not None and night.number == state.round:
        tx.change(night=evolve(night, step=NightStep.MAIN))
    else:
        tx.change(night=NightState(state.round, NightStep.MAIN), day=None)


def _tell_mediums(tx: Tx) -> None:
    """S7: each night the medium learns whether the most recently banished was evil."""
    banished = tx.state.last_banished
    if banished is None:
        return
    evil = seen_as_evil(tx.state.player(banished))
    learns = Trait.LEARNS_BANISHED
    for player in tx.state.players:  # the players as the night began (put_player replaces
        # the tuple; the loop keeps the one it began with)
        if player.alive and learns in player.spec.traits:
            fact = Fact(FactKind.MEDIUM, tx.state.round, banished, evil)
            tx.put_player(evolve(player, facts=(*player.facts, fact)))
            tx.emit(Ev.MEDIUM_RESULT, Audience.to(player.seat), target=banished, evil=evil)


def _lock_when_the_room_voted(tx: Tx) -> None:
    """N7: the victim is fixed the moment the last living member of the night room voted.

    Asked after every command of the night: it stops at the first member still to vote
    instead of building the room first (`night_room`)."""
    night = tx.state.night
    assert night is not None
    if night.victim_locked:
        return
    votes = night.evil_votes
    anyone = False
    for player in tx.state.players:  # `in_night_room` read straight from the spec here
        if player.alive and player.spec.night_room:
            if player.seat not in votes:
                return
            anyone = True
    if anyone:
        lock_victim(tx)


def _end_night(tx: Tx) -> None:
    end_calls_of(tx, None, CallEndReason.PHASE_END)
    dead = kill(tx, resolve_night(tx))
    tx.change(day=DayState(tx.state.round))
    tx.emit(Ev.MORNING_REPORT, Audience.public(), round=tx.state.round, dead=death_list(tx, dead))


# --- the vote ------------------------------------------------------------------------------


def _anyone_nominated(state: GameState) -> bool:
    return bool(state.today().nominees)


def _everyone_voted(state: GameState) -> bool:
    """Every eligible voter (`eligible_voters`) has voted; asked after every vote, so it stops
    at the first one still to vote instead of building the set."""
    day = state.today()
    votes, transfers = day.votes, day.transfers
    for p in state.players:  # a loop, not `all` over a generator: asked after every vote
        if p.alive and p.seat not in votes and p.seat not in transfers:
            return False
    return True


def _end_day_calls(tx: Tx) -> None:
    """C8: every day call ends when the day ends (the vote begins, or the night)."""
    end_calls_of(tx, None, CallEndReason.PHASE_END)


def _announce_nominees(tx: Tx) -> None:
    tx.emit(Ev.VOTING_STARTED, Audience.public(), nominees=list(tx.state.today().nominees))


def _no_nominations(tx: Tx) -> None:
    tx.emit(Ev.NO_NOMINATIONS, Audience.public(), round=tx.state.round)


# --- the table -----------------------------------------------------------------------------

NIGHT = StageSpec(
    name="night",
    phase=Phase.NIGHT,
    step=NightStep.MAIN,
    seconds=lambda d: d.night_s,
    prepare=_open_night,
    on_enter=_tell_mediums,
    after_command=_lock_when_the_room_voted,
    on_end=_end_night,
)
MORNING = StageSpec(name="morning", phase=Phase.MORNING, seconds=lambda d: d.morning_s)
DAY = StageSpec(name="day", phase=Phase.DAY, seconds=lambda d: d.day_s, on_end=_end_day_calls)
VOTE = StageSpec(
    name="vote",
    phase=Phase.VOTE,
    seconds=lambda d: d.vote_s,
    is_available=_anyone_nominated,
    is_over=_everyone_voted,
    on_enter=_announce_nominees,
    on_end=resolve_vote,
    on_skip=_no_nominations,
)


def _declared_steps() -> tuple[StageSpec, ...]:
    """Night steps that roles' abilities bring (the steal step), in registry order, once."""
    steps: dict[str, StageSpec] = {}
    for role in ROLES.values():
        for ability in role.abilities:
            if ability.stage is not None:
                steps.setdefault(ability.stage.name, ability.stage)
    return tuple(steps.values())


STAGES: tuple[StageSpec, ...] = (*_declared_steps(), NIGHT, MORNING, DAY, VOTE)
"""One round, in order. A stage that is not available this round is skipped."""

_POSITION: Mapping[int, int] = MappingProxyType({id(stage): i for i, stage in enumerate(STAGES)})
"""A stage's place in the round, by identity (`STAGES.index` compares stages field by field)."""


def _announced(stage: StageSpec) -> Mapping[str, Json]:
    params: dict[str, Json] = {"phase": stage.phase.value}
    if stage.step is not None:
        params["step"] = stage.step.value
    return params  # a plain dict (never changed): `**` copies a dict faster than a proxy


_ANNOUNCED: Mapping[int, Mapping[str, Json]] = MappingProxyType(
    {id(stage): _announced(stage) for stage in STAGES}
)
"""A stage's own parameters of `phase_started`, by identity (made once, not per entry)."""

_BY_KEY: Mapping[tuple[Phase, NightStep | None], StageSpec] = MappingProxyType(
    {stage.key: stage for stage in STAGES}
)


# --- the flow ------------------------------------------------------------------------------


def current_stage(state: GameState) -> StageSpec:
    phase = state.phase
    step = state.night.step if phase is _NIGHT and state.night is not None else None
    return _BY_KEY[(phase, step)]


def first_stage(state: GameState) -> StageSpec:
    return next(stage for stage in STAGES if stage.is_available(state))


def reveal_bonds(tx: Tx) -> None:
    """The night room learns its members (N1), twins each other (S10): at the deal, or only
    when a stage that hides them (the steal step, S14) is over, so the robbed never learn a
    team."""
    room = night_room(tx.state)
    tx.emit(Ev.TEAM_REVEALED, Audience.group(room), members=sorted(room))
    twins: dict[str, list[int]] = {}
    for player in tx.state.players:
        if has_trait(player, Trait.BONDED_PAIR):
            twins.setdefault(player.role.value, []).append(player.seat)
    for seats in twins.values():
        tx.emit(Ev.PARTNER_REVEALED, Audience.group(tuple(seats)), kind="twin", seats=seats)


def _enter(tx: Tx, stage: StageSpec, previous: StageSpec | None) -> None:
    stage.prepare(tx)
    seq = tx.state.phase_seq + 1
    day = tx.state.day
    if day is not None and day.floor is not None:
        day = evolve(day, floor=None)
    # C8: the per-night call count spans the whole night (steal step and main step).
    placed = tx.state.calls_placed if stage.phase is tx.state.phase else {}
    tx.change(phase=stage.phase, phase_seq=seq, calls_placed=placed, day=day)
    seconds = stage.seconds(tx.state.options.durations)
    announce(tx, _PHASE_STARTED, seq, seconds, _ANNOUNCED[id(stage)])
    if previous is not None and previous.hides_bonds and not stage.hides_bonds:
        reveal_bonds(tx)
    stage.on_enter(tx)


def _new_round(tx: Tx) -> bool:
    """A new round; a table where nobody dies for several rounds ends in a draw.
    True when the game ended here."""
    stalled = next_round(tx)
    if settle(tx):
        return True
    if stalled:
        finish(tx, Outcome((Side.DRAW,), frozenset()))
        return True
    return False


def _enter_next(tx: Tx, previous: StageSpec) -> None:
    def enter(tx: Tx, position: int) -> None:
        _enter(tx, STAGES[position], previous)

    walk(
        tx,
        _POSITION[id(previous)] + 1,
        len(STAGES),
        is_available=lambda tx, position: STAGES[position].is_available(tx.state),
        enter=enter,
        skip=_skip,
        new_round=_new_round,
    )


def _skip(tx: Tx, position: int) -> bool:
    STAGES[position].on_skip(tx)
    return False


def begin(tx: Tx) -> None:
    """Open the first stage of a new game (the deal has been announced)."""
    _enter(tx, first_stage(tx.state), None)


def end_stage(tx: Tx) -> None:
    """The current stage is over (its timer, or everyone acted): resolve it, check victory,
    and enter the next available stage."""
    stage = current_stage(tx.state)
    stage.on_end(tx)
    if settle(tx):
        return
    _enter_next(tx, stage)


def on_timeout(tx: Tx) -> None:
    """The stage's time is up: missing actions take their defaults (pass, abstain)."""
    end_stage(tx)


def advance_if_complete(tx: Tx) -> None:
    """After a command: let the stage react, and end it if nobody is left to wait for."""
    stage = current_stage(tx.state)
    after, is_over = stage.after_command, stage.is_over
    if after is not nothing:  # most stages have no hook: not called after every command
        after(tx)
    if is_over is not never and is_over(tx.state):
        end_stage(tx)
