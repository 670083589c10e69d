"""The open-eyed parts: the captain's election (A5), the day's vote by show of hands with
the captain's tie-break (A9), the captain's successor (A5), the death-seeker's win (A14)."""

from __future__ import annotations

from collections import Counter

from vollmond.engine.classic.abilities import reject
from vollmond.engine.classic.codes import Ev, Rej
from vollmond.engine.classic.commands import BreakTie, Elect, Leave, NameSuccessor, Vote
from vollmond.engine.classic.deaths import death_list, kill
from vollmond.engine.classic.state import GameState, Outcome
from vollmond.engine.classic.tx import Tx
from vollmond.engine.classic.types import Phase, Side
from vollmond.engine.classic.victory import finish
from vollmond.engine.core import Audience, Json, Rejection, evolve


def _living_target(state: GameState, target: int) -> Rejection | None:
    if not state.has_seat(target):
        return reject(Rej.TARGET_UNKNOWN, target=target)
    if not state.player(target).alive:
        return reject(Rej.TARGET_DEAD, target=target)
    return None


def _tally(votes: dict[int, int] | dict[int, int | None]) -> dict[str, Json]:
    counts = Counter(t for t in votes.values() if t is not None)
    return {str(t): n for t, n in sorted(counts.items())}


def _top(votes: dict[int, int] | dict[int, int | None]) -> list[int]:
    counts = Counter(t for t in votes.values() if t is not None)
    if not counts:
        return []
    top = max(counts.values())
    return sorted(t for t, n in counts.items() if n == top)


# --- the election (A5) -------------------------------------------------------------------


def check_elect(state: GameState, cmd: Elect) -> Rejection | None:
    if state.phase is not Phase.ELECTION:
        return reject(Rej.WRONG_PHASE)
    if cmd.actor in state.election:
        return reject(Rej.ALREADY_ACTED)
    return _living_target(state, cmd.target)


def elect(tx: Tx, cmd: Elect) -> None:
    tx.change(election={**tx.state.election, cmd.actor: cmd.target})
    tx.emit(Ev.ELECTION_VOTE, Audience.public(), voter=cmd.actor, target=cmd.target)


def everyone_elected(state: GameState) -> bool:
    return {p.seat for p in state.living()} <= state.election.keys()


def close_election(tx: Tx) -> None:
    """Most votes is captain and cannot refuse; a tie (or no vote at all) by lot."""
    votes = {v: t for v, t in tx.state.election.items() if tx.state.player(t).alive}
    top = _top(votes) or [p.seat for p in tx.state.living()]
    captain = top[0] if len(top) == 1 else tx.rng.choice(top)
    tx.change(captain=captain)
    tx.emit(
        Ev.CAPTAIN_ELECTED,
        Audience.public(),
        captain=captain,
        tally=_tally(votes),
        by_lot=len(top) > 1,
    )


# --- the day's vote (A9) -----------------------------------------------------------------


def check_vote(state: GameState, cmd: Vote) -> Rejection | None:
    if state.phase is not Phase.DAY or state.day is None:
        return reject(Rej.WRONG_PHASE)
    if cmd.actor in state.day.votes:
        return reject(Rej.ALREADY_ACTED)
    if cmd.target is None:
        return None
    if cmd.target == cmd.actor:
        return reject(Rej.TARGET_SELF)
    return _living_target(state, cmd.target)


def vote(tx: Tx, cmd: Vote) -> None:
    day = tx.state.day
    assert day is not None
    tx.change(day=evolve(day, votes={**day.votes, cmd.actor: cmd.target}))
    tx.emit(Ev.VOTE_CAST, Audience.public(), voter=cmd.actor, target=cmd.target)


def everyone_voted(state: GameState) -> bool:
    day = state.day
    return day is not None and {p.seat for p in state.living()} <= day.votes.keys()


def count_votes(tx: Tx) -> None:
    """Most hands leaves. A tie goes to a living captain; without one a die decides."""
    day = tx.state.day
    assert day is not None
    votes = {v: t for v, t in day.votes.items() if t is None or tx.state.player(t).alive}
    top = _top(votes)
    if len(top) > 1 and tx.state.captain is not None:
        tx.change(day=evolve(day, tied=tuple(top)))
        tx.emit(Ev.TIE_TO_CAPTAIN, Audience.public(), tied=top, captain=tx.state.captain)
        return
    if not top:
        banish(tx, None, "nobody")
    elif len(top) == 1:
        banish(tx, top[0], "votes")
    else:
        banish(tx, tx.rng.choice(top), "lot")


def tie_pending(state: GameState) -> bool:
    return state.day is not None and bool(state.day.tied)


def tie_broken(state: GameState) -> bool:
    return not tie_pending(state)


def check_break_tie(state: GameState, cmd: BreakTie) -> Rejection | None:
    if state.phase is not Phase.TIEBREAK or state.day is None:
        return reject(Rej.WRONG_PHASE)
    if state.captain != cmd.actor:
        return reject(Rej.NOT_CAPTAIN)
    if cmd.target not in state.day.tied:
        return reject(Rej.NOT_TIED, target=cmd.target)
    return None


def break_tie(tx: Tx, cmd: BreakTie) -> None:
    banish(tx, cmd.target, "captain")


def tie_default(tx: Tx) -> None:
    """The captain let the time run out: the die decides among the tied."""
    day = tx.state.day
    if day is not None and day.tied:
        live = [s for s in day.tied if tx.state.player(s).alive]
        banish(tx, tx.rng.choice(live) if live else None, "lot")


def banish(tx: Tx, seat: int | None, decided_by: str) -> None:
    day = tx.state.day
    assert day is not None
    tx.change(day=evolve(day, tied=()))
    dead = kill(tx, [seat]) if seat is not None else []
    tx.emit(
        Ev.VOTE_RESULT,
        Audience.public(),
        tally=_tally(day.votes),
        banished=seat,
        role=tx.state.player(seat).role.value if seat is not None else None,
        dead=death_list(tx, dead),
        decided_by=decided_by,
    )
    if seat is not None and tx.state.player(seat).spec.wins_if_banished:
        # A14: the village voted the death-seeker out; the game ends, he alone wins.
        finish(tx, Outcome((Side.DEATH_SEEKER,), frozenset({seat})))


# --- the captain's successor (A5) ----------------------------------------------------------


def successor_due(state: GameState) -> bool:
    return state.successor_due is not None


def successor_named(state: GameState) -> bool:
    return state.successor_due is None


def check_name_successor(state: GameState, cmd: NameSuccessor) -> Rejection | None:
    if state.phase is not Phase.SUCCESSION or state.successor_due != cmd.actor:
        return reject(Rej.NOT_CAPTAIN)
    if cmd.target == cmd.actor:
        return reject(Rej.TARGET_SELF)
    return _living_target(state, cmd.target)


def name_successor(tx: Tx, cmd: NameSuccessor) -> None:
    appoint(tx, cmd.target, by_lot=False)


def appoint(tx: Tx, seat: int | None, *, by_lot: bool) -> None:
    tx.change(captain=seat, successor_due=None)
    if seat is not None:
        tx.emit(Ev.SUCCESSOR_NAMED, Audience.public(), captain=seat, by_lot=by_lot)


def successor_default(tx: Tx) -> None:
    """The dead captain named nobody in time (or left the game): the lot names one."""
    if tx.state.successor_due is None:
        return
    living = [p.seat for p in tx.state.living()]
    appoint(tx, tx.rng.choice(living) if living else None, by_lot=True)


# --- leaving -------------------------------------------------------------------------------


def check_leave(state: GameState, cmd: Leave) -> Rejection | None:
    return None


def leave(tx: Tx, cmd: Leave) -> None:
    """A player who leaves dies and is revealed; a captain who leaves cannot name anyone,
    so the lot does at once."""
    me = tx.state.player(cmd.actor)
    tx.put_player(evolve(me, left=True))
    dead = kill(tx, [cmd.actor])
    tx.emit(Ev.PLAYER_LEFT, Audience.public(), seat=cmd.actor, dead=death_list(tx, dead))
    if tx.state.successor_due == cmd.actor:
        successor_default(tx)
