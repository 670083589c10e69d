"""Founding options (W3): fixed when a game is founded, part of its replay key."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from vollmond.engine.core import Json
from vollmond.engine.ruleset import OptionsDecodeError
from vollmond.engine.standard.types import DayCallModes, DeckId, RoleId

MIN_PLAYERS = 4
MAX_PLAYERS = 200
MAX_CHAT_CHARS = 500


@dataclass(frozen=True, slots=True)
class CallSettings:
    """What the founder allows for private calls (C8, C9), within the operators' bounds."""

    enabled: bool = True
    max_duration_s: float = 120.0
    per_night: int = 3
    by_day: bool = False
    day_modes: DayCallModes = DayCallModes.BOTH
    evil_may_call: bool = True
    ring_s: float = 20.0


@dataclass(frozen=True, slots=True)
class Durations:
    """Phase lengths in seconds; the runtime turns them into timers."""

    steal_s: float = 30.0
    night_s: float = 120.0
    morning_s: float = 20.0
    day_s: float = 180.0
    vote_s: float = 60.0
    floor_s: float = 20.0


@dataclass(frozen=True, slots=True)
class GameOptions:
    """Everything chosen at founding. `players` is the number of seats actually dealt."""

    players: int
    world: str = "werwolf"
    deck: DeckId = DeckId.AUTO
    custom_roles: tuple[tuple[RoleId, int], ...] = ()
    lovers: bool | None = None
    unanimous: bool = False
    instant_kill: bool = False
    calls: CallSettings = field(default_factory=CallSettings)
    durations: Durations = field(default_factory=Durations)
    stalemate_rounds: int = 3

    def to_json(self) -> dict[str, Json]:
        return {
            "players": self.players,
            "world": self.world,
            "deck": self.deck.value,
            "custom_roles": [[r.value, n] for r, n in self.custom_roles],
            "lovers": self.lovers,
            "unanimous": self.unanimous,
            "instant_kill": self.instant_kill,
            "calls": {
                "enabled": self.calls.enabled,
                "max_duration_s": self.calls.max_duration_s,
                "per_night": self.calls.per_night,
                "by_day": self.calls.by_day,
                "day_modes": self.calls.day_modes.value,
                "evil_may_call": self.calls.evil_may_call,
                "ring_s": self.calls.ring_s,
            },
            "durations": {
                "steal_s": self.durations.steal_s,
                "night_s": self.durations.night_s,
                "morning_s": self.durations.morning_s,
                "day_s": self.durations.day_s,
                "vote_s": self.durations.vote_s,
                "floor_s": self.durations.floor_s,
            },
            "stalemate_rounds": self.stalemate_rounds,
        }


def decode_options(data: Mapping[str, Any]) -> GameOptions:
    """The inverse of `GameOptions.to_json`; missing fields take their defaults.

    Raises `OptionsDecodeError`, never anything else, on junk. The numbers are not checked
    against the rules' bounds here: `new_game` does that (`InvalidOptionsError`).
    """
    try:
        calls = data.get("calls", {})
        durations = data.get("durations", {})
        lovers = data.get("lovers")
        return GameOptions(
            players=int(data["players"]),
            world=str(data.get("world", "werwolf")),
            deck=DeckId(data.get("deck", DeckId.AUTO.value)),
            custom_roles=tuple((RoleId(r), int(n)) for r, n in data.get("custom_roles", ())),
            lovers=None if lovers is None else bool(lovers),
            unanimous=bool(data.get("unanimous", False)),
            instant_kill=bool(data.get("instant_kill", False)),
            calls=CallSettings(
                enabled=bool(calls.get("enabled", True)),
                max_duration_s=float(calls.get("max_duration_s", 120.0)),
                per_night=int(calls.get("per_night", 3)),
                by_day=bool(calls.get("by_day", False)),
                day_modes=DayCallModes(calls.get("day_modes", DayCallModes.BOTH.value)),
                evil_may_call=bool(calls.get("evil_may_call", True)),
                ring_s=float(calls.get("ring_s", 20.0)),
            ),
            durations=Durations(**{str(k): float(v) for k, v in durations.items()}),
            stalemate_rounds=int(data.get("stalemate_rounds", 3)),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise OptionsDecodeError(f"not founding options: {exc}") from exc
