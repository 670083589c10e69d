"""Enums of the classic rule set (seed 003)."""

from __future__ import annotations

from enum import StrEnum


class Phase(StrEnum):
    """`night` holds the night steps; `election`, `morning`, `day`, `tiebreak` and
    `succession` happen with open eyes on the market place."""

    NIGHT = "night"
    ELECTION = "election"
    MORNING = "morning"
    DAY = "day"
    TIEBREAK = "tiebreak"
    SUCCESSION = "succession"
    OVER = "over"


class Step(StrEnum):
    """The night in the order of A6; thief and Amor only before the first night (A3, A4)."""

    THIEF = "thief"
    AMOR = "amor"
    WOLVES = "wolves"
    SEEING_WOLF = "seeing_wolf"
    SEER = "seer"
    WITCH = "witch"
    SANDMAN = "sandman"


class Team(StrEnum):
    VILLAGE = "village"
    WOLVES = "wolves"
    LONER = "loner"


class Side(StrEnum):
    """A winning label at the end (A1, A14)."""

    VILLAGE = "village"
    WOLVES = "wolves"
    LOVERS = "lovers"
    DEATH_SEEKER = "death_seeker"
    DRAW = "draw"


class Role(StrEnum):
    """The cards of seed 003; each world names them, the rules never compare them."""

    WEREWOLF = "werewolf"
    VILLAGER = "villager"
    SEER = "seer"
    THIEF = "thief"
    AMOR = "amor"
    HERB_WITCH = "herb_witch"
    SANDMAN = "sandman"
    FALSE_WOLF = "false_wolf"
    SEEING_WOLF = "seeing_wolf"
    PACT_MAKER = "pact_maker"
    BLACK_WOLF = "black_wolf"
    DEATH_SEEKER = "death_seeker"


class Kind(StrEnum):
    """What a night ability does; the night resolves by kind, never by role."""

    TAKE_CARD = "take_card"
    LINK = "link"
    WOLF_VOTE = "wolf_vote"
    SEEK = "seek"
    CHECK = "check"
    HEAL = "heal"
    POISON = "poison"
    PASS = "pass"
    SENSE = "sense"


class DeckId(StrEnum):
    """Which cards are in the hat: fitted to the table size, or the founder's own list."""

    BASIC = "basic"
    CLASSIC = "classic"
    FULL = "full"
    CUSTOM = "custom"
