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

from collections.abc import Callable, Sequence

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


class CommandGroup:
    """Candidates of one kind, and the filter that says which of them `validate` accepts
    now (only for this group's candidates, in the state the group was made for).

    Plain slotted classes, no closures: a bot builds the groups of its seat at every turn
    and looks into few of them, so building one must cost next to nothing."""

    __slots__ = ("kind",)
    kind: str

    def candidates(self) -> list[Command]:
        """A fresh list of this group's candidates, not yet filtered."""
        raise NotImplementedError

    def allowed(self, command: Command) -> bool:
        """Whether `validate` accepts this candidate of the group."""
        raise NotImplementedError


class _AbilityGroup(CommandGroup):
    """A role's ability whose `available` passed: only the target is left to check (what
    `Ability.check` asks after `available`)."""

    __slots__ = ("_ability", "_player", "_state")

    def __init__(self, state: GameState, player: Player, ability: Ability) -> None:
        self.kind = ability.kind.value
        self._state = state
        self._player = player
        self._ability = ability

    def candidates(self) -> list[Command]:
        seat, kind = self._player.seat, self._ability.kind
        return [
            UseAbility(seat, kind, t) for t in self._ability.candidates(self._state, self._player)
        ]

    def allowed(self, command: Command) -> bool:
        assert isinstance(command, UseAbility)
        player, ability, state = self._player, self._ability, self._state
        if not player.alive or spec_of(player).ability(ability.kind) is not ability:
            return False  # refused to the dead; a second ability of one kind is never reached
        target = command.target
        if target is None:
            return ability.allows_nobody
        if not state.has_seat(target):
            return False
        return ability.check_target(state, player, target) is None


class _RuleGroup(CommandGroup):
    """Commands of the day and the calls: the command's own check, the skeleton's questions
    (running game, a seat, alive where needed) answered once for the group."""

    __slots__ = ("_make", "_player", "_state", "_targets")

    def __init__(
        self,
        kind: str,
        state: GameState,
        player: Player,
        make: Callable[[int, int | None], Command],
        targets: Sequence[int | None],
    ) -> None:
        self.kind = kind
        self._state = state
        self._player = player
        self._make = make
        self._targets = targets

    def candidates(self) -> list[Command]:
        make, seat = self._make, self._player.seat
        return [make(seat, t) for t in self._targets]

    def allowed(self, command: Command) -> bool:
        if not self._player.alive and needs_living_actor(type(command)):
            return False
        return check_seated(self._state, command) is None


def _nominate(seat: int, target: int | None) -> Command:
    assert target is not None
    return Nominate(seat, target)


def _vote(seat: int, target: int | None) -> Command:
    return Vote(seat, target)


def _place_call(seat: int, target: int | None) -> Command:
    assert target is not None
    return PlaceCall(seat, target)


def _answer(seat: int, accept: int | None) -> Command:
    return AnswerCall(seat, accept=bool(accept))


def _interject(seat: int, _: int | None) -> Command:
    return Interject(seat)


def _hang_up(seat: int, _: int | None) -> Command:
    return HangUp(seat)


def _toggle(seat: int, _: int | None) -> Command:
    return ToggleCallMode(seat)


_ONCE: tuple[int | None] = (None,)
_YES_NO: tuple[int, int] = (1, 0)


def command_groups(state: GameState, seat: int) -> list[CommandGroup]:
    if state.phase is Phase.OVER or not state.has_seat(seat):
        return []
    player = state.player(seat)
    seats = range(1, len(state.players) + 1)
    groups: list[CommandGroup] = [
        _AbilityGroup(state, player, ability)
        for ability in spec_of(player).abilities
        if ability.available(state, player) is None
    ]
    if state.phase is Phase.DAY:
        groups.append(_RuleGroup("nominate", state, player, _nominate, seats))
    if state.phase is Phase.VOTE and state.day is not None:
        groups.append(_RuleGroup("vote", state, player, _vote, (None, *state.day.nominees)))
    groups.append(_RuleGroup("interject", state, player, _interject, _ONCE))
    if state.call_of(seat) is None:
        groups.append(_RuleGroup("call", state, player, _place_call, seats))
    else:
        groups.append(_RuleGroup("answer", state, player, _answer, _YES_NO))
        groups.append(_RuleGroup("hang_up", state, player, _hang_up, _ONCE))
        groups.append(_RuleGroup("toggle", state, player, _toggle, _ONCE))
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
