"""Phases as data: each phase knows how long it lasts and what comes after it.

night (steal step in night 1 if a vagabond plays) → morning → day → vote (if anyone is
nominated) → next night. Time only enters through PhaseTimeout commands.
"""

from __future__ import annotations

from vollmond.engine.core import Audience, evolve
from vollmond.engine.standard.codes import Ev
from vollmond.engine.standard.commands import PhaseTimeout
from vollmond.engine.standard.deaths import death_list, end_calls_of, kill
from vollmond.engine.standard.properties import has_trait, night_room, seen_as_evil, spec_of
from vollmond.engine.standard.resolution import resolve_night
from vollmond.engine.standard.state import DayState, Fact, FactKind, NightState, Outcome
from vollmond.engine.standard.tx import Tx
from vollmond.engine.standard.types import (
    ActionKind,
    CallEndReason,
    NightStep,
    Phase,
    Side,
    Trait,
)
from vollmond.engine.standard.victory import finish, settle
from vollmond.engine.standard.voting import resolve_vote


def _enter(tx: Tx, phase: Phase, seconds: float, **params: int | str | None) -> None:
    seq = tx.state.phase_seq + 1
    day = tx.state.day
    if day is not None and day.floor is not None:
        day = evolve(day, floor=None)
    # C8: the per-night call count spans the whole night (steal step and main step).
    placed = tx.state.calls_placed if phase is tx.state.phase else {}
    tx.state = evolve(tx.state, phase=phase, phase_seq=seq, calls_placed=placed, day=day)
    tx.emit(
        Ev.PHASE_STARTED,
        Audience.public(),
        phase=phase.value,
        round=tx.state.round,
        seq=seq,
        seconds=seconds,
        **params,
    )
    tx.after(seconds, PhaseTimeout(seq))


def has_vagabond(tx: Tx) -> bool:
    return any(spec_of(p).ability(ActionKind.STEAL) is not None for p in tx.state.living())


def start_night(tx: Tx) -> None:
    state = tx.state
    durations = state.options.durations
    if state.round == 1 and has_vagabond(tx):
        tx.state = evolve(state, night=NightState(state.round, NightStep.STEAL), day=None)
        _enter(tx, Phase.NIGHT, durations.steal_s, step=NightStep.STEAL.value)
        return
    tx.state = evolve(state, night=NightState(state.round, NightStep.MAIN), day=None)
    _enter(tx, Phase.NIGHT, durations.night_s, step=NightStep.MAIN.value)
    _tell_mediums(tx)


def reveal_bonds(tx: Tx) -> None:
    """The night room learns its members (N1), twins each other (S10): at the deal, or with
    a vagabond only after his steal step (S14), so the robbed never learn a team."""
    room = night_room(tx.state)
    tx.emit(Ev.TEAM_REVEALED, Audience.group(room), members=sorted(room))
    twins: dict[str, list[int]] = {}
    for player in tx.state.players:
        if has_trait(player, Trait.BONDED_PAIR):
            twins.setdefault(player.role.value, []).append(player.seat)
    for seats in twins.values():
        tx.emit(Ev.PARTNER_REVEALED, Audience.group(tuple(seats)), kind="twin", seats=seats)


def start_main_step(tx: Tx) -> None:
    night = tx.state.night
    assert night is not None
    tx.state = evolve(tx.state, night=evolve(night, step=NightStep.MAIN))
    _enter(tx, Phase.NIGHT, tx.state.options.durations.night_s, step=NightStep.MAIN.value)
    reveal_bonds(tx)
    _tell_mediums(tx)


def _tell_mediums(tx: Tx) -> None:
    """S7: each night the medium learns whether the most recently banished was evil."""
    banished = tx.state.last_banished
    if banished is None:
        return
    evil = seen_as_evil(tx.state.player(banished))
    for player in list(tx.state.living()):
        if has_trait(player, Trait.LEARNS_BANISHED):
            fact = Fact(FactKind.MEDIUM, tx.state.round, banished, evil)
            tx.state = tx.state.with_player(evolve(player, facts=(*player.facts, fact)))
            tx.emit(Ev.MEDIUM_RESULT, Audience.to(player.seat), target=banished, evil=evil)


def end_night(tx: Tx) -> None:
    end_calls_of(tx, None, CallEndReason.PHASE_END)
    dying = resolve_night(tx)
    dead = kill(tx, dying)
    tx.state = evolve(tx.state, day=DayState(tx.state.round))
    tx.emit(Ev.MORNING_REPORT, Audience.public(), round=tx.state.round, dead=death_list(tx, dead))
    if settle(tx):
        return
    _enter(tx, Phase.MORNING, tx.state.options.durations.morning_s)


def start_day(tx: Tx) -> None:
    _enter(tx, Phase.DAY, tx.state.options.durations.day_s)


def start_vote(tx: Tx) -> None:
    """C8: every day call ends when voting begins."""
    day = tx.state.day
    assert day is not None
    end_calls_of(tx, None, CallEndReason.PHASE_END)
    if not day.nominees:
        tx.emit(Ev.NO_NOMINATIONS, Audience.public(), round=tx.state.round)
        next_night(tx)
        return
    _enter(tx, Phase.VOTE, tx.state.options.durations.vote_s)
    tx.emit(Ev.VOTING_STARTED, Audience.public(), nominees=list(day.nominees))


def end_vote(tx: Tx) -> None:
    resolve_vote(tx)
    if tx.state.phase is not Phase.OVER:
        next_night(tx)


def next_night(tx: Tx) -> None:
    """A new round; a table where nobody dies for several rounds ends in a draw."""
    state = tx.state
    quiet = state.quiet_rounds + 1 if state.deaths_this_round == 0 else 0
    tx.state = evolve(state, round=state.round + 1, quiet_rounds=quiet, deaths_this_round=0)
    if settle(tx):
        return
    if quiet >= state.options.stalemate_rounds:
        finish(tx, Outcome((Side.DRAW,), frozenset()))
        return
    start_night(tx)


def on_timeout(tx: Tx) -> None:
    """The phase's time is up: missing actions take their defaults (pass, abstain)."""
    state = tx.state
    if state.phase is Phase.NIGHT:
        night = state.night
        assert night is not None
        if night.step is NightStep.STEAL:
            _vagabonds_pass(tx)
            start_main_step(tx)
        else:
            end_night(tx)
    elif state.phase is Phase.MORNING:
        start_day(tx)
    elif state.phase is Phase.DAY:
        start_vote(tx)
    elif state.phase is Phase.VOTE:
        end_vote(tx)


def _vagabonds_pass(tx: Tx) -> None:
    night = tx.state.night
    assert night is not None
    for player in list(tx.state.living()):
        ability = spec_of(player).ability(ActionKind.STEAL)
        if ability is not None and not night.acted(player.seat, ActionKind.STEAL):
            ability.perform(tx, player, None)
