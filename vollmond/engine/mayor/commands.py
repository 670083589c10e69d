"""What players (keys, voice, clicks) and timers ask of a mayor game."""

from __future__ import annotations

from dataclasses import dataclass

from vollmond.engine.kit.commands import FloorTimeout, Leave, PhaseTimeout, Say


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


PlayerCommand = Stand | Vote | Accuse | ChooseVictim | YieldFloor | Say | Leave
TimerCommand = PhaseTimeout | FloorTimeout
Command = PlayerCommand | TimerCommand

__all__ = [
    "Accuse",
    "ChooseVictim",
    "Command",
    "FloorTimeout",
    "Leave",
    "PhaseTimeout",
    "PlayerCommand",
    "Say",
    "Stand",
    "TimerCommand",
    "Vote",
    "YieldFloor",
]
