"""Every command a seat may give right now.

Candidates come in groups (one per kind of action) so that a bot can pick a kind first and
only then look for a valid target. The questions every candidate of a group shares are asked
once per group: is the game running, is the seat alive where the command needs it, and for a
role's ability whether it can be used now at all (`available`). Each candidate then only
passes the group's cheap filter (`allowed`): the ability's target check, or the command's own
check without the common skeleton. `allowed` agrees with `validate` on every candidate of its
group (a property test holds them together), so menus (phone, browser) and bots can never
offer something the rules would refuse.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from vollmond.engine.standard.abilities.base import Ability
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
from vollmond.engine.standard.rules import check_seated, needs_living_actor
from vollmond.engine.standard.state import GameState, Player
from vollmond.engine.standard.types import ActionKind, Phase


@dataclass(frozen=True, slots=True)
class CommandGroup:
    """Candidates of one kind, and the filter that says which of them `validate` accepts
    now (only for this group's candidates, in the state the group was made for)."""

    kind: str
    candidates: Callable[[], Iterable[Command]]
    allowed: Callable[[Command], bool]


def _never(command: Command) -> bool:
    return False


def _checked(state: GameState, alive: bool, command_type: type) -> Callable[[Command], bool]:
    """The filter of a non-ability group: the command's own check, the skeleton's answered."""
    if not alive and needs_living_actor(command_type):
        return _never
    return lambda command: check_seated(state, command) is None


def _ability_filter(
    state: GameState, player: Player, ability: Ability
) -> Callable[[Command], bool]:
    """The filter of an ability group: `available` has passed, so only the target is left
    (`Ability.check` after its `available`)."""
    if not player.alive or spec_of(player).ability(ability.kind) is not ability:
        return _never  # refused to the dead; a second ability of one kind is never reached

    def allowed(command: Command) -> bool:
        assert isinstance(command, UseAbility)
        target = command.target
        if target is None:
            return ability.allows_nobody
        if not state.has_seat(target):
            return False
        return ability.check_target(state, player, target) is None

    return allowed


def command_groups(state: GameState, seat: int) -> list[CommandGroup]:
    if state.phase is Phase.OVER or not state.has_seat(seat):
        return []
    player = state.player(seat)
    alive = player.alive
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
                    _ability_filter(state, player, ability),
                )
            )
    if state.phase is Phase.DAY:
        groups.append(
            CommandGroup(
                "nominate",
                lambda: (Nominate(seat, t) for t in seats),
                _checked(state, alive, Nominate),
            )
        )
    if state.phase is Phase.VOTE and state.day is not None:
        nominees = state.day.nominees
        groups.append(
            CommandGroup(
                "vote",
                lambda: (Vote(seat, t) for t in (None, *nominees)),
                _checked(state, alive, Vote),
            )
        )
    groups.append(
        CommandGroup("interject", lambda: (Interject(seat),), _checked(state, alive, Interject))
    )
    if state.call_of(seat) is None:
        groups.append(
            CommandGroup(
                "call",
                lambda: (PlaceCall(seat, t) for t in seats),
                _checked(state, alive, PlaceCall),
            )
        )
    else:
        groups.append(
            CommandGroup(
                "answer",
                lambda: (AnswerCall(seat, accept=True), AnswerCall(seat, accept=False)),
                _checked(state, alive, AnswerCall),
            )
        )
        groups.append(
            CommandGroup("hang_up", lambda: (HangUp(seat),), _checked(state, alive, HangUp))
        )
        groups.append(
            CommandGroup(
                "toggle", lambda: (ToggleCallMode(seat),), _checked(state, alive, ToggleCallMode)
            )
        )
    return groups


def legal_actions(state: GameState, seat: int) -> list[Command]:
    return [
        cmd
        for group in command_groups(state, seat)
        for cmd in group.candidates()
        if group.allowed(cmd)
    ]


def ability_targets(state: GameState, seat: int, kind: ActionKind) -> list[int | None]:
    """The targets a seat may choose for one ability now (for menus and the browser)."""
    return [
        cmd.target
        for cmd in legal_actions(state, seat)
        if isinstance(cmd, UseAbility) and cmd.kind is kind
    ]
