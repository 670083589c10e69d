"""Replay: a game is (options, seed, command log). Each command gets its own random stream,
derived from the seed and its index, so replaying from the log reproduces every lot drawn.
The stream and the loop are the kit's; the standard rule set names its streams."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

from vollmond.engine.kit.replay import ReplayDivergedError, Replayed, replay_log
from vollmond.engine.kit.rng import DerivedRng
from vollmond.engine.standard.commands import Command
from vollmond.engine.standard.options import GameOptions
from vollmond.engine.standard.rules import apply, new_game
from vollmond.engine.standard.state import GameState

__all__ = ["DerivedRng", "ReplayDivergedError", "Replayed", "replay", "rng_for"]


def rng_for(seed: int, index: int) -> DerivedRng:
    """Index 0 deals; command i (from 1) gets stream i. Seeding with a string is stable."""
    return DerivedRng("vollmond", seed, index)


def replay(
    options: GameOptions, seed: int, commands: Iterable[Command]
) -> Replayed[GameState, Command]:
    return replay_log(new_game(options, rng_for(seed, 0)), apply, commands, partial(rng_for, seed))
