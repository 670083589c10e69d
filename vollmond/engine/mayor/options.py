"""Founding options of the mayor rule set and their JSON codec."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from vollmond.engine.core import Json
from vollmond.engine.ruleset import OptionsDecodeError

MIN_PLAYERS = 4
MAX_PLAYERS = 40
MAX_CHAT_CHARS = 500
DEFAULT_WORLD = "thueringer_wald"


class InvalidOptionsError(ValueError):
    """Options that cannot make a game (size out of range, too many or too few Nazis)."""


@dataclass(frozen=True, slots=True)
class Durations:
    """Seconds per stage; `introduction_s` and `defence_s` are per speaker (timed floors)."""

    candidacy_s: float = 30.0
    introduction_s: float = 20.0
    ballot_s: float = 45.0
    night_s: float = 90.0
    morning_s: float = 15.0
    accusations_s: float = 180.0
    defence_s: float = 30.0
    vote_s: float = 45.0


def auto_nazis(players: int) -> int:
    """About one player in four, at least one (seed 000 only asks for "enough")."""
    return max(1, players // 4)


@dataclass(frozen=True, slots=True)
class MayorOptions:
    """Everything chosen at founding; part of a game's replay key.

    `nazis` None deals `auto_nazis(players)`; `lovers` deals a random pair of lovers.
    """

    players: int
    world: str = DEFAULT_WORLD
    nazis: int | None = None
    lovers: bool = True
    durations: Durations = field(default_factory=Durations)
    stalemate_rounds: int = 3

    @property
    def nazi_count(self) -> int:
        return auto_nazis(self.players) if self.nazis is None else self.nazis

    def check(self) -> None:
        """Raise `InvalidOptionsError` unless a game can be dealt with these options."""
        if not MIN_PLAYERS <= self.players <= MAX_PLAYERS:
            raise InvalidOptionsError(f"players must be {MIN_PLAYERS}..{MAX_PLAYERS}")
        if self.nazi_count < 1 or 2 * self.nazi_count >= self.players:
            raise InvalidOptionsError("there must be at least one Nazi and more democrats")
        if self.stalemate_rounds < 1:
            raise InvalidOptionsError("stalemate_rounds must be at least 1")

    def to_json(self) -> dict[str, Json]:
        return {
            "players": self.players,
            "world": self.world,
            "nazis": self.nazis,
            "lovers": self.lovers,
            "durations": {f.name: getattr(self.durations, f.name) for f in fields(Durations)},
            "stalemate_rounds": self.stalemate_rounds,
        }


def decode_options(data: Mapping[str, Any]) -> MayorOptions:
    """The inverse of `MayorOptions.to_json`; missing fields take their defaults.

    Raises `OptionsDecodeError` and nothing else on junk; bounds are `MayorOptions.check`'s.
    """
    try:
        durations = data.get("durations", {})
        known = {f.name for f in fields(Durations)}
        unknown = set(durations) - known
        if unknown:
            raise ValueError(f"unknown durations {sorted(unknown)}")
        nazis = data.get("nazis")
        if isinstance(data["players"], bool) or isinstance(nazis, bool):
            raise TypeError("a flag is not a number")
        return MayorOptions(
            players=int(data["players"]),
            world=str(data.get("world", DEFAULT_WORLD)),
            nazis=None if nazis is None else int(nazis),
            lovers=bool(data.get("lovers", True)),
            durations=Durations(**{str(k): float(v) for k, v in durations.items()}),
            stalemate_rounds=int(data.get("stalemate_rounds", 3)),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise OptionsDecodeError(f"not founding options of the mayor rules: {exc}") from exc
