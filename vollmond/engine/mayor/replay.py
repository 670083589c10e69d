"""Replay: a game is (options, seed, command log). Each command gets its own random stream
derived from the seed and its index, so replaying the log reproduces every lot drawn. The
stream and the loop are the kit's; the mayor rule set names its streams."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

from vollmond.engine.kit.replay import ReplayDivergedError, Replayed, replay_log
from vollmond.engine.kit.rng import DerivedRng
from vollmond.engine.mayor.commands import Command
from vollmond.engine.mayor.options import MayorOptions
from vollmond.engine.mayor.rules import apply, new_game
from vollmond.engine.mayor.state import MayorState

__all__ = ["DerivedRng", "ReplayDivergedError", "Replayed", "replay", "rng_for"]


def rng_for(seed: int, index: int) -> DerivedRng:
    """Index 0 deals; command i (from 1) gets stream i."""
    return DerivedRng("vollmond:mayor", seed, index)


def replay(
    options: MayorOptions, seed: int, commands: Iterable[Command]
) -> Replayed[MayorState, Command]:
    return replay_log(new_game(options, rng_for(seed, 0)), apply, commands, partial(rng_for, seed))
