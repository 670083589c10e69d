"""Commands: what players (keys, voice, clicks) and timers ask of a classic game."""

from __future__ import annotations

from dataclasses import dataclass

from vollmond.engine.classic.types import Kind
from vollmond.engine.kit.commands import Leave, PhaseTimeout


@dataclass(frozen=True, slots=True)
class Act:
    """A night ability. `target` is a house number (the thief's: card 1 or 2); Amor's
    `second` is the second lover; the herb witch's pass has no target."""

    actor: int
    kind: Kind
    target: int | None = None
    second: int | None = None


@dataclass(frozen=True, slots=True)
class Elect:
    """A vote in the captain's election (A5); one's own house is allowed."""

    actor: int
    target: int


@dataclass(frozen=True, slots=True)
class Vote:
    """A raised hand in the day's vote (A9); `target` None keeps the hand down."""

    actor: int
    target: int | None


@dataclass(frozen=True, slots=True)
class BreakTie:
    """The captain decides who of the tied leaves (A5, A9)."""

    actor: int
    target: int


@dataclass(frozen=True, slots=True)
class NameSuccessor:
    """A captain who has left the game names the next captain (A5)."""

    actor: int
    target: int


PlayerCommand = Act | Elect | Vote | BreakTie | NameSuccessor | Leave
TimerCommand = PhaseTimeout
Command = PlayerCommand | TimerCommand

__all__ = [
    "Act",
    "BreakTie",
    "Command",
    "Elect",
    "Leave",
    "NameSuccessor",
    "PhaseTimeout",
    "PlayerCommand",
    "TimerCommand",
    "Vote",
]
