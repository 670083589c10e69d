"""The standard rule set of seed 004: ten worlds, one set of rules."""

from vollmond.engine.standard.commands import (
    AnswerCall,
    CallTimeout,
    Command,
    FloorTimeout,
    HangUp,
    Interject,
    Leave,
    Nominate,
    PhaseTimeout,
    PlaceCall,
    Say,
    ToggleCallMode,
    UseAbility,
    Vote,
)
from vollmond.engine.standard.options import CallSettings, Durations, GameOptions
from vollmond.engine.standard.rules import (
    InvalidOptionsError,
    StdResult,
    apply,
    new_game,
    start_with_roles,
    validate,
)
from vollmond.engine.standard.state import GameState
from vollmond.engine.standard.types import (
    ActionKind,
    DayCallModes,
    DeckId,
    Phase,
    RoleId,
    Side,
)

__all__ = [
    "ActionKind",
    "AnswerCall",
    "CallSettings",
    "CallTimeout",
    "Command",
    "DayCallModes",
    "DeckId",
    "Durations",
    "FloorTimeout",
    "GameOptions",
    "GameState",
    "HangUp",
    "Interject",
    "InvalidOptionsError",
    "Leave",
    "Nominate",
    "Phase",
    "PhaseTimeout",
    "PlaceCall",
    "RoleId",
    "Say",
    "Side",
    "StdResult",
    "ToggleCallMode",
    "UseAbility",
    "Vote",
    "apply",
    "new_game",
    "start_with_roles",
    "validate",
]
