"""The round as a table of stages, and one flow that walks it.

election (round 1, before the first night) → night → morning → election (only if the mayor
left the game: "zu Beginn des nächsten Tages", B2) → accusations → defences → vote → runoff →
next round. Every stage is a `StageSpec`; a stage not available now is skipped (its `on_skip`
runs). Victory is checked after every command (rules.apply) and between every two stages.
"""

from __future__ import annotations

from collections.abc import Callable

from vollmond.engine.kit.stages import announce, next_round, walk
from vollmond.engine.mayor import election, night, trial
from vollmond.engine.mayor.codes import Ev
from vollmond.engine.mayor.floors import floors_done
from vollmond.engine.mayor.stages import StageSpec
from vollmond.engine.mayor.state import MayorState, Outcome
from vollmond.engine.mayor.tx import Tx
from vollmond.engine.mayor.types import Phase, Side, Stage
from vollmond.engine.mayor.victory import finish, settle
from vollmond.engine.mayor.voting import everyone_voted


def _before_first_night(state: MayorState) -> bool:
    return state.round == 1 and state.mayor is None


def _office_empty(state: MayorState) -> bool:
    return state.mayor is None


def _election(is_due: Callable[[MayorState], bool]) -> tuple[StageSpec, ...]:
    """The four election stages (B1); `is_due` says whether this slot holds an election."""
    return (
        StageSpec(
            Stage.CANDIDACY,
            Phase.ELECTION,
            lambda d, s: d.candidacy_s,
            is_available=is_due,
            is_over=election.everyone_decided,
            prepare=election.open_election,
            on_end=election.close_candidacy,
        ),
        StageSpec(
            Stage.INTRODUCTIONS,
            Phase.ELECTION,
            lambda d, s: d.introduction_s * len(election.living_candidates(s)),
            timed=False,
            is_available=election.introductions_due,
            is_over=floors_done,
            on_enter=election.open_introductions,
            on_end=election.close_floors,
        ),
        StageSpec(
            Stage.BALLOT,
            Phase.ELECTION,
            lambda d, s: d.ballot_s,
            is_available=election.ballot_due,
            is_over=everyone_voted,
            prepare=election.open_first_ballot,
            on_enter=election.announce_ballot,
            on_end=election.resolve_first_ballot,
            on_skip=election.elect_unopposed,
        ),
        StageSpec(
            Stage.RUNOFF,
            Phase.ELECTION,
            lambda d, s: d.ballot_s,
            is_available=election.runoff_due,
            is_over=everyone_voted,
            prepare=election.open_runoff,
            on_enter=election.announce_ballot,
            on_end=election.resolve_runoff,
            on_skip=election.runoff_left_one,
        ),
    )


NIGHT = StageSpec(
    Stage.NIGHT,
    Phase.NIGHT,
    lambda d, s: d.night_s,
    is_over=lambda s: night.agreed_victim(s) is not None,
    prepare=night.open_night,
    on_enter=night.reveal_bonds,
    on_end=night.end_night,
)
MORNING = StageSpec(Stage.MORNING, Phase.MORNING, lambda d, s: d.morning_s)
DAY: tuple[StageSpec, ...] = (
    StageSpec(
        Stage.ACCUSATIONS,
        Phase.DAY,
        lambda d, s: d.accusations_s,
        prepare=trial.open_day,
    ),
    StageSpec(
        Stage.DEFENCE,
        Phase.DAY,
        lambda d, s: d.defence_s * len(trial.living_accused(s)),
        timed=False,
        is_available=trial.anyone_accused,
        is_over=floors_done,
        on_enter=trial.open_defences,
        on_end=election.close_floors,
        on_skip=trial.no_accusations,
    ),
    StageSpec(
        Stage.VOTE,
        Phase.DAY,
        lambda d, s: d.vote_s,
        is_available=trial.anyone_accused,
        is_over=everyone_voted,
        prepare=trial.open_vote,
        on_enter=trial.announce_vote,
        on_end=trial.resolve_vote,
    ),
    StageSpec(
        Stage.REVOTE,
        Phase.DAY,
        lambda d, s: d.vote_s,
        is_available=trial.revote_due,
        is_over=everyone_voted,
        prepare=trial.open_revote,
        on_enter=trial.announce_vote,
        on_end=trial.resolve_revote,
    ),
)

STAGES: tuple[StageSpec, ...] = (
    *_election(_before_first_night),
    NIGHT,
    MORNING,
    *_election(_office_empty),
    *DAY,
)
"""One round, in order; a stage not available now is skipped."""


def current_stage(state: MayorState) -> StageSpec:
    return STAGES[state.stage_index]


def _enter(tx: Tx, index: int) -> None:
    stage = STAGES[index]
    tx.change(stage=stage.stage, stage_index=index)
    stage.prepare(tx)
    seq = tx.state.phase_seq + 1
    tx.change(phase_seq=seq)
    seconds = stage.seconds(tx.state.options.durations, tx.state)
    announce(
        tx,
        Ev.STAGE_STARTED,
        seq,
        seconds,
        {"stage": stage.stage.value, "phase": stage.phase.value},
        timed=stage.timed,
    )
    stage.on_enter(tx)


def _new_round(tx: Tx) -> bool:
    """A new round; rounds without anyone leaving the game end in a draw after
    `stalemate_rounds` (decision). True when the game ended here."""
    stalled = next_round(tx)
    if settle(tx):
        return True
    if stalled:
        finish(tx, Outcome(Side.DRAW, frozenset()))
        return True
    return False


def _skip(tx: Tx, position: int) -> bool:
    """A stage not held now runs its `on_skip` (an unopposed election), which may end the
    game."""
    STAGES[position].on_skip(tx)
    return settle(tx)


def _enter_next(tx: Tx, position: int) -> None:
    walk(
        tx,
        position,
        len(STAGES),
        is_available=lambda tx, position: STAGES[position].is_available(tx.state),
        enter=_enter,
        skip=_skip,
        new_round=_new_round,
    )


def begin(tx: Tx) -> None:
    """Open the first available stage of a new game (the deal has been announced)."""
    _enter_next(tx, 0)


def end_stage(tx: Tx) -> None:
    """The stage is over (its timer, its floors, or everyone acted): resolve it, check
    victory, enter the next available stage."""
    stage = current_stage(tx.state)
    stage.on_end(tx)
    if settle(tx):
        return
    _enter_next(tx, tx.state.stage_index + 1)


def advance_if_complete(tx: Tx) -> None:
    """After a command: let the stage react, and end it if nobody is left to wait for."""
    stage = current_stage(tx.state)
    stage.after_command(tx)
    if stage.is_over(tx.state):
        end_stage(tx)
