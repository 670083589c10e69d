"""The mayor election (B1) and the re-election after the mayor's death (B2).

Candidacy (anyone may stand; nobody standing puts every living player on the ballot), short
introductions as timed floors, a ballot, a runoff between the tied leaders, and the lot if
the runoff ties again. A single candidate is elected unopposed.
"""

from __future__ import annotations

from vollmond.engine.core import Audience, Json, Rejection, evolve
from vollmond.engine.mayor.codes import Ev, Rej
from vollmond.engine.mayor.commands import Stand
from vollmond.engine.mayor.floors import open_floors
from vollmond.engine.mayor.state import Election, MayorState
from vollmond.engine.mayor.tx import Tx
from vollmond.engine.mayor.types import Elected, Stage
from vollmond.engine.mayor.voting import close_ballot, leaders, open_ballot, public_record, tally


def living_candidates(state: MayorState) -> tuple[int, ...]:
    election = state.election
    if election is None:
        return ()
    living = state.living_seats()
    return tuple(s for s in election.candidates if s in living)


# --- candidacy -----------------------------------------------------------------------------


def open_election(tx: Tx) -> None:
    tx.change(election=Election())


def check_stand(state: MayorState, cmd: Stand) -> Rejection | None:
    election = state.election
    if state.stage is not Stage.CANDIDACY or election is None:
        return Rejection(Rej.WRONG_STAGE)
    if cmd.actor in election.candidates or cmd.actor in election.declined:
        return Rejection(Rej.ALREADY_DECIDED)
    return None


def stand(tx: Tx, cmd: Stand) -> None:
    election = tx.state.election
    assert election is not None
    if cmd.stand:
        election = evolve(election, candidates=(*election.candidates, cmd.actor))
        tx.emit(Ev.CANDIDATE_STOOD, Audience.public(), seat=cmd.actor)
    else:
        election = evolve(election, declined=election.declined | {cmd.actor})
        tx.emit(Ev.CANDIDATE_DECLINED, Audience.public(), seat=cmd.actor)
    tx.change(election=election)


def everyone_decided(state: MayorState) -> bool:
    election = state.election
    if election is None:
        return False
    decided = {*election.candidates, *election.declined}
    return state.living_seats() <= decided


def close_candidacy(tx: Tx) -> None:
    """Nobody stood: the village still needs a mayor, so every living player is on the
    ballot, without introductions (decision, docs/decisions.md)."""
    election = tx.state.election
    assert election is not None
    if living_candidates(tx.state):
        return
    everyone = tuple(sorted(tx.state.living_seats()))
    tx.change(election=evolve(election, candidates=everyone, introduce=False))
    tx.emit(Ev.NO_CANDIDATES, Audience.public(), candidates=list(everyone))


# --- introductions -------------------------------------------------------------------------


def introductions_due(state: MayorState) -> bool:
    return (
        state.election is not None and state.election.introduce and bool(living_candidates(state))
    )


def open_introductions(tx: Tx) -> None:
    seconds = tx.state.options.durations.introduction_s
    open_floors(tx, living_candidates(tx.state), Stage.INTRODUCTIONS, seconds)


def close_floors(tx: Tx) -> None:
    tx.change(floor=None)


# --- ballot, runoff, lot -------------------------------------------------------------------


def ballot_due(state: MayorState) -> bool:
    return len(living_candidates(state)) >= 2


def open_first_ballot(tx: Tx) -> None:
    open_ballot(tx, living_candidates(tx.state))


def announce_ballot(tx: Tx) -> None:
    ballot = tx.state.ballot
    assert ballot is not None
    tx.emit(Ev.BALLOT_OPENED, Audience.public(), candidates=list(ballot.candidates))


def elect_unopposed(tx: Tx) -> None:
    """Skipped ballot: a single candidate needs no vote."""
    candidates = living_candidates(tx.state)
    if len(candidates) == 1:
        _elect(tx, candidates[0], Elected.UNOPPOSED, {"tally": {}, "votes": {}})


def resolve_first_ballot(tx: Tx) -> None:
    ballot = close_ballot(tx)
    record = public_record(tx.state, ballot)
    top = leaders(tally(tx.state, ballot))
    if len(top) == 1:
        _elect(tx, top[0], Elected.VOTE, record)
        return
    tied = top or ballot.candidates  # nobody voted: every candidate is tied at nothing
    tied = tuple(s for s in tied if s in tx.state.living_seats())
    election = tx.state.election
    assert election is not None
    tx.change(election=evolve(election, runoff=tied))
    tx.emit(Ev.ELECTION_TIED, Audience.public(), tied=list(tied), **record)


def runoff_due(state: MayorState) -> bool:
    election = state.election
    living = state.living_seats()
    return election is not None and len([s for s in election.runoff if s in living]) >= 2


def open_runoff(tx: Tx) -> None:
    election = tx.state.election
    assert election is not None
    living = tx.state.living_seats()
    open_ballot(tx, tuple(s for s in election.runoff if s in living))


def resolve_runoff(tx: Tx) -> None:
    ballot = close_ballot(tx)
    record = public_record(tx.state, ballot)
    top = leaders(tally(tx.state, ballot))
    if len(top) == 1:
        _elect(tx, top[0], Elected.RUNOFF, record)
        return
    tied = [s for s in (top or ballot.candidates) if s in tx.state.living_seats()]
    _elect(tx, tx.rng.choice(sorted(tied)), Elected.LOT, record)


def runoff_left_one(tx: Tx) -> None:
    """Skipped runoff: a tied leader left the game, so the one who remains is elected."""
    election = tx.state.election
    if election is None:
        return
    living = [s for s in election.runoff if s in tx.state.living_seats()]
    if len(living) == 1:
        _elect(tx, living[0], Elected.RUNOFF, {"tally": {}, "votes": {}})


def _elect(tx: Tx, seat: int, how: Elected, record: dict[str, Json]) -> None:
    tx.change(mayor=seat, election=None, ballot=None, floor=None)
    tx.emit(Ev.MAYOR_ELECTED, Audience.public(), seat=seat, how=how.value, **record)
