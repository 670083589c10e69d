"""Commands: what players (by key, voice or click) and timers ask of the game.

Every channel parses its input into these; the engine validates and applies them.
"""

from __future__ import annotations

from dataclasses import dataclass

from vollmond.engine.kit.commands import FloorTimeout, Leave, PhaseTimeout, Say
from vollmond.engine.standard.types import ActionKind


@dataclass(frozen=True, slots=True)
class UseAbility:
    """A role ability; `target` None means "nobody" where the ability allows it."""

    actor: int
    kind: ActionKind
    target: int | None = None


@dataclass(frozen=True, slots=True)
class Nominate:
    actor: int
    target: int


@dataclass(frozen=True, slots=True)
class Vote:
    """An evening vote; `target` None abstains (key 0)."""

    actor: int
    target: int | None


@dataclass(frozen=True, slots=True)
class Interject:
    actor: int


@dataclass(frozen=True, slots=True)
class PlaceCall:
    actor: int
    callee: int


@dataclass(frozen=True, slots=True)
class AnswerCall:
    actor: int
    accept: bool


@dataclass(frozen=True, slots=True)
class HangUp:
    actor: int


@dataclass(frozen=True, slots=True)
class ToggleCallMode:
    actor: int


@dataclass(frozen=True, slots=True)
class CallTimeout:
    """Ends ringing (no answer) or an active call at its maximum duration."""

    call_id: int
    active: bool


PlayerCommand = (
    UseAbility
    | Nominate
    | Vote
    | Interject
    | PlaceCall
    | AnswerCall
    | HangUp
    | ToggleCallMode
    | Say
    | Leave
)
TimerCommand = PhaseTimeout | CallTimeout | FloorTimeout
Command = PlayerCommand | TimerCommand

__all__ = [
    "AnswerCall",
    "CallTimeout",
    "Command",
    "FloorTimeout",
    "HangUp",
    "Interject",
    "Leave",
    "Nominate",
    "PhaseTimeout",
    "PlaceCall",
    "PlayerCommand",
    "Say",
    "TimerCommand",
    "ToggleCallMode",
    "UseAbility",
    "Vote",
]
