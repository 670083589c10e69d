"""The classic rule set (seed 003) behind the `RuleSet` protocol: one value, `RULESET`,
that the registry in `vollmond.engine.ruleset` names."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from vollmond.engine.classic import commands as cmds
from vollmond.engine.classic import keys, rules
from vollmond.engine.classic.bots import RandomBot
from vollmond.engine.classic.commands import Command, TimerCommand
from vollmond.engine.classic.legal import legal_actions
from vollmond.engine.classic.messages import SCHEMA
from vollmond.engine.classic.options import MAX_PLAYERS, MIN_PLAYERS, ClassicOptions, decode_options
from vollmond.engine.classic.replay import rng_for, simulate
from vollmond.engine.classic.routing import Listener, Route
from vollmond.engine.classic.routing import routing as route_table
from vollmond.engine.classic.rules import ClassicResult
from vollmond.engine.classic.state import GameState
from vollmond.engine.classic.types import Kind, Phase
from vollmond.engine.classic.view import ClassicView, project
from vollmond.engine.core import Json, Rejection, Rng, Viewer
from vollmond.engine.ruleset import (
    BotFactory,
    KeyAction,
    MessageSchema,
    Press,
    RuleSet,
    Simulated,
    codec_of,
)


def _random_bot(seat: int, rng: Any) -> RandomBot:
    generator = rng if isinstance(rng, random.Random) else random.Random(f"classic-bot:{seat}")
    return RandomBot(seat, generator)


_BOTS: Mapping[str, BotFactory[GameState, Command]] = MappingProxyType({"random": _random_bot})

CODEC = codec_of(
    (cmds.Act, cmds.Elect, cmds.Vote, cmds.BreakTie, cmds.NameSuccessor, cmds.Leave),
    (cmds.PhaseTimeout,),
    Kind,
)


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

    @property
    def min_players(self) -> int:
        return MIN_PLAYERS

    @property
    def max_players(self) -> int:
        return MAX_PLAYERS

    def validate(self, state: GameState, command: Command) -> Rejection | None:
        return rules.validate(state, command)

    def rng_for(self, seed: int, index: int) -> Rng:
        return rng_for(seed, index)

    def encode_command(self, command: Command) -> dict[str, Json]:
        return CODEC.encode(command)

    def decode_command(self, data: object, *, players_only: bool = False) -> Command:
        command: Command = CODEC.decode(data, players_only=players_only)
        return command

    def actor_of(self, command: Command) -> int | None:
        return None if isinstance(command, CODEC.timers) else command.actor  # type: ignore[union-attr]

    def leave(self, seat: int) -> Command:
        return cmds.Leave(seat)

    def phase_seq(self, state: GameState) -> int:
        return state.phase_seq

    def views_follow_events(self, before: GameState, after: GameState) -> bool:
        """Never: a wolf's vote shows in the other wolves' views (`me.wolf_votes`) with no
        event to them, and a night is a few commands, so rebuilding every view costs little."""
        return False

    def phase_name(self, state: GameState) -> str:
        return str(state.phase.value)

    def timer_phase(self, timer: TimerCommand) -> int | None:
        return timer.phase_seq if isinstance(timer, cmds.PhaseTimeout) else None

    def night_walk(self, composition: Mapping[str, Json]) -> Sequence[str]:
        return ()  # its night steps are stages of their own, each announced by an event

    def keypad(self, state: GameState, seat: int) -> Sequence[KeyAction]:
        return keys.keypad(state, seat)

    def key_probe(self, state: GameState, seat: int, presses: Sequence[Press]) -> Command | None:
        return keys.key_probe(state, seat, presses)

    def simulate(self, options: ClassicOptions, seed: int) -> Simulated:
        played = simulate(options, seed)
        state = played.state
        assert state.outcome is not None
        sides = tuple(side.value for side in state.outcome.sides)
        return Simulated(sides, state.round, len(played.commands))


RULESET: RuleSet[GameState, Command, TimerCommand, ClassicOptions, ClassicView, Route] = (
    ClassicRuleSet()
)
