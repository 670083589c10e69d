"""The commands every rule set knows, with the same fields and the same meaning of the
command itself: leaving, chatting, and the runtime's timers. What each one does is a rule of
the rule set that handles it (its handler table)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Say:
    """Text chat into whatever room the actor is in right now."""

    actor: int
    text: str


@dataclass(frozen=True, slots=True)
class Leave:
    """A player leaves the game for good (or the service removes an idle one)."""

    actor: int


@dataclass(frozen=True, slots=True)
class PhaseTimeout:
    """Sent by the runtime's timer; a stale one (of an older stage) is refused."""

    phase_seq: int


@dataclass(frozen=True, slots=True)
class FloorTimeout:
    """The speaker's time on the floor is up."""

    seat: int
    phase_seq: int
