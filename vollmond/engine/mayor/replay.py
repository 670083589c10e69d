"""Replay: a game is (options, seed, command log). Each command gets its own random stream
derived from the seed and its index, so replaying the log reproduces every lot drawn.

(The same scheme as the standard rule set's replay, written out here so that the two rule
sets do not import each other.)
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from vollmond.engine.core import Event, Rejection
from vollmond.engine.mayor.commands import Command
from vollmond.engine.mayor.options import MayorOptions
from vollmond.engine.mayor.rules import apply, new_game
from vollmond.engine.mayor.state import MayorState

T = TypeVar("T")


class DerivedRng:
    """The random stream of one command, seeded only when the rules first draw from it."""

    __slots__ = ("_key", "_random")

    def __init__(self, key: str) -> None:
        self._key = key
        self._random: random.Random | None = None

    def _rng(self) -> random.Random:
        if self._random is None:
            self._random = random.Random(self._key)
        return self._random

    def choice(self, seq: Sequence[T]) -> T:
        return self._rng().choice(seq)

    def shuffle(self, x: list[Any]) -> None:
        self._rng().shuffle(x)

    def sample(self, population: Sequence[T], k: int) -> list[T]:
        return self._rng().sample(population, k)


def rng_for(seed: int, index: int) -> DerivedRng:
    """Index 0 deals; command i (from 1) gets stream i."""
    return DerivedRng(f"vollmond:mayor:{seed}:{index}")


class ReplayDivergedError(RuntimeError):
    """A logged command was refused on replay: the log or the rules changed."""


@dataclass(frozen=True, slots=True)
class Replayed:
    state: MayorState
    events: tuple[Event, ...]


def replay(options: MayorOptions, seed: int, commands: Iterable[Command]) -> Replayed:
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
