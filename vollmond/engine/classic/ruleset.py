"""The classic rule set (seed 003) behind the `RuleSet` protocol: one value, `RULESET`,
that the registry in `vollmond.engine.ruleset` names."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from vollmond.engine.classic import rules
from vollmond.engine.classic.bots import RandomBot
from vollmond.engine.classic.commands import Command, TimerCommand
from vollmond.engine.classic.legal import legal_actions
from vollmond.engine.classic.messages import SCHEMA
from vollmond.engine.classic.options import ClassicOptions, decode_options
from vollmond.engine.classic.routing import Listener, Route
from vollmond.engine.classic.routing import routing as route_table
from vollmond.engine.classic.rules import ClassicResult
from vollmond.engine.classic.state import GameState
from vollmond.engine.classic.types import Phase
from vollmond.engine.classic.view import ClassicView, project
from vollmond.engine.core import Json, Rejection, Rng, Viewer
from vollmond.engine.ruleset import BotFactory, MessageSchema, RuleSet


def _random_bot(seat: int, rng: Any) -> RandomBot:
    generator = rng if isinstance(rng, random.Random) else random.Random(f"classic-bot:{seat}")
    return RandomBot(seat, generator)


_BOTS: Mapping[str, BotFactory[GameState, Command]] = MappingProxyType({"random": _random_bot})


@dataclass(frozen=True, slots=True)
class ClassicRuleSet:
    """Seed 003's rules: Düsterwald, the village Schwarzseel, thirteen cards and a captain."""

    id: str = "classic"
    messages: MessageSchema = SCHEMA
    bots: Mapping[str, BotFactory[GameState, Command]] = field(default_factory=lambda: _BOTS)

    def decode_options(self, data: Mapping[str, Any]) -> ClassicOptions:
        return decode_options(data)

    def encode_options(self, options: ClassicOptions) -> dict[str, Json]:
        return options.to_json()

    def new_game(self, options: ClassicOptions, rng: Rng) -> ClassicResult:
        return rules.new_game(options, rng)

    def apply(self, state: GameState, command: Command, rng: Rng) -> ClassicResult | Rejection:
        return rules.apply(state, command, rng)

    def legal(self, state: GameState, seat: int) -> Sequence[Command]:
        return legal_actions(state, seat)

    def view(self, state: GameState, viewer: Viewer) -> ClassicView:
        return project(state, viewer)

    def routing(self, state: GameState) -> Mapping[Listener, tuple[Route, ...]]:
        return route_table(state)

    def is_over(self, state: GameState) -> bool:
        return state.phase is Phase.OVER


RULESET: RuleSet[GameState, Command, TimerCommand, ClassicOptions, ClassicView, Route] = (
    ClassicRuleSet()
)
