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

import random
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from vollmond.engine.core import Json, builder
from vollmond.engine.kit.draws import below, pick
from vollmond.engine.standard.abilities.base import Ability
from vollmond.engine.standard.calls import DAY_CALL_PHASES
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
from vollmond.engine.standard.day import NOMINATE
from vollmond.engine.standard.menus import Interned, describe, shared_targets
from vollmond.engine.standard.properties import (
    bonded_partners,
    bonds_known,
    in_night_room,
    spec_of,
)
from vollmond.engine.standard.roles.base import RoleSpec
from vollmond.engine.standard.rules import check_seated, needs_living_actor
from vollmond.engine.standard.state import GameState, Player
from vollmond.engine.standard.types import ActionKind, Phase

# Members read at every turn, as module constants (types.py: `Phase.OVER` is slow on 3.11).
_OVER = Phase.OVER
_NIGHT = Phase.NIGHT


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

    def legal(self) -> Sequence[Command]:
        """The candidates `validate` accepts, in candidate order."""
        return [cmd for cmd in self.candidates() if self.allowed(cmd)]

    def legal_described(self) -> tuple[Sequence[Command], Sequence[Json]]:
        """`legal` and each command's JSON (`describe`), for the view's menu."""
        legal = self.legal()
        return legal, [describe(cmd) for cmd in legal]

    def draw(self, rng: random.Random) -> Command | None:
        """One of `legal`, each equally likely (None if there is none): for bots."""
        legal = self.legal()
        return pick(rng, legal) if legal else None


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

    def draw(self, rng: random.Random) -> Command | None:
        """A random candidate until one is allowed (`_draw_target`)."""
        return _draw_target(self._state, self._player, self._ability, rng)

    def legal(self) -> Sequence[Command]:
        """`allowed` on every candidate, with its questions about the actor asked once."""
        player, ability, state = self._player, self._ability, self._state
        if not player.alive or spec_of(player).ability(ability.kind) is not ability:
            return []
        seat, kind, check_target = player.seat, ability.kind, ability.check_target
        return [
            UseAbility(seat, kind, target)
            for target in ability.candidates(state, player)
            if (ability.allows_nobody if target is None else state.has_seat(target))
            and (target is None or check_target(state, player, target) is None)
        ]


_use_ability: Callable[[int, ActionKind, int | None], UseAbility] = builder(UseAbility)
"""`UseAbility` without its `__init__` (core.builder): bots make one per ability they use."""


def _draw_target(
    state: GameState, player: Player, ability: Ability, rng: random.Random
) -> Command | None:
    """A random candidate of an available ability until one is allowed, each tried at most
    once: each allowed candidate is as likely as with `legal`, but a target is usually found
    after a try or two instead of checking all."""
    kind = ability.kind
    if not player.alive or player.spec.ability(kind) is not ability:
        return None
    check_target = ability.check_target
    if type(ability).candidates is Ability.candidates:
        # The usual ones (nobody where allowed, then every seat), copied from a kept tuple:
        # each is a seat, so `has_seat` needs no asking.
        seats = len(state.players)
        numbered = _NUMBERED.get(seats) or _numbered(seats)
        left: list[int | None] = [None, *numbered] if ability.allows_nobody else [*numbered]
        seated = True
    else:
        left = list(ability.candidates(state, player))
        seated = False
    while left:
        index = below(rng, len(left))
        target = left[index]
        if target is None:
            if ability.allows_nobody:
                return _use_ability(player.seat, kind, None)
        elif (seated or state.has_seat(target)) and check_target(state, player, target) is None:
            return _use_ability(player.seat, kind, target)
        left[index] = left[-1]
        left.pop()
    return None


_NUMBERED: dict[int, tuple[int, ...]] = {}


def _numbered(seats: int) -> tuple[int, ...]:
    """The seats of a table, 1..`seats`, kept per table size (a draw copies them)."""
    made = _NUMBERED[seats] = tuple(range(1, seats + 1))
    return made


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


Rows = tuple[list[Command], list[Json]]
Picker = Callable[[Sequence[Any]], Sequence[Any]]


class _MenuGroup(_RuleGroup):
    """A long group (nominate, call, vote) whose legal commands are a selection of the
    actor's interned rows (menus.py) by targets worked out once per state: `_menu` gives the
    rows and the selection, or None when the actor may not give this kind of command now."""

    __slots__ = ()

    def _menu(self) -> tuple[Rows, Picker] | None:
        raise NotImplementedError

    def legal(self) -> Sequence[Command]:
        menu = self._menu()
        return () if menu is None else menu[1](menu[0][0])

    def legal_described(self) -> tuple[Sequence[Command], Sequence[Json]]:
        menu = self._menu()
        if menu is None:
            return (), ()
        (commands, described), select = menu
        return select(commands), select(described)


class _NominateGroup(_MenuGroup):
    """Nominations by day (D2): any living seat nobody has nominated yet, but oneself, if
    the actor lives and has not nominated today — what `check_nominate` asks, with the
    target's part answered once per state for every seat (menus.py)."""

    __slots__ = ()

    def __init__(self, state: GameState, player: Player) -> None:
        super().__init__("nominate", state, player, _nominate, range(1, len(state.players) + 1))

    def draw(self, rng: random.Random) -> Command | None:
        return _draw_nomination(self._state, self._player, rng)

    def _menu(self) -> tuple[Rows, Picker] | None:
        state, player = self._state, self._player
        day = state.today()
        seat = player.seat
        if not player.alive or seat in day.nominations or (seat, NOMINATE) in day.used:
            return None
        nominable = shared_targets(state).nominable
        return _NOMINATIONS.rows(seat, len(state.players)), partial(nominable.pick, without=seat)


class _CallGroup(_MenuGroup):
    """Calls to place (C1-C9) for a seat not in a call: any other living seat if the
    actor may call at all now, else (at night) only a partner (twin, lover) — what
    `check_place` asks, with the living seats worked out once per state (menus.py)."""

    __slots__ = ()

    def __init__(self, state: GameState, player: Player) -> None:
        super().__init__("call", state, player, _place_call, range(1, len(state.players) + 1))

    def draw(self, rng: random.Random) -> Command | None:
        return _draw_call(self._state, self._player, rng)

    def _menu(self) -> tuple[Rows, Picker] | None:
        state, player = self._state, self._player
        scope = _call_scope(state, player)
        if scope is None:
            return None
        seat = player.seat
        rows = _CALLS.rows(seat, len(state.players))
        anyone, partners = scope
        if not anyone:
            return rows, partial(_select, partners)
        return rows, partial(shared_targets(state).living.pick, without=seat)


def _call_scope(state: GameState, player: Player) -> tuple[bool, list[int]] | None:
    """Whom `player` may call now, as `check_place` judges it: None, nobody; (True, []), any
    other living seat; (False, partners), at night past what the rules allow, only these
    living partners (twin, lover). The menu and the bots' draw both ask here."""
    if not player.alive:
        return None
    seat, settings, phase = player.seat, state.options.calls, state.phase
    if phase in DAY_CALL_PHASES:
        if not (settings.enabled and settings.by_day):
            return None
    elif phase is not _NIGHT:
        return None
    elif not (
        settings.enabled
        and (settings.evil_may_call or not in_night_room(player))
        and state.calls_placed.get(seat, 0) < settings.per_night
    ):
        return False, [t for t in _partners(state, player) if state.player(t).alive]
    return True, []


def _select(targets: list[int], rows: Sequence[Any]) -> list[Any]:
    return [rows[t] for t in targets]


class _VoteGroup(_MenuGroup):
    """The evening vote (D3): abstain or any nominee, if the actor lives, has not voted and
    has not given the vote away (S15) — what `check_vote` asks; the ballot is worked out
    once per state (menus.py)."""

    __slots__ = ()

    def __init__(self, state: GameState, player: Player) -> None:
        super().__init__("vote", state, player, _vote, ())

    def candidates(self) -> list[Command]:
        seat = self._player.seat
        return [_vote(seat, target) for target in (None, *self._state.today().nominees)]

    def draw(self, rng: random.Random) -> Command | None:
        return _draw_vote(self._state, self._player, rng)

    def _menu(self) -> tuple[Rows, Picker] | None:
        state, player = self._state, self._player
        day = state.today()
        seat = player.seat
        if not player.alive or seat in day.transfers or seat in day.votes:
            return None
        return _VOTES.rows(seat, len(state.players)), shared_targets(state).ballot.pick


def _partners(state: GameState, player: Player) -> list[int]:
    """The seats `is_partner_call` lets this player call at night, in seat order."""
    if bonds_known(state):
        return sorted(bonded_partners(state, player))
    if player.lover:
        return [p.seat for p in state.players if p.lover and p.seat != player.seat]
    return []


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


Draw = Callable[[GameState, Player, random.Random], Command | None]
"""A kind's draw for a bot: one of its legal commands now, each equally likely, or None."""


class GroupKind:
    """A kind of action a seat may have in some phase, its command's type, and how to make
    its group now: the maker gives None when the group does not exist in this state (an
    ability whose `available` refuses, a vote without a day). `draw` is what a bot asks:
    the group's `draw` without making the group (the long kinds and the abilities draw
    straight from the state, the same draws as the group would make)."""

    __slots__ = ("command", "draw", "kind", "make")

    def __init__(
        self,
        kind: str,
        command: type,
        make: Callable[[GameState, Player], CommandGroup | None],
        draw: Draw | None = None,
    ) -> None:
        self.kind = kind
        self.command = command
        self.make = make
        self.draw: Draw = draw if draw is not None else partial(_made_draw, make)


def _made_draw(
    make: Callable[[GameState, Player], CommandGroup | None],
    state: GameState,
    player: Player,
    rng: random.Random,
) -> Command | None:
    group = make(state, player)
    return None if group is None else group.draw(rng)


def _draw_nomination(state: GameState, player: Player, rng: random.Random) -> Command | None:
    """`_NominateGroup`'s draw: a living seat nobody nominated yet, not the actor (in seat
    order, as the shared targets list them), if the actor may nominate."""
    day = state.today()
    seat = player.seat
    nominations = day.nominations
    if not player.alive or seat in nominations or (seat, NOMINATE) in day.used:
        return None
    nominated = set(nominations.values())
    targets = [
        p.seat for p in state.players if p.alive and p.seat != seat and p.seat not in nominated
    ]
    if not targets:
        return None
    target = targets[below(rng, len(targets))]
    return _NOMINATIONS.rows(seat, len(state.players))[0][target]


def _draw_vote(state: GameState, player: Player, rng: random.Random) -> Command | None:
    """`_VoteGroup`'s draw: abstain or a nominee (the ballot in order), if the actor may
    vote."""
    day = state.day
    if day is None:
        return None
    seat = player.seat
    if not player.alive or seat in day.transfers or seat in day.votes:
        return None
    nominees = day.nominees
    index = below(rng, len(nominees) + 1)
    return _VOTES.rows(seat, len(state.players))[0][nominees[index - 1] if index else 0]


def _draw_call(state: GameState, player: Player, rng: random.Random) -> Command | None:
    """`_CallGroup`'s draw: another living seat, or at night only a partner (`_call_scope`)."""
    scope = _call_scope(state, player)
    if scope is None:
        return None
    seat = player.seat
    anyone, partners = scope
    targets = [p.seat for p in state.players if p.alive and p.seat != seat] if anyone else partners
    if not targets:
        return None
    target = targets[below(rng, len(targets))]
    return _CALLS.rows(seat, len(state.players))[0][target]


class SeatMenu:
    """The kinds of action a seat of one role has in one phase, in or out of a call, alive
    or out of the game, in group order: the same for every state with those, so it is made
    once and shared (`seat_menu`). Bots draw their keenness per kind on it and make only the
    groups they want (bots.py)."""

    __slots__ = ("kinds",)

    def __init__(self, kinds: tuple[GroupKind, ...]) -> None:
        self.kinds = kinds


def _ability_kind(ability: Ability) -> GroupKind:
    def make(state: GameState, player: Player) -> CommandGroup | None:
        if ability.available(state, player) is not None:
            return None
        return _AbilityGroup(state, player, ability)

    def draw(state: GameState, player: Player, rng: random.Random) -> Command | None:
        if ability.available(state, player) is not None:
            return None
        return _draw_target(state, player, ability, rng)

    return GroupKind(ability.kind.value, UseAbility, make, draw)


def _vote_group(state: GameState, player: Player) -> CommandGroup | None:
    return None if state.day is None else _VoteGroup(state, player)


def _rule_kind(
    kind: str,
    command: type,
    make: Callable[[int, int | None], Command],
    targets: Sequence[int | None],
) -> GroupKind:
    def group(state: GameState, player: Player) -> CommandGroup:
        return _RuleGroup(kind, state, player, make, targets)

    return GroupKind(kind, command, group)


_NOMINATE_KIND = GroupKind("nominate", Nominate, _NominateGroup, _draw_nomination)
_VOTE_KIND = GroupKind("vote", Vote, _vote_group, _draw_vote)
_CALL_KIND = GroupKind("call", PlaceCall, _CallGroup, _draw_call)
_INTERJECT_KIND = _rule_kind("interject", Interject, _interject, _ONCE)
_IN_CALL_KINDS = (
    _rule_kind("answer", AnswerCall, _answer, _YES_NO),
    _rule_kind("hang_up", HangUp, _hang_up, _ONCE),
    _rule_kind("toggle", ToggleCallMode, _toggle, _ONCE),
)
_MENUS: dict[tuple[int, Phase, bool, bool], tuple[RoleSpec, SeatMenu]] = {}
_NO_MENU = SeatMenu(())


def _make_menu(spec: RoleSpec, phase: Phase, in_call: bool, alive: bool) -> SeatMenu:
    # Outside its `phases` an ability is never available (Ability.available): left out.
    kinds = [_ability_kind(ability) for ability in spec.abilities if phase in ability.phases]
    if phase is Phase.DAY:
        kinds.append(_NOMINATE_KIND)
    if phase is Phase.VOTE:
        kinds.append(_VOTE_KIND)
    kinds.append(_INTERJECT_KIND)
    kinds += _IN_CALL_KINDS if in_call else (_CALL_KIND,)
    if not alive:  # the skeleton refuses the rest to a seat out of the game
        kinds = [kind for kind in kinds if not needs_living_actor(kind.command)]
    menu = SeatMenu(tuple(kinds))
    _MENUS[(id(spec), phase, in_call, alive)] = (spec, menu)  # held: its id stays its own
    return menu


MenuKey = tuple[int, Phase, bool, bool]
"""What a seat's menu depends on: its role spec (by identity: a constant of the rule set, held
by the menus' cache once it made a menu, so an id stays its own), the phase, in a call or not,
alive or not."""


def menu_key(state: GameState, seat: int) -> MenuKey | None:
    """`seat_menu`'s key for this seat now; None for no menu (the game is over, no such
    seat). The bots keep their keenness by it too, so a turn that wants nothing costs one
    lookup."""
    phase, players = state.phase, state.players
    if phase is _OVER or not 1 <= seat <= len(players):
        return None
    player = players[seat - 1]
    in_call = bool(state.calls) and state.call_of(seat) is not None
    return (id(player.spec), phase, in_call, player.alive)


def seat_menu(state: GameState, seat: int) -> SeatMenu:
    """The kinds of action this seat may have now (none once the game is over): what
    `command_groups` makes groups of, kept by `menu_key`."""
    key = menu_key(state, seat)
    if key is None:
        return _NO_MENU
    hit = _MENUS.get(key)
    if hit is not None:
        return hit[1]
    _, phase, in_call, alive = key
    return _make_menu(state.players[seat - 1].spec, phase, in_call, alive)


def command_groups(state: GameState, seat: int) -> list[CommandGroup]:
    kinds = seat_menu(state, seat).kinds
    if not kinds:
        return []
    player = state.player(seat)
    return [group for kind in kinds if (group := kind.make(state, player)) is not None]


def legal_actions(state: GameState, seat: int) -> list[Command]:
    return [cmd for group in command_groups(state, seat) for cmd in group.legal()]


def legal_menu(state: GameState, seat: int) -> tuple[tuple[Command, ...], list[Json]]:
    """`legal_actions` and each command's JSON (`describe`), as the view lists them."""
    commands: list[Command] = []
    described: list[Json] = []
    for group in command_groups(state, seat):
        legal, json = group.legal_described()
        commands += legal
        described += json
    return tuple(commands), described


_NOMINATIONS = Interned(_nominate)
_CALLS = Interned(_place_call)
_VOTES = Interned(lambda seat, target: Vote(seat, target or None))  # 0: abstain


def ability_targets(state: GameState, seat: int, kind: ActionKind) -> list[int | None]:
    """The targets a seat may choose for one ability now (for menus and the browser)."""
    return [
        cmd.target
        for cmd in legal_actions(state, seat)
        if isinstance(cmd, UseAbility) and cmd.kind is kind
    ]
