"""Every game move a seat may make right now (menus and bots).

Built by asking `validate` about each candidate, so a menu can never offer what the rules
would refuse. Chat (`Say`) and leaving (`Leave`) are always open to a seat and not listed.
"""

from __future__ import annotations

from vollmond.engine.mayor.commands import (
    Accuse,
    ChooseVictim,
    Command,
    Stand,
    Vote,
    YieldFloor,
)
from vollmond.engine.mayor.rules import validate
from vollmond.engine.mayor.state import MayorState
from vollmond.engine.mayor.types import Stage


def _candidates(state: MayorState, seat: int) -> list[Command]:
    seats = range(1, len(state.players) + 1)
    stage = state.stage
    out: list[Command] = []
    if stage is Stage.CANDIDACY:
        out += [Stand(seat, stand=True), Stand(seat, stand=False)]
    if state.ballot is not None:
        out += [Vote(seat, t) for t in state.ballot.candidates]
    if stage is Stage.ACCUSATIONS:
        out += [Accuse(seat, t) for t in seats]
    if stage is Stage.NIGHT:
        out += [ChooseVictim(seat, t) for t in seats]
    if state.floor is not None and state.floor.speaker == seat:
        out.append(YieldFloor(seat))
    return out


def legal_commands(state: MayorState, seat: int) -> list[Command]:
    if state.is_over or not state.has_seat(seat):
        return []
    return [cmd for cmd in _candidates(state, seat) if validate(state, cmd) is None]
