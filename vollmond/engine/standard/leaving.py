"""Leaving a running game: the house is abandoned like a death, with the role revealed.

A seat cannot stay empty in a game of hidden roles without stalling it (votes waited for,
night room votes missing); revealing the role keeps the table's information honest.
"""

from __future__ import annotations

from vollmond.engine.core import Audience, Rejection
from vollmond.engine.standard.codes import Ev
from vollmond.engine.standard.commands import Leave
from vollmond.engine.standard.deaths import death_list, kill
from vollmond.engine.standard.state import GameState
from vollmond.engine.standard.tx import Tx


def check_leave(state: GameState, cmd: Leave) -> Rejection | None:
    return None


def leave(tx: Tx, cmd: Leave) -> None:
    dead = kill(tx, [cmd.actor])
    tx.emit(Ev.PLAYER_LEFT, Audience.public(), seat=cmd.actor, dead=death_list(tx, dead))
