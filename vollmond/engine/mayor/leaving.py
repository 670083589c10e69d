"""A player who leaves for good: it counts as a death, with the role revealed."""

from __future__ import annotations

from vollmond.engine.core import Audience, Rejection
from vollmond.engine.mayor.codes import Ev
from vollmond.engine.mayor.commands import Leave
from vollmond.engine.mayor.deaths import announce_vacancy, remove
from vollmond.engine.mayor.floors import after_leaving
from vollmond.engine.mayor.state import MayorState
from vollmond.engine.mayor.tx import Tx
from vollmond.engine.mayor.types import Status


def check_leave(state: MayorState, cmd: Leave) -> Rejection | None:
    return None


def leave(tx: Tx, cmd: Leave) -> None:
    removal = remove(tx, [cmd.actor], Status.DEAD)
    tx.emit(Ev.PLAYER_LEFT, Audience.public(), seat=cmd.actor, dead=removal.dead)
    announce_vacancy(tx, removal)
    for entry in removal.out:
        seat = entry["seat"]
        assert isinstance(seat, int)
        after_leaving(tx, seat)
