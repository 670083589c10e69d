"""The state of a mayor game: frozen values, replaced (never mutated) by each command."""

from __future__ import annotations

from dataclasses import dataclass, field

from vollmond.engine.kit.seats import Seats
from vollmond.engine.mayor.options import MayorOptions
from vollmond.engine.mayor.roles.base import RoleSpec
from vollmond.engine.mayor.types import Side, Stage, Status, Team


@dataclass(frozen=True, slots=True)
class Player:
    """A seat (its house number never changes) with the role it was dealt."""

    seat: int
    role: RoleSpec
    status: Status = Status.ALIVE
    lover: bool = False

    @property
    def alive(self) -> bool:
        return self.status is Status.ALIVE

    @property
    def team(self) -> Team:
        return self.role.team


@dataclass(frozen=True, slots=True)
class Election:
    """A mayor election in progress (B1, B2): `candidates` in the order they stood;
    `runoff` holds the tied leaders once the first ballot tied."""

    candidates: tuple[int, ...] = ()
    declined: frozenset[int] = frozenset()
    introduce: bool = True
    runoff: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Trial:
    """The day's accusations (accuser -> accused) and a tied vote's leaders (B3, B4)."""

    accusations: dict[int, int] = field(default_factory=dict)
    accused: tuple[int, ...] = ()
    runoff: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Ballot:
    """An open vote (election ballot, runoff, evening vote, its runoff): who may be chosen
    and the ballots cast so far (voter -> candidate)."""

    candidates: tuple[int, ...]
    votes: dict[int, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Night:
    """Each Nazi's current choice of victim (B5); a victim needs all of them to agree."""

    choices: dict[int, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Floor:
    """Timed floors in turn (introductions, defences): who speaks now, who is next, what
    for, and how long each turn lasts."""

    speaker: int | None
    queue: tuple[int, ...]
    purpose: Stage
    seconds: float


@dataclass(frozen=True, slots=True)
class Outcome:
    side: Side
    winners: frozenset[int]


@dataclass(frozen=True, slots=True)
class MayorState(Seats[Player]):
    """The whole game. `stage_index` points into the round table (phases.STAGES); `stage`
    is that entry's name, kept here so checks need not import the table."""

    options: MayorOptions
    players: tuple[Player, ...]
    stage: Stage = Stage.CANDIDACY
    stage_index: int = 0
    phase_seq: int = 0
    round: int = 1
    mayor: int | None = None
    election: Election | None = None
    trial: Trial | None = None
    night: Night | None = None
    ballot: Ballot | None = None
    floor: Floor | None = None
    bonds_known: bool = False
    quiet_rounds: int = 0
    deaths_this_round: int = 0
    outcome: Outcome | None = None

    def living_seats(self) -> frozenset[int]:
        return frozenset(p.seat for p in self.players if p.alive)

    def out_seats(self) -> frozenset[int]:
        return frozenset(p.seat for p in self.players if not p.alive)

    def night_room(self) -> frozenset[int]:
        """The living members of the evil team's room."""
        return frozenset(p.seat for p in self.players if p.alive and p.role.night_room)

    def lovers(self) -> tuple[int, ...]:
        return tuple(p.seat for p in self.players if p.lover)

    @property
    def is_over(self) -> bool:
        return self.outcome is not None
