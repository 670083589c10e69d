"""Ballots shared by the mayor election (B1) and the evening vote (B3, B4).

One vote per living player for one candidate; there is no abstention command (B3). Who has
voted is public at once; for whom, only in the result. Ballots of players who left since,
or for candidates who left since, count for nobody.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from vollmond.engine.core import Audience, Json, Rejection, evolve
from vollmond.engine.mayor.codes import Ev, Rej
from vollmond.engine.mayor.commands import Vote
from vollmond.engine.mayor.state import Ballot, MayorState
from vollmond.engine.mayor.tx import Tx


def open_ballot(tx: Tx, candidates: Sequence[int]) -> None:
    tx.change(ballot=Ballot(tuple(candidates)))


def close_ballot(tx: Tx) -> Ballot:
    ballot = tx.state.ballot
    assert ballot is not None
    tx.change(ballot=None)
    return ballot


def check_vote(state: MayorState, cmd: Vote) -> Rejection | None:
    ballot = state.ballot
    if ballot is None:
        return Rejection(Rej.WRONG_STAGE)
    if cmd.actor in ballot.votes:
        return Rejection(Rej.ALREADY_VOTED)
    if cmd.target not in ballot.candidates:
        return Rejection(Rej.NOT_A_CANDIDATE, {"target": cmd.target})
    if not state.player(cmd.target).alive:
        return Rejection(Rej.TARGET_OUT, {"target": cmd.target})
    return None


def vote(tx: Tx, cmd: Vote) -> None:
    ballot = tx.state.ballot
    assert ballot is not None
    tx.change(ballot=evolve(ballot, votes={**ballot.votes, cmd.actor: cmd.target}))
    tx.emit(Ev.VOTE_CAST, Audience.public(), voter=cmd.actor)


def everyone_voted(state: MayorState) -> bool:
    ballot = state.ballot
    return ballot is not None and state.living_seats() <= ballot.votes.keys()


def valid_votes(state: MayorState, ballot: Ballot) -> dict[int, int]:
    """The ballots that count: from living voters for living candidates."""
    living = state.living_seats()
    return {v: t for v, t in ballot.votes.items() if v in living and t in living}


def tally(
    state: MayorState, ballot: Ballot, extra: Mapping[int, int] | None = None
) -> dict[int, int]:
    """Votes per living candidate (0 included); `extra` adds weight (the mayor's second vote)."""
    living = state.living_seats()
    counts = {c: 0 for c in ballot.candidates if c in living}
    for target in valid_votes(state, ballot).values():
        counts[target] += 1
    for target, n in (extra or {}).items():
        if target in counts:
            counts[target] += n
    return counts


def leaders(counts: Mapping[int, int]) -> tuple[int, ...]:
    """The candidates with the most votes; () when nobody has a vote."""
    top = max(counts.values(), default=0)
    if top == 0:
        return ()
    return tuple(sorted(c for c, n in counts.items() if n == top))


def public_record(state: MayorState, ballot: Ballot) -> dict[str, Json]:
    """The result's public part: the count per candidate and who voted for whom."""
    return {
        "tally": {str(c): n for c, n in sorted(tally(state, ballot).items())},
        "votes": {str(v): t for v, t in sorted(valid_votes(state, ballot).items())},
    }
