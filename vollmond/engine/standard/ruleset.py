"""The standard rule set (seed 004) behind the `RuleSet` protocol: one value, `RULESET`,
that the registry in `vollmond.engine.ruleset` names."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from vollmond.engine.core import Json, Rejection, Rng, Viewer
from vollmond.engine.ruleset import BotFactory, MessageSchema, RuleSet
from vollmond.engine.standard import rules
from vollmond.engine.standard.bots import RandomBot
from vollmond.engine.standard.commands import Command, TimerCommand
from vollmond.engine.standard.legal import legal_actions
from vollmond.engine.standard.messages import SCHEMA
from vollmond.engine.standard.options import GameOptions, decode_options
from vollmond.engine.standard.routing import Listener, Route
from vollmond.engine.standard.routing import routing as route_table
from vollmond.engine.standard.rules import StdResult
from vollmond.engine.standard.state import GameState
from vollmond.engine.standard.types import Phase
from vollmond.engine.standard.view import StandardView, project


def _random_bot(seat: int, rng: Any) -> RandomBot:
    generator = rng if isinstance(rng, random.Random) else random.Random(f"bot:{seat}")
    return RandomBot(seat, generator)


_BOTS: Mapping[str, BotFactory[GameState, Command]] = MappingProxyType({"random": _random_bot})


@dataclass(frozen=True, slots=True)
class StandardRuleSet:
    """Seed 004's rules: ten worlds, eighteen roles, private calls, the evening vote."""

    id: str = "standard"
    messages: MessageSchema = SCHEMA
    bots: Mapping[str, BotFactory[GameState, Command]] = field(default_factory=lambda: _BOTS)

    def decode_options(self, data: Mapping[str, Any]) -> GameOptions:
        return decode_options(data)

    def encode_options(self, options: GameOptions) -> dict[str, Json]:
        return options.to_json()

    def new_game(self, options: GameOptions, rng: Rng) -> StdResult:
        return rules.new_game(options, rng)

    def apply(self, state: GameState, command: Command, rng: Rng) -> StdResult | Rejection:
        return rules.apply(state, command, rng)

    def legal(self, state: GameState, seat: int) -> Sequence[Command]:
        return legal_actions(state, seat)

    def view(self, state: GameState, viewer: Viewer) -> StandardView:
        return project(state, viewer)

    def routing(self, state: GameState) -> Mapping[Listener, tuple[Route, ...]]:
        return route_table(state)

    def is_over(self, state: GameState) -> bool:
        return state.phase is Phase.OVER


RULESET: RuleSet[GameState, Command, TimerCommand, GameOptions, StandardView, Route] = (
    StandardRuleSet()
)
