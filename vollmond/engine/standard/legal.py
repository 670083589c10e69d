"""Every command a seat may give right now.

Built by asking `validate` about each candidate, so menus (phone, browser) and bots can never
offer something the rules would refuse.
"""

from __future__ import annotations

from collections.abc import Iterator

from vollmond.engine.standard.commands import (
    AnswerCall,
    Command,
    HangUp,
    Interject,
    Nominate,
    PlaceCall,
    ToggleCallMode,
    UseAbility,
    Vote,
)
from vollmond.engine.standard.queries import spec_of
from vollmond.engine.standard.rules import validate
from vollmond.engine.standard.state import GameState
from vollmond.engine.standard.types import ActionKind, Phase


def _candidates(state: GameState, seat: int) -> Iterator[Command]:
    player = state.player(seat)
    for ability in spec_of(player).abilities:
        if ability.available(state, player) is None:
            for target in ability.candidates(state, player):
                yield UseAbility(seat, ability.kind, target)
    others = range(1, len(state.players) + 1)
    if state.phase is Phase.DAY:
        yield from (Nominate(seat, t) for t in others)
    if state.phase is Phase.VOTE and state.day is not None:
        yield Vote(seat, None)
        yield from (Vote(seat, t) for t in state.day.nominees)
    yield Interject(seat)
    if state.call_of(seat) is None:
        yield from (PlaceCall(seat, t) for t in others)
    else:
        yield AnswerCall(seat, accept=True)
        yield AnswerCall(seat, accept=False)
        yield HangUp(seat)
        yield ToggleCallMode(seat)


def legal_actions(state: GameState, seat: int) -> list[Command]:
    if state.phase is Phase.OVER or not state.has_seat(seat):
        return []
    return [cmd for cmd in _candidates(state, seat) if validate(state, cmd) is None]


def ability_targets(state: GameState, seat: int, kind: ActionKind) -> list[int | None]:
    """The targets a seat may choose for one ability now (for menus and the browser)."""
    return [
        cmd.target
        for cmd in legal_actions(state, seat)
        if isinstance(cmd, UseAbility) and cmd.kind is kind
    ]
