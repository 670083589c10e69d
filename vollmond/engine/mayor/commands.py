"""What players (keys, voice, clicks) and timers ask of a mayor game."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Stand:
    """Run for mayor (`stand` True) or say you will not (B1); decided once per election."""

    actor: int
    stand: bool = True


@dataclass(frozen=True, slots=True)
class Vote:
    """A ballot for one candidate (election) or one accused (evening); no abstention (B3)."""

    actor: int
    target: int


@dataclass(frozen=True, slots=True)
class Accuse:
    """Accuse another living player before the evening vote (B3); once per player and day."""

    actor: int
    target: int


@dataclass(frozen=True, slots=True)
class ChooseVictim:
    """A Nazi points at the night's victim; changeable until the team agrees (B5)."""

    actor: int
    target: int


@dataclass(frozen=True, slots=True)
class YieldFloor:
    """End your own introduction or defence early."""

    actor: int


@dataclass(frozen=True, slots=True)
class Say:
    """Text chat into the room the actor is in right now."""

    actor: int
    text: str


@dataclass(frozen=True, slots=True)
class Leave:
    """A player leaves for good; it counts as a death (role revealed)."""

    actor: int


@dataclass(frozen=True, slots=True)
class PhaseTimeout:
    """The runtime's stage timer; a timer of an older stage is refused as stale."""

    phase_seq: int


@dataclass(frozen=True, slots=True)
class FloorTimeout:
    """The speaker's time is up (introduction or defence)."""

    seat: int
    phase_seq: int


PlayerCommand = Stand | Vote | Accuse | ChooseVictim | YieldFloor | Say | Leave
TimerCommand = PhaseTimeout | FloorTimeout
Command = PlayerCommand | TimerCommand
