"""Replay: a game is (options, seed, command log). Each command gets its own random stream,
derived from the seed and its index, so replaying from the log reproduces every lot drawn."""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass

from vollmond.engine.core import Event, Rejection
from vollmond.engine.standard.commands import Command
from vollmond.engine.standard.options import GameOptions
from vollmond.engine.standard.rules import apply, new_game
from vollmond.engine.standard.state import GameState


def rng_for(seed: int, index: int) -> random.Random:
    """Index 0 deals; command i (from 1) gets stream i. Seeding with a string is stable."""
    return random.Random(f"vollmond:{seed}:{index}")


class ReplayDivergedError(RuntimeError):
    """A logged command was refused on replay: the log or the rules changed."""


@dataclass(frozen=True, slots=True)
class Replayed:
    state: GameState
    events: tuple[Event, ...]


def replay(options: GameOptions, seed: int, commands: Iterable[Command]) -> Replayed:
    result = new_game(options, rng_for(seed, 0))
    state = result.state
    events = list(result.events)
    for index, command in enumerate(commands, start=1):
        outcome = apply(state, command, rng_for(seed, index))
        if isinstance(outcome, Rejection):
            raise ReplayDivergedError(f"command {index} {command!r} refused: {outcome.code}")
        state = outcome.state
        events.extend(outcome.events)
    return Replayed(state, tuple(events))
