"""The mayor rule set (seed 000) behind the `RuleSet` protocol: `RULESET`, named by the
registry in `vollmond.engine.ruleset`."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from vollmond.engine.core import Json, Rejection, Rng, Viewer
from vollmond.engine.mayor import commands as cmds
from vollmond.engine.mayor import keys, rules
from vollmond.engine.mayor.bots import MayorBot
from vollmond.engine.mayor.commands import Command, TimerCommand
from vollmond.engine.mayor.legal import legal_commands
from vollmond.engine.mayor.messages import SCHEMA
from vollmond.engine.mayor.options import MAX_PLAYERS, MIN_PLAYERS, MayorOptions, decode_options
from vollmond.engine.mayor.replay import rng_for
from vollmond.engine.mayor.routing import Listener, Route
from vollmond.engine.mayor.routing import routing as route_table
from vollmond.engine.mayor.rules import MayorResult
from vollmond.engine.mayor.sim import play_game
from vollmond.engine.mayor.state import MayorState
from vollmond.engine.mayor.view import MayorView, project
from vollmond.engine.ruleset import (
    BotFactory,
    KeyAction,
    MessageSchema,
    Press,
    RuleSet,
    Simulated,
    codec_of,
)


def _bot(seat: int, rng: Any) -> MayorBot:
    generator = rng if isinstance(rng, random.Random) else random.Random(f"mayor-bot:{seat}")
    return MayorBot(seat, generator)


_BOTS: Mapping[str, BotFactory[MayorState, Command]] = MappingProxyType({"random": _bot})

CODEC = codec_of(
    (
        cmds.Stand,
        cmds.Vote,
        cmds.Accuse,
        cmds.ChooseVictim,
        cmds.YieldFloor,
        cmds.Say,
        cmds.Leave,
    ),
    (cmds.PhaseTimeout, cmds.FloorTimeout),
)


@dataclass(frozen=True, slots=True)
class MayorRuleSet:
    """Seed 000: a mayor with a double vote in ties, accusations with defences, a compulsory
    vote, an evil team that must agree, and the mixed lover pair."""

    id: str = "mayor"
    messages: MessageSchema = SCHEMA
    bots: Mapping[str, BotFactory[MayorState, Command]] = field(default_factory=lambda: _BOTS)

    def decode_options(self, data: Mapping[str, Any]) -> MayorOptions:
        return decode_options(data)

    def encode_options(self, options: MayorOptions) -> dict[str, Json]:
        return options.to_json()

    def new_game(self, options: MayorOptions, rng: Rng) -> MayorResult:
        return rules.new_game(options, rng)

    def apply(self, state: MayorState, command: Command, rng: Rng) -> MayorResult | Rejection:
        return rules.apply(state, command, rng)

    def legal(self, state: MayorState, seat: int) -> Sequence[Command]:
        return legal_commands(state, seat)

    def view(self, state: MayorState, viewer: Viewer) -> MayorView:
        return project(state, viewer)

    def routing(self, state: MayorState) -> Mapping[Listener, tuple[Route, ...]]:
        return route_table(state)

    def is_over(self, state: MayorState) -> bool:
        return state.is_over

    @property
    def min_players(self) -> int:
        return MIN_PLAYERS

    @property
    def max_players(self) -> int:
        return MAX_PLAYERS

    def validate(self, state: MayorState, command: Command) -> Rejection | None:
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

    def phase_seq(self, state: MayorState) -> int:
        return state.phase_seq

    def views_follow_events(self, before: MayorState, after: MayorState) -> bool:
        """Always: everything a mayor's-election view shows changes with an event to whoever
        sees it."""
        return True

    def phase_name(self, state: MayorState) -> str:
        return str(state.stage.value)

    def timer_phase(self, timer: TimerCommand) -> int | None:
        return timer.phase_seq if isinstance(timer, cmds.PhaseTimeout) else None

    def night_walk(self, composition: Mapping[str, Json]) -> Sequence[str]:
        return ()  # its night steps are stages of their own, each announced by an event

    def keypad(self, state: MayorState, seat: int) -> Sequence[KeyAction]:
        return keys.keypad(state, seat)

    def key_probe(self, state: MayorState, seat: int, presses: Sequence[Press]) -> Command | None:
        return keys.key_probe(state, seat, presses)

    def simulate(self, options: MayorOptions, seed: int) -> Simulated:
        game = play_game(options, seed)
        state = game.state
        assert state is not None and state.outcome is not None
        return Simulated((state.outcome.side.value,), state.round, len(game.commands))


RULESET: RuleSet[MayorState, Command, TimerCommand, MayorOptions, MayorView, Route] = MayorRuleSet()
