"""Every command a seat may give right now, built by asking `validate` about each
candidate, so menus and bots can never offer what the rules would refuse."""

from __future__ import annotations

from collections.abc import Iterator

from vollmond.engine.classic.commands import Act, BreakTie, Command, Elect, NameSuccessor, Vote
from vollmond.engine.classic.rules import validate
from vollmond.engine.classic.state import GameState
from vollmond.engine.classic.types import Phase


def _candidates(state: GameState, seat: int) -> Iterator[Command]:
    player = state.player(seat)
    seats = range(1, len(state.players) + 1)
    if state.phase is Phase.NIGHT:
        for ability in player.spec.abilities:
            if ability.usable(state, player) is None:
                for target, second in ability.candidates(state, player):
                    yield Act(seat, ability.kind, target, second)
    elif state.phase is Phase.ELECTION:
        yield from (Elect(seat, t) for t in seats)
    elif state.phase is Phase.DAY:
        yield Vote(seat, None)
        yield from (Vote(seat, t) for t in seats)
    elif state.phase is Phase.TIEBREAK and state.day is not None:
        yield from (BreakTie(seat, t) for t in state.day.tied)
    elif state.phase is Phase.SUCCESSION:
        yield from (NameSuccessor(seat, t) for t in seats)


def legal_actions(state: GameState, seat: int) -> list[Command]:
    """Leaving is always possible and never listed: it is not a move of the game."""
    if state.phase is Phase.OVER or not state.has_seat(seat):
        return []
    return [cmd for cmd in _candidates(state, seat) if validate(state, cmd) is None]
