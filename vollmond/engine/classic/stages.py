"""Phases as data: the round as a table of stages, and one flow that walks it.

Before the first night: thief (A3) → Amor (A4) → the captain's election (A5). Every night
in the order of A6: wolves → seeing werewolf (A11) → seer → herb witch → sandman; then the
morning report, the captain's successor if he died, the day's vote (A9), the captain's
tie-break, again a successor. A night step exists when its card is in the hat, whether its
holder lives or not, and waits for its timer when nobody can act, so timing never tells who
is dead (DESIGN §1). Victory is checked between stages and after every command.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from vollmond.engine.classic import day, night
from vollmond.engine.classic.codes import Ev
from vollmond.engine.classic.options import Durations
from vollmond.engine.classic.properties import wolves_room
from vollmond.engine.classic.roles.registry import ROLES
from vollmond.engine.classic.state import GameState, Outcome
from vollmond.engine.classic.tx import Tx
from vollmond.engine.classic.types import Kind, Phase, Side, Step
from vollmond.engine.classic.victory import finish, settle
from vollmond.engine.core import Json
from vollmond.engine.kit.stages import always, announce, never, next_round, nothing, walk


@dataclass(frozen=True, slots=True)
class StageSpec:
    """One stage: whether it happens this round, when it is over before its timer, what it
    prepares (before `phase_started`), does on entering (after it) and at its end."""

    name: str
    phase: Phase
    seconds: Callable[[Durations], float]
    step: Step | None = None
    is_available: Callable[[GameState], bool] = always
    is_over: Callable[[GameState], bool] = never
    prepare: Callable[[Tx], None] = nothing
    on_enter: Callable[[Tx], None] = nothing
    on_end: Callable[[Tx], None] = nothing


def in_hat(state: GameState, kind: Kind) -> bool:
    """Whether a card with this night ability is in the hat (dealt or left over)."""
    return any(ROLES[role].ability(kind) is not None for role in state.deck)


def awaited_by(state: GameState, seat: int, kind: Kind) -> bool:
    """Whether `seat` can still use `kind` now."""
    player = state.player(seat)
    ability = player.spec.ability(kind)
    return ability is not None and ability.usable(state, player) is None


def _all_acted(*kinds: Kind) -> Callable[[GameState], bool]:
    """Over once someone acted and nobody can act any more; when nobody can act at all (the
    holder is dead, or her one action spent) the step runs to its timer, as it would for a
    living holder who thinks, so timing reveals nothing."""

    def over(state: GameState) -> bool:
        night_ = state.night
        if night_ is None:
            return False
        holders = [p.seat for p in state.living() if any(p.spec.ability(k) for k in kinds)]
        acted = any(night_.acted(s, k) for s in holders for k in kinds)
        return acted and not any(awaited_by(state, s, k) for s in holders for k in kinds)

    return over


def _night_step(
    step: Step,
    kinds: tuple[Kind, ...],
    *,
    first_round_only: bool = False,
    quiet_too: bool = False,
    on_enter: Callable[[Tx], None] = nothing,
    on_end: Callable[[Tx], None] = nothing,
    is_over: Callable[[GameState], bool] | None = None,
    seconds: Callable[[Durations], float] = lambda d: d.night_step_s,
) -> StageSpec:
    def available(state: GameState) -> bool:
        if first_round_only and state.round != 1:
            return False
        if state.first_night_quiet and not quiet_too:
            return False
        return in_hat(state, kinds[0])

    return StageSpec(
        name=step.value,
        phase=Phase.NIGHT,
        step=step,
        seconds=seconds,
        is_available=available,
        is_over=is_over or _all_acted(*kinds),
        prepare=lambda tx: night.open_step(tx, step),
        on_enter=on_enter,
        on_end=on_end,
    )


def _wolves_voted(state: GameState) -> bool:
    room = wolves_room(state)
    votes = state.night.wolf_votes if state.night is not None else {}
    return not state.first_night_quiet and bool(room) and room <= votes.keys()


def _thief_done(state: GameState) -> bool:
    return not state.leftover


THIEF = _night_step(
    Step.THIEF,
    (Kind.TAKE_CARD,),
    first_round_only=True,
    quiet_too=True,
    on_enter=night.show_thief_cards,
    on_end=night.thief_default,
    is_over=_thief_done,
    seconds=lambda d: d.setup_s,
)
AMOR = _night_step(
    Step.AMOR, (Kind.LINK,), first_round_only=True, quiet_too=True, seconds=lambda d: d.setup_s
)
ELECTION = StageSpec(
    name="election",
    phase=Phase.ELECTION,
    seconds=lambda d: d.election_s,
    is_available=lambda s: s.round == 1 and s.options.captain,
    is_over=day.everyone_elected,
    on_end=day.close_election,
)
WOLVES = StageSpec(
    name=Step.WOLVES.value,
    phase=Phase.NIGHT,
    step=Step.WOLVES,
    seconds=lambda d: d.night_step_s,
    is_over=_wolves_voted,
    prepare=lambda tx: night.open_step(tx, Step.WOLVES),
    on_enter=night.recognise,
    on_end=night.fix_victim,
)
SEEING_WOLF = _night_step(Step.SEEING_WOLF, (Kind.SEEK,))
SEER = _night_step(Step.SEER, (Kind.CHECK,))
WITCH = _night_step(Step.WITCH, (Kind.HEAL, Kind.POISON, Kind.PASS), on_enter=night.show_victim)
SANDMAN = _night_step(Step.SANDMAN, (Kind.SENSE,))
MORNING = StageSpec(
    name="morning", phase=Phase.MORNING, seconds=lambda d: d.morning_s, prepare=night.resolve
)


def _succession(name: str) -> StageSpec:
    return StageSpec(
        name=name,
        phase=Phase.SUCCESSION,
        seconds=lambda d: d.decision_s,
        is_available=day.successor_due,
        is_over=day.successor_named,
        on_end=day.successor_default,
    )


DAY = StageSpec(
    name="day",
    phase=Phase.DAY,
    seconds=lambda d: d.day_s,
    is_over=day.everyone_voted,
    on_end=day.count_votes,
)
TIEBREAK = StageSpec(
    name="tiebreak",
    phase=Phase.TIEBREAK,
    seconds=lambda d: d.decision_s,
    is_available=day.tie_pending,
    is_over=day.tie_broken,
    on_end=day.tie_default,
)

STAGES: tuple[StageSpec, ...] = (
    THIEF,
    AMOR,
    ELECTION,
    WOLVES,
    SEEING_WOLF,
    SEER,
    WITCH,
    SANDMAN,
    MORNING,
    _succession("succession_morning"),
    DAY,
    TIEBREAK,
    _succession("succession_evening"),
)
"""One round in order; a stage not available this round is skipped."""


# --- the flow ------------------------------------------------------------------------------


def current_stage(state: GameState) -> StageSpec:
    return STAGES[state_position(state)]


def state_position(state: GameState) -> int:
    for index, stage in enumerate(STAGES):
        if stage.name == state.stage:
            return index
    raise LookupError(state.stage)


def _enter(tx: Tx, stage: StageSpec) -> None:
    stage.prepare(tx)
    seq = tx.state.phase_seq + 1
    tx.change(phase=stage.phase, step=stage.step, phase_seq=seq, stage=stage.name)
    seconds = stage.seconds(tx.state.options.durations)
    params: dict[str, Json] = {"phase": stage.phase.value}
    if stage.step is not None:
        params["step"] = stage.step.value
    announce(tx, Ev.PHASE_STARTED, seq, seconds, params)
    stage.on_enter(tx)


def _new_round(tx: Tx) -> bool:
    """The next round; a table where nobody dies for several rounds ends in a draw."""
    if next_round(tx):
        finish(tx, Outcome((Side.DRAW,), frozenset()))
        return True
    return False


def _enter_and_settle(tx: Tx, position: int) -> None:
    _enter(tx, STAGES[position])
    settle(tx)


def _enter_from(tx: Tx, position: int) -> None:
    walk(
        tx,
        position,
        len(STAGES),
        is_available=lambda tx, position: STAGES[position].is_available(tx.state),
        enter=_enter_and_settle,
        skip=lambda tx, position: False,
        new_round=_new_round,
    )


def begin(tx: Tx) -> None:
    """Open the first stage of a new game (the deal has been announced)."""
    _enter_from(tx, 0)


def end_stage(tx: Tx) -> None:
    """The stage is over (timer, or everyone acted): resolve it, check victory, go on."""
    position = state_position(tx.state)
    STAGES[position].on_end(tx)
    if settle(tx):
        return
    _enter_from(tx, position + 1)


def advance_if_complete(tx: Tx) -> None:
    """After an accepted command: end the stage if nobody is left to wait for."""
    if tx.state.phase is Phase.OVER:
        return
    if current_stage(tx.state).is_over(tx.state):
        end_stage(tx)
