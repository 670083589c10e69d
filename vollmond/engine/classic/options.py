"""Founding options of a classic game and their JSON codec."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from vollmond.engine.classic.types import DeckId, Role
from vollmond.engine.core import Json
from vollmond.engine.ruleset import OptionsDecodeError

MIN_PLAYERS = 5
MAX_PLAYERS = 40
SMALL_TABLE = 9
"""A15: below this many players the first night has no victim."""


@dataclass(frozen=True, slots=True)
class Durations:
    """Stage lengths in seconds; the runtime turns them into timers."""

    setup_s: float = 30.0
    election_s: float = 90.0
    night_step_s: float = 40.0
    morning_s: float = 15.0
    day_s: float = 240.0
    decision_s: float = 30.0

    def to_json(self) -> dict[str, Json]:
        return {
            "setup_s": self.setup_s,
            "election_s": self.election_s,
            "night_step_s": self.night_step_s,
            "morning_s": self.morning_s,
            "day_s": self.day_s,
            "decision_s": self.decision_s,
        }


@dataclass(frozen=True, slots=True)
class ClassicOptions:
    """Everything chosen at founding; `players` is the number of seats dealt."""

    players: int
    world: str = "duesterwald"
    deck: DeckId = DeckId.CLASSIC
    custom_roles: tuple[tuple[Role, int], ...] = ()
    captain: bool = True
    durations: Durations = field(default_factory=Durations)
    stalemate_rounds: int = 3

    def to_json(self) -> dict[str, Json]:
        return {
            "players": self.players,
            "world": self.world,
            "deck": self.deck.value,
            "custom_roles": [[r.value, n] for r, n in self.custom_roles],
            "captain": self.captain,
            "durations": self.durations.to_json(),
            "stalemate_rounds": self.stalemate_rounds,
        }


def decode_options(data: Mapping[str, Any]) -> ClassicOptions:
    """The inverse of `to_json`; missing fields take their defaults. Raises
    `OptionsDecodeError`, never anything else; bounds are `new_game`'s to check."""
    try:
        durations = data.get("durations", {})
        return ClassicOptions(
            players=int(data["players"]),
            world=str(data.get("world", "duesterwald")),
            deck=DeckId(data.get("deck", DeckId.CLASSIC.value)),
            custom_roles=tuple((Role(r), int(n)) for r, n in data.get("custom_roles", ())),
            captain=bool(data.get("captain", True)),
            durations=Durations(**{str(k): float(v) for k, v in durations.items()}),
            stalemate_rounds=int(data.get("stalemate_rounds", 3)),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise OptionsDecodeError(f"not classic founding options: {exc}") from exc
