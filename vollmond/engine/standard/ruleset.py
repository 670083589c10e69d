"""The standard rule set (seed 004) behind the `RuleSet` protocol: one value, `RULESET`,
that the registry in `vollmond.engine.ruleset` names."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from vollmond.engine.core import Json, Rejection, Rng, Viewer
from vollmond.engine.kit.routing import WhereAmI
from vollmond.engine.ruleset import (
    BotFactory,
    KeyAction,
    MessageSchema,
    Press,
    RuleSet,
    SeatedGame,
    SeatResult,
    Simulated,
    codec_of,
)
from vollmond.engine.standard import commands as cmds
from vollmond.engine.standard import rules
from vollmond.engine.standard.bots import RandomBot
from vollmond.engine.standard.commands import Command, TimerCommand
from vollmond.engine.standard.fairness import deck_problem
from vollmond.engine.standard.keys import key_probe, keypad
from vollmond.engine.standard.legal import legal_actions
from vollmond.engine.standard.messages import SCHEMA
from vollmond.engine.standard.narration import night_steps
from vollmond.engine.standard.options import MAX_PLAYERS, MIN_PLAYERS, GameOptions, decode_options
from vollmond.engine.standard.replay import rng_for
from vollmond.engine.standard.results import seat_results
from vollmond.engine.standard.routing import Listener, Route, place
from vollmond.engine.standard.routing import routing as route_table
from vollmond.engine.standard.rules import StdResult
from vollmond.engine.standard.sim import play_game
from vollmond.engine.standard.smart_bot import SmartBot
from vollmond.engine.standard.state import GameState
from vollmond.engine.standard.types import ActionKind, Phase
from vollmond.engine.standard.view import StandardView, project, views_follow_events


def _random_bot(seat: int, rng: Any) -> RandomBot:
    generator = rng if isinstance(rng, random.Random) else random.Random(f"bot:{seat}")
    return RandomBot(seat, generator)


def _smart_bot(seat: int, rng: Any) -> SmartBot:
    generator = rng if isinstance(rng, random.Random) else random.Random(f"bot:{seat}")
    return SmartBot(seat, generator)


_BOTS: Mapping[str, BotFactory[GameState, Command]] = MappingProxyType(
    {"random": _random_bot, "smart": _smart_bot}
)

CODEC = codec_of(
    (
        cmds.UseAbility,
        cmds.Nominate,
        cmds.Vote,
        cmds.Interject,
        cmds.PlaceCall,
        cmds.AnswerCall,
        cmds.HangUp,
        cmds.ToggleCallMode,
        cmds.Say,
        cmds.Leave,
    ),
    (cmds.PhaseTimeout, cmds.CallTimeout, cmds.FloorTimeout),
    ActionKind,
)


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

    def place(self, state: GameState, listener: Listener) -> WhereAmI:
        return place(state, listener)

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
        return views_follow_events(before, after)

    def phase_name(self, state: GameState) -> str:
        return str(state.phase.value)

    def timer_phase(self, timer: TimerCommand) -> int | None:
        return timer.phase_seq if isinstance(timer, cmds.PhaseTimeout) else None

    def night_walk(self, composition: Mapping[str, Json]) -> Sequence[str]:
        return night_steps(composition)

    def seat_results(
        self, state: GameState, commands: Sequence[Command]
    ) -> Mapping[int, SeatResult]:
        return seat_results(state, commands)

    def deck_problem(self, options: GameOptions) -> str | None:
        return deck_problem(options)

    def keypad(self, state: GameState, seat: int) -> Sequence[KeyAction]:
        return keypad(state, seat)

    def key_probe(self, state: GameState, seat: int, presses: Sequence[Press]) -> Command | None:
        return key_probe(state, seat, presses)

    def ring_seconds(self, options: GameOptions) -> float:
        return float(options.calls.ring_s)

    def simulate(self, options: GameOptions, seed: int) -> Simulated:
        game = play_game(options, seed)
        state = game.state
        assert state is not None and state.outcome is not None
        sides = tuple(side.value for side in state.outcome.sides)
        return Simulated(sides, state.round, len(game.commands))

    def simulate_seated(
        self, options: GameOptions, seed: int, bots: Mapping[int, str]
    ) -> SeatedGame:
        unknown = sorted(set(bots.values()) - set(_BOTS))
        if unknown:
            raise ValueError(f"unknown bots {unknown}; known: {sorted(_BOTS)}")
        smart = frozenset(seat for seat, name in bots.items() if name == "smart")
        game = play_game(options, seed, smart_seats=smart)
        state = game.state
        assert state is not None and state.outcome is not None
        return SeatedGame(frozenset(state.outcome.winners), state.round, len(game.commands))


RULESET: RuleSet[GameState, Command, TimerCommand, GameOptions, StandardView, Route] = (
    StandardRuleSet()
)
