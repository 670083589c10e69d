"""Enums shared by the standard (seed-004) rule set.

On Python 3.11 reading a member from its class (`Phase.NIGHT`) is about four times as slow as
a plain class attribute: `EnumType` has a `__getattr__`, so every read of the class goes
through the interpreter's attribute hook (3.12 dropped it). The checks asked on every command
or every bot turn read the few members they need as module constants (`_NIGHT = Phase.NIGHT`);
everything else reads them from the class.
"""

from __future__ import annotations

from enum import StrEnum


class Phase(StrEnum):
    NIGHT = "night"
    MORNING = "morning"
    DAY = "day"
    VOTE = "vote"
    OVER = "over"


class NightStep(StrEnum):
    """Night 1 opens with the vagabond's steal, before anyone else wakes (S14)."""

    STEAL = "steal"
    MAIN = "main"


class Team(StrEnum):
    VILLAGE = "village"
    EVIL = "evil"
    LONER = "loner"


class Side(StrEnum):
    """A winning label shown at the end (V1-V3); a draw ends a stalled game."""

    VILLAGE = "village"
    EVIL = "evil"
    LOVERS = "lovers"
    FOX = "fox"
    DRAW = "draw"


class RoleId(StrEnum):
    """Generic role keys; each world names them (worlds data), the rules never do."""

    EVIL = "evil"
    SEER = "seer"
    DOCTOR = "doctor"
    WITCH = "witch"
    NIGHT_OWL = "night_owl"
    HUNTER = "hunter"
    KNIGHT = "knight"
    MEDIUM = "medium"
    NECROMANCER = "necromancer"
    TRAPPER = "trapper"
    TWIN = "twin"
    DEFECTOR = "defector"
    FOX = "fox"
    VAGABOND = "vagabond"
    VOTE_GIVER = "vote_giver"
    PRINCESS = "princess"
    CREEPER = "creeper"
    FILLER = "filler"


class ActionKind(StrEnum):
    """What a role ability does; the night resolves by kind, never by role."""

    EVIL_VOTE = "evil_vote"
    STEAL = "steal"
    CHECK = "check"
    PROTECT = "protect"
    TRAP = "trap"
    HEAL = "heal"
    POISON = "poison"
    VISIT = "visit"
    SEANCE = "seance"
    SHOOT = "shoot"
    TRANSFER_VOTE = "transfer_vote"
    INSTANT_KILL = "instant_kill"


class Trait(StrEnum):
    """Passive properties a role may carry; checked by the rules instead of role names."""

    BONDED_PAIR = "bonded_pair"
    SURVIVES_FIRST_BANISHMENT = "survives_first_banishment"
    DRAGS_ATTACKER = "drags_attacker"
    WINS_IF_ALIVE = "wins_if_alive"
    LEARNS_BANISHED = "learns_banished"


class CallKind(StrEnum):
    CALL = "call"
    SEANCE = "seance"


class CallStatus(StrEnum):
    RINGING = "ringing"
    ACTIVE = "active"


class CallMode(StrEnum):
    """Per participant: stumm hears only the call, halb hears the market place quietly too."""

    STUMM = "stumm"
    HALB = "halb"


class DayCallModes(StrEnum):
    """Which day call modes the founder allows (C9)."""

    STUMM = "stumm"
    HALB = "halb"
    BOTH = "both"


class CallEndReason(StrEnum):
    HUNG_UP = "hung_up"
    MAX_DURATION = "max_duration"
    PHASE_END = "phase_end"
    DEATH = "death"


class DeckId(StrEnum):
    AUTO = "auto"
    STARTER = "starter"
    LONER = "loner"
    FULL_MOON = "full_moon"
    MAY_DANCE = "may_dance"
    CAULDRON = "cauldron"
    TRIBUNAL = "tribunal"
    CUSTOM = "custom"
