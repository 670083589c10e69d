"""The classic game state: immutable values, replaced (never mutated) by each command.

Dicts inside are never changed after the state holding them was built, so old states stay
valid for replay checks and views.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from vollmond.engine.classic.options import SMALL_TABLE, ClassicOptions
from vollmond.engine.classic.types import Kind, Phase, Role, Side, Step
from vollmond.engine.core import Json, evolve
from vollmond.engine.kit.seats import Seats

if TYPE_CHECKING:
    from vollmond.engine.classic.roles.base import RoleSpec


class FactKind(StrEnum):
    """Private knowledge a player gained at night."""

    CHECK = "check"
    SEEK = "seek"
    SENSE = "sense"


@dataclass(frozen=True, slots=True)
class Fact:
    """`answer` is the thumb: wolf (check), seer (seek), active (sense)."""

    kind: FactKind
    round: int
    subject: int
    answer: bool

    def to_json(self) -> dict[str, Json]:
        return {
            "kind": self.kind.value,
            "round": self.round,
            "subject": self.subject,
            "answer": self.answer,
        }


@dataclass(frozen=True, slots=True)
class Player:
    """A seat; its role changes only by the thief's swap before the first night (A3).
    `spent` is true once a one-time action (the herb witch's, A7) is used."""

    seat: int
    spec: RoleSpec
    alive: bool = True
    revealed: bool = False
    lover: bool = False
    left: bool = False
    spent: bool = False
    facts: tuple[Fact, ...] = ()

    @property
    def role(self) -> Role:
        return self.spec.id


@dataclass(frozen=True, slots=True)
class NightState:
    """One night: the steps' choices and the victim the wolves fixed at the end of theirs."""

    number: int
    step: Step
    wolf_votes: dict[int, int] = field(default_factory=dict)
    actions: dict[int, dict[Kind, int | None]] = field(default_factory=dict)
    victim: int | None = None

    def acted(self, seat: int, kind: Kind) -> bool:
        return kind in self.actions.get(seat, {})

    def with_action(self, seat: int, kind: Kind, target: int | None) -> NightState:
        mine = {**self.actions.get(seat, {}), kind: target}
        return evolve(self, actions={**self.actions, seat: mine})

    def targets_of(self, kind: Kind) -> Iterator[tuple[int, int | None]]:
        for seat, acts in self.actions.items():
            if kind in acts:
                yield seat, acts[kind]


@dataclass(frozen=True, slots=True)
class DayState:
    """The day's raised hands (A9) and, after a tie, who is tied."""

    number: int
    votes: dict[int, int | None] = field(default_factory=dict)
    tied: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Outcome:
    sides: tuple[Side, ...]
    winners: frozenset[int]


@dataclass(frozen=True, slots=True)
class GameState(Seats[Player]):
    options: ClassicOptions
    players: tuple[Player, ...]
    phase: Phase
    phase_seq: int = 0
    stage: str = ""
    """The name of the running stage (stages.STAGES)."""
    round: int = 1
    step: Step | None = None
    leftover: tuple[RoleSpec, ...] = ()
    """The two cards the thief chooses from (A3), until he has chosen."""
    deck: frozenset[Role] = frozenset()
    """Every card dealt or left over at the start: which night steps exist (timing reveals
    nothing about who is dead, DESIGN §1)."""
    night: NightState | None = None
    day: DayState | None = None
    election: dict[int, int] = field(default_factory=dict)
    captain: int | None = None
    pack_known: bool = False
    """The wolves' room has recognised itself (the first wolves' step, A6)."""
    successor_due: int | None = None
    """A dead captain who still has to name his successor (A5)."""
    quiet_rounds: int = 0
    deaths_this_round: int = 0
    outcome: Outcome | None = None

    @property
    def first_night_quiet(self) -> bool:
        """A15: fewer than nine at the table, so night 1 has no victim and only the wolves
        wake (to recognise each other)."""
        return self.round == 1 and len(self.players) < SMALL_TABLE
