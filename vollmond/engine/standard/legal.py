"""Every command a seat may give right now.

Built by asking `validate` about each candidate, so menus (phone, browser) and bots can never
offer something the rules would refuse. Candidates come in groups (one per kind of action) so
that a bot can pick a kind first and only then look for a valid target.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

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
from vollmond.engine.standard.properties import spec_of
from vollmond.engine.standard.rules import validate
from vollmond.engine.standard.state import GameState
from vollmond.engine.standard.types import ActionKind, Phase


@dataclass(frozen=True, slots=True)
class CommandGroup:
    """Candidates of one kind; not yet validated."""

    kind: str
    candidates: Callable[[], Iterable[Command]]


def command_groups(state: GameState, seat: int) -> list[CommandGroup]:
    if state.phase is Phase.OVER or not state.has_seat(seat):
        return []
    player = state.player(seat)
    seats = range(1, len(state.players) + 1)
    groups: list[CommandGroup] = []
    for ability in spec_of(player).abilities:
        if ability.available(state, player) is None:
            groups.append(
                CommandGroup(
                    ability.kind.value,
                    lambda a=ability: (  # type: ignore[misc]
                        UseAbility(seat, a.kind, t) for t in a.candidates(state, player)
                    ),
                )
            )
    if state.phase is Phase.DAY:
        groups.append(CommandGroup("nominate", lambda: (Nominate(seat, t) for t in seats)))
    if state.phase is Phase.VOTE and state.day is not None:
        nominees = state.day.nominees
        groups.append(CommandGroup("vote", lambda: (Vote(seat, t) for t in (None, *nominees))))
    groups.append(CommandGroup("interject", lambda: (Interject(seat),)))
    if state.call_of(seat) is None:
        groups.append(CommandGroup("call", lambda: (PlaceCall(seat, t) for t in seats)))
    else:
        groups.append(
            CommandGroup(
                "answer", lambda: (AnswerCall(seat, accept=True), AnswerCall(seat, accept=False))
            )
        )
        groups.append(CommandGroup("hang_up", lambda: (HangUp(seat),)))
        groups.append(CommandGroup("toggle", lambda: (ToggleCallMode(seat),)))
    return groups


def legal_actions(state: GameState, seat: int) -> list[Command]:
    return [
        cmd
        for group in command_groups(state, seat)
        for cmd in group.candidates()
        if validate(state, cmd) is None
    ]


def ability_targets(state: GameState, seat: int, kind: ActionKind) -> list[int | None]:
    """The targets a seat may choose for one ability now (for menus and the browser)."""
    return [
        cmd.target
        for cmd in legal_actions(state, seat)
        if isinstance(cmd, UseAbility) and cmd.kind is kind
    ]
