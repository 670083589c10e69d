"""The game state: immutable values, replaced (never mutated) by each accepted command.

Containers inside are tuples, frozensets and dicts; a dict is never changed after the state
that holds it was built, so old states stay valid for replay checks and views.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from vollmond.engine.core import Json, evolve
from vollmond.engine.kit.kept import MISSING, Kept
from vollmond.engine.kit.seats import Seats
from vollmond.engine.standard.options import GameOptions
from vollmond.engine.standard.types import (
    ActionKind,
    CallKind,
    CallMode,
    CallStatus,
    NightStep,
    Phase,
    RoleId,
    Side,
    Trait,
)

if TYPE_CHECKING:
    from vollmond.engine.standard.roles.base import RoleSpec


class FactKind(StrEnum):
    """Private knowledge a player gained by an ability."""

    CHECK = "check"
    MEDIUM = "medium"


@dataclass(frozen=True, slots=True)
class Fact:
    kind: FactKind
    round: int
    subject: int
    evil: bool

    def to_json(self) -> dict[str, Json]:
        return {
            "kind": self.kind.value,
            "round": self.round,
            "subject": self.subject,
            "evil": self.evil,
        }


@dataclass(frozen=True, slots=True)
class RoleState:
    """What a player's role carries from night to night, typed by what it is about.

    - `charges`: uses left of a limited ability (the witch's potions, the hunter's bullets);
    - `last_targets`: whom an ability was last used on, for "not twice in a row" (S2, S6);
      a kind is absent until its first night, None when it was used on nobody;
    - `used_traits`: one-time passive effects already spent (the princess's pardon, S16).

    A role's abilities fill it when the role is dealt or taken; a stolen role keeps it (S14).
    """

    charges: dict[ActionKind, int] = field(default_factory=dict)
    last_targets: dict[ActionKind, int | None] = field(default_factory=dict)
    used_traits: frozenset[Trait] = frozenset()

    def charges_of(self, kind: ActionKind) -> int:
        return self.charges.get(kind, 0)

    def with_charges(self, kind: ActionKind, left: int) -> RoleState:
        return evolve(self, charges={**self.charges, kind: left})

    def last_target(self, kind: ActionKind) -> int | None:
        return self.last_targets.get(kind)

    def with_last_target(self, kind: ActionKind, target: int | None) -> RoleState:
        return evolve(self, last_targets={**self.last_targets, kind: target})

    def with_used(self, trait: Trait) -> RoleState:
        return evolve(self, used_traits=self.used_traits | {trait})


@dataclass(frozen=True, slots=True)
class Player:
    """A seat: its house number never changes (W2); its role may (vagabond, S14).

    The player holds the role's spec itself (a constant of the rule set), so every rule asks
    the role's properties without a registry lookup; `role` is the spec's id.
    """

    seat: int
    spec: RoleSpec
    alive: bool = True
    revealed: bool = False
    lover: bool = False
    role_state: RoleState = field(default_factory=RoleState)
    facts: tuple[Fact, ...] = ()

    @property
    def role(self) -> RoleId:
        return self.spec.id

    def with_role_state(self, role_state: RoleState) -> Player:
        return evolve(self, role_state=role_state)

    def spend(self, kind: ActionKind) -> Player:
        """One use of a limited ability is gone."""
        left = self.role_state.charges_of(kind) - 1
        return self.with_role_state(self.role_state.with_charges(kind, left))


_NOTHING: frozenset[ActionKind] = frozenset()


@dataclass(frozen=True, slots=True)
class NightState:
    number: int
    step: NightStep
    evil_votes: dict[int, int] = field(default_factory=dict)
    actions: dict[int, dict[ActionKind, int | None]] = field(default_factory=dict)
    victim_locked: bool = False
    victim: int | None = None

    def acted(self, seat: int, kind: ActionKind) -> bool:
        return kind in self.actions.get(seat, _NOTHING)  # asked for every seat's abilities

    def with_action(self, seat: int, kind: ActionKind, target: int | None) -> NightState:
        mine = {**self.actions.get(seat, {}), kind: target}
        return evolve(self, actions={**self.actions, seat: mine})

    def targets_of(self, kind: ActionKind) -> Iterator[tuple[int, int | None]]:
        for seat, acts in self.actions.items():
            if kind in acts:
                yield seat, acts[kind]


@dataclass(frozen=True, slots=True)
class DayState:
    number: int
    nominations: dict[int, int] = field(default_factory=dict)
    votes: dict[int, int | None] = field(default_factory=dict)
    transfers: dict[int, int] = field(default_factory=dict)
    used: frozenset[tuple[int, str]] = frozenset()
    floor: int | None = None

    @property
    def nominees(self) -> tuple[int, ...]:
        """The nominated seats in order. Kept by the nominations' identity: votes replace
        the day but keep its nominations (a dict never changed once a state holds it), and
        bots, the ballot and the vote stage ask after every vote."""
        nominations = self.nominations
        hit = _nominees.get(nominations)
        if hit is not MISSING:
            return hit
        return _nominees.put(nominations, tuple(sorted(set(nominations.values()))))


_nominees: Kept[dict[int, int], tuple[int, ...]] = Kept(16)


@dataclass(frozen=True, slots=True)
class Call:
    id: int
    kind: CallKind
    caller: int
    callee: int
    status: CallStatus
    modes: tuple[CallMode, CallMode] = (CallMode.STUMM, CallMode.STUMM)

    def has(self, seat: int) -> bool:
        return seat in (self.caller, self.callee)

    def other(self, seat: int) -> int:
        return self.callee if seat == self.caller else self.caller

    def mode_of(self, seat: int) -> CallMode:
        return self.modes[0] if seat == self.caller else self.modes[1]


@dataclass(frozen=True, slots=True)
class Outcome:
    sides: tuple[Side, ...]
    winners: frozenset[int]


@dataclass(frozen=True, slots=True)
class GameState(Seats[Player]):
    options: GameOptions
    players: tuple[Player, ...]
    phase: Phase
    phase_seq: int = 0
    round: int = 1
    night: NightState | None = None
    day: DayState | None = None
    calls: tuple[Call, ...] = ()
    next_call_id: int = 1
    calls_placed: dict[int, int] = field(default_factory=dict)
    last_banished: int | None = None
    instant_kill_used: bool = False
    quiet_rounds: int = 0
    deaths_this_round: int = 0
    outcome: Outcome | None = None

    def today(self) -> DayState:
        """The current day's record; only asked in the morning, day and vote phases."""
        assert self.day is not None
        return self.day

    def call_of(self, seat: int) -> Call | None:
        for call in self.calls:
            if call.has(seat):
                return call
        return None
