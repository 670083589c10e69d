"""The day's accusations, defences and the evening vote (B3, B4).

Each living player may accuse one other living player a day; every accused person gets a
timed floor for the defence; then every living player must vote for one accused person (no
abstention). The most votes goes to prison; a tie leads to a runoff between the tied; a second
tie is settled by the mayor's double vote (the mayor's runoff ballot counts twice). If even
that leaves a tie (the mayor voted for someone outside it, did not vote, or the office is
empty), nobody goes to prison that day (decision: in doubt for the accused).
"""

from __future__ import annotations

from vollmond.engine.core import Audience, Json, Rejection, evolve
from vollmond.engine.mayor.codes import Ev, Rej
from vollmond.engine.mayor.commands import Accuse
from vollmond.engine.mayor.deaths import announce_vacancy, remove
from vollmond.engine.mayor.floors import open_floors
from vollmond.engine.mayor.state import MayorState, Trial
from vollmond.engine.mayor.tx import Tx
from vollmond.engine.mayor.types import Stage, Status, Verdict
from vollmond.engine.mayor.voting import close_ballot, leaders, open_ballot, public_record, tally


def living_accused(state: MayorState) -> tuple[int, ...]:
    trial = state.trial
    if trial is None:
        return ()
    living = state.living_seats()
    return tuple(s for s in trial.accused if s in living)


def open_day(tx: Tx) -> None:
    tx.change(trial=Trial(), election=None)


def check_accuse(state: MayorState, cmd: Accuse) -> Rejection | None:
    trial = state.trial
    if state.stage is not Stage.ACCUSATIONS or trial is None:
        return Rejection(Rej.WRONG_STAGE)
    if not state.has_seat(cmd.target):
        return Rejection(Rej.TARGET_UNKNOWN, {"target": cmd.target})
    if cmd.target == cmd.actor:
        return Rejection(Rej.TARGET_SELF)
    if not state.player(cmd.target).alive:
        return Rejection(Rej.TARGET_OUT, {"target": cmd.target})
    if cmd.actor in trial.accusations:
        return Rejection(Rej.ALREADY_ACCUSED)
    if cmd.target in trial.accused:
        return Rejection(Rej.TARGET_ACCUSED, {"target": cmd.target})
    return None


def accuse(tx: Tx, cmd: Accuse) -> None:
    trial = tx.state.trial
    assert trial is not None
    trial = evolve(
        trial,
        accusations={**trial.accusations, cmd.actor: cmd.target},
        accused=(*trial.accused, cmd.target),
    )
    tx.change(trial=trial)
    tx.emit(Ev.ACCUSED, Audience.public(), by=cmd.actor, seat=cmd.target)


def anyone_accused(state: MayorState) -> bool:
    return bool(living_accused(state))


def no_accusations(tx: Tx) -> None:
    tx.emit(Ev.NO_ACCUSATIONS, Audience.public(), round=tx.state.round)


def open_defences(tx: Tx) -> None:
    seconds = tx.state.options.durations.defence_s
    open_floors(tx, living_accused(tx.state), Stage.DEFENCE, seconds)


def open_vote(tx: Tx) -> None:
    open_ballot(tx, living_accused(tx.state))


def announce_vote(tx: Tx) -> None:
    ballot = tx.state.ballot
    assert ballot is not None
    tx.emit(Ev.TRIAL_OPENED, Audience.public(), accused=list(ballot.candidates))


def resolve_vote(tx: Tx) -> None:
    ballot = close_ballot(tx)
    record = public_record(tx.state, ballot)
    top = leaders(tally(tx.state, ballot))
    if len(top) == 1:
        _imprison(tx, top[0], Verdict.VOTE, record)
    elif not top:
        tx.emit(Ev.ACQUITTED, Audience.public(), **record)
    else:
        trial = tx.state.trial
        assert trial is not None
        tx.change(trial=evolve(trial, runoff=top))
        tx.emit(Ev.TRIAL_TIED, Audience.public(), tied=list(top), **record)


def revote_due(state: MayorState) -> bool:
    trial = state.trial
    living = state.living_seats()
    return trial is not None and len([s for s in trial.runoff if s in living]) >= 1


def open_revote(tx: Tx) -> None:
    trial = tx.state.trial
    assert trial is not None
    living = tx.state.living_seats()
    open_ballot(tx, tuple(s for s in trial.runoff if s in living))


def resolve_revote(tx: Tx) -> None:
    """B4: a second tie is decided by the mayor's double vote."""
    ballot = close_ballot(tx)
    record = public_record(tx.state, ballot)
    counts = tally(tx.state, ballot)
    top = leaders(counts)
    if len(top) == 1:
        _imprison(tx, top[0], Verdict.RUNOFF, record)
        return
    mayor = tx.state.mayor  # a mayor who left the game is no longer in office
    if top and mayor is not None and mayor in ballot.votes:
        doubled = leaders(tally(tx.state, ballot, {ballot.votes[mayor]: 1}))
        if len(doubled) == 1:
            _imprison(tx, doubled[0], Verdict.MAYOR, record)
            return
    tx.emit(Ev.ACQUITTED, Audience.public(), **record)


def _imprison(tx: Tx, seat: int, how: Verdict, record: dict[str, Json]) -> None:
    role = tx.state.player(seat).role.id
    removal = remove(tx, [seat], Status.IMPRISONED)
    tx.emit(
        Ev.IMPRISONED,
        Audience.public(),
        seat=seat,
        role=role,
        how=how.value,
        dead=removal.dead,
        **record,
    )
    announce_vacancy(tx, removal)
