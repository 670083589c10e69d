"""The mayor rule set's small vocabularies (seed 000): statuses, teams, sides, stages."""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    """Whether a seat still plays. Both ways out reveal the role (seed 000: "Rollenkarte
    umgedreht") and silence the seat towards the living (B6)."""

    ALIVE = "alive"
    DEAD = "dead"
    IMPRISONED = "imprisoned"


class Team(StrEnum):
    NAZIS = "nazis"
    DEMOCRATS = "democrats"


class Side(StrEnum):
    """Who won: one team, the mixed lover pair (B7), or nobody (a draw)."""

    DEMOCRATS = "democrats"
    NAZIS = "nazis"
    LOVERS = "lovers"
    DRAW = "draw"


class Phase(StrEnum):
    """The coarse part of the day a channel shows (lights, sounds, menus)."""

    ELECTION = "election"
    NIGHT = "night"
    MORNING = "morning"
    DAY = "day"
    OVER = "over"


class Stage(StrEnum):
    """One step of the round table (phases.py)."""

    CANDIDACY = "candidacy"
    INTRODUCTIONS = "introductions"
    BALLOT = "ballot"
    RUNOFF = "runoff"
    NIGHT = "night"
    MORNING = "morning"
    ACCUSATIONS = "accusations"
    DEFENCE = "defence"
    VOTE = "vote"
    REVOTE = "revote"
    OVER = "over"


class Elected(StrEnum):
    """How the mayor got the office (B1)."""

    UNOPPOSED = "unopposed"
    VOTE = "vote"
    RUNOFF = "runoff"
    LOT = "lot"


class Verdict(StrEnum):
    """How the evening vote ended (B3, B4)."""

    VOTE = "vote"
    RUNOFF = "runoff"
    MAYOR = "mayor"
