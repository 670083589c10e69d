"""Timed floors (B1 introductions, B3 defences): one speaker at a time, in turn.

Like the standard rule set's interjection (S19): the speaker is announced, has the market
place for `seconds` (the others are ducked in the routing table), and a FloorTimeout ends the
turn; the speaker may end it early (YieldFloor). The stage is over when the queue is empty.
"""

from __future__ import annotations

from collections.abc import Sequence

from vollmond.engine.core import Audience, Rejection
from vollmond.engine.mayor.codes import Ev, Rej
from vollmond.engine.mayor.commands import FloorTimeout, YieldFloor
from vollmond.engine.mayor.deaths import drop_from_floor
from vollmond.engine.mayor.state import Floor, MayorState
from vollmond.engine.mayor.tx import Tx
from vollmond.engine.mayor.types import Stage


def open_floors(tx: Tx, speakers: Sequence[int], purpose: Stage, seconds: float) -> None:
    tx.change(floor=Floor(None, tuple(speakers), purpose, seconds))
    give_next(tx)


def give_next(tx: Tx) -> None:
    """The next living speaker in the queue gets the floor; none left: the floors are done."""
    floor = tx.state.floor
    if floor is None:
        return
    living = tx.state.living_seats()
    queue = [s for s in floor.queue if s in living]
    if not queue:
        tx.change(floor=Floor(None, (), floor.purpose, floor.seconds))
        return
    speaker, rest = queue[0], tuple(queue[1:])
    tx.change(floor=Floor(speaker, rest, floor.purpose, floor.seconds))
    tx.emit(
        Ev.FLOOR_GIVEN,
        Audience.public(),
        seat=speaker,
        seconds=floor.seconds,
        purpose=floor.purpose.value,
    )
    tx.after(floor.seconds, FloorTimeout(speaker, tx.state.phase_seq))


def floors_done(state: MayorState) -> bool:
    floor = state.floor
    return floor is None or (floor.speaker is None and not floor.queue)


def _release(tx: Tx, seat: int) -> None:
    tx.emit(Ev.FLOOR_RELEASED, Audience.public(), seat=seat)
    give_next(tx)


def check_timeout(state: MayorState, cmd: FloorTimeout) -> Rejection | None:
    floor = state.floor
    if floor is None or floor.speaker != cmd.seat or state.phase_seq != cmd.phase_seq:
        return Rejection(Rej.STALE_TIMER)
    return None


def timeout(tx: Tx, cmd: FloorTimeout) -> None:
    _release(tx, cmd.seat)


def check_yield(state: MayorState, cmd: YieldFloor) -> Rejection | None:
    floor = state.floor
    if floor is None or floor.speaker != cmd.actor:
        return Rejection(Rej.NOT_YOUR_FLOOR)
    return None


def yield_floor(tx: Tx, cmd: YieldFloor) -> None:
    _release(tx, cmd.actor)


def after_leaving(tx: Tx, seat: int) -> None:
    """A speaker who left the game loses the floor; the next one gets it."""
    if drop_from_floor(tx):
        _release(tx, seat)
