"""What everyone may do by day: nominate (D2), vote (D3), interject (S19)."""

from __future__ import annotations

from vollmond.engine.core import Audience, Rejection, evolve
from vollmond.engine.standard.abilities.base import living_target, reject
from vollmond.engine.standard.codes import Ev, Rej
from vollmond.engine.standard.commands import FloorTimeout, Interject, Nominate, Vote
from vollmond.engine.standard.state import GameState
from vollmond.engine.standard.tx import Tx
from vollmond.engine.standard.types import Phase

INTERJECT = "interject"
NOMINATE = "nominate"

# Members read by every check, as module constants (types.py: `Phase.DAY` is slow on 3.11).
_DAY = Phase.DAY
_VOTE = Phase.VOTE
_DAY_TIME = (Phase.MORNING, Phase.DAY, Phase.VOTE)
_VOTE_CAST = Ev.VOTE_CAST
_NOMINATED = Ev.NOMINATED


def check_nominate(state: GameState, cmd: Nominate) -> Rejection | None:
    if state.phase is not _DAY:
        return reject(Rej.WRONG_PHASE)
    if not state.has_seat(cmd.target):
        return reject(Rej.TARGET_UNKNOWN, target=cmd.target)
    refused = living_target(state, state.player(cmd.actor), cmd.target, allow_self=False)
    if refused is not None:
        return refused
    day = state.today()
    if cmd.actor in day.nominations or (cmd.actor, NOMINATE) in day.used:
        return reject(Rej.ALREADY_ACTED)
    if cmd.target in day.nominations.values():
        return reject(Rej.ALREADY_NOMINATED, target=cmd.target)
    return None


def nominate(tx: Tx, cmd: Nominate) -> None:
    day = tx.state.today()
    nominations = {**day.nominations, cmd.actor: cmd.target}
    used = day.used | {(cmd.actor, NOMINATE)}  # once, even if the nominee dies (D2)
    tx.change(day=evolve(day, nominations=nominations, used=used))
    tx.emit(_NOMINATED, Audience.public(), by=cmd.actor, nominee=cmd.target)


def check_vote(state: GameState, cmd: Vote) -> Rejection | None:
    if state.phase is not _VOTE:
        return reject(Rej.WRONG_PHASE)
    day = state.today()
    if cmd.actor in day.transfers:
        return reject(Rej.VOTE_GIVEN_AWAY)
    if cmd.actor in day.votes:
        return reject(Rej.ALREADY_VOTED)
    if cmd.target is not None and cmd.target not in day.nominations.values():  # the nominees
        return reject(Rej.NOT_NOMINATED, target=cmd.target)
    return None


def vote(tx: Tx, cmd: Vote) -> None:
    """Who voted is public at once; for whom, only in the result."""
    day = tx.state.today()
    day = evolve(day, votes={**day.votes, cmd.actor: cmd.target})
    tx.change(day=day)
    tx.emit(_VOTE_CAST, Audience.public(), voter=cmd.actor)


def check_interject(state: GameState, cmd: Interject) -> Rejection | None:
    if state.phase not in _DAY_TIME:
        return reject(Rej.WRONG_PHASE)
    day = state.today()
    if (cmd.actor, INTERJECT) in day.used:
        return reject(Rej.ALREADY_USED)
    if day.floor is not None:
        return reject(Rej.FLOOR_TAKEN, seat=day.floor)
    return None


def interject(tx: Tx, cmd: Interject) -> None:
    """S19: the player is announced and has the floor for a short turn."""
    day = tx.state.today()
    tx.change(day=evolve(day, used=day.used | {(cmd.actor, INTERJECT)}, floor=cmd.actor))
    seconds = tx.state.options.durations.floor_s
    tx.emit(Ev.INTERJECTION, Audience.public(), seat=cmd.actor, seconds=seconds)
    tx.after(seconds, FloorTimeout(cmd.actor, tx.state.phase_seq))


def check_floor_timeout(state: GameState, cmd: FloorTimeout) -> Rejection | None:
    if state.day is None or state.day.floor != cmd.seat or state.phase_seq != cmd.phase_seq:
        return reject(Rej.STALE_TIMER)
    return None


def release_floor(tx: Tx, cmd: FloorTimeout) -> None:
    tx.change(day=evolve(tx.state.today(), floor=None))
    tx.emit(Ev.FLOOR_RELEASED, Audience.public(), seat=cmd.seat)
