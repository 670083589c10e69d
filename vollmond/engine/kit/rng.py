"""The random stream of one command: a game is (options, seed, command log), and each
command draws from its own stream derived from the seed and its index, so replaying the log
reproduces every lot drawn. Each rule set names its streams (`rng_for`) with its own key."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, TypeVar

T = TypeVar("T")


class DerivedRng:
    """The random stream of one command, seeded only when the rules first draw from it.

    Most commands draw nothing, and seeding a Mersenne Twister costs more than applying a
    typical command. The stream's key is `"{name}:{seed}:{index}"` (a rule set's name for
    its streams, the game's seed, the command's index), written only when the rules first
    draw, too. Draws are exactly those of `random.Random(key)`.
    """

    __slots__ = ("_index", "_name", "_random", "_seed")

    def __init__(self, name: str, seed: int, index: int) -> None:
        self._name = name
        self._seed = seed
        self._index = index
        self._random: random.Random | None = None

    @property
    def key(self) -> str:
        return f"{self._name}:{self._seed}:{self._index}"

    def _rng(self) -> random.Random:
        if self._random is None:
            self._random = random.Random(self.key)
        return self._random

    def choice(self, seq: Sequence[T]) -> T:
        return self._rng().choice(seq)

    def shuffle(self, x: list[Any]) -> None:
        self._rng().shuffle(x)

    def sample(self, population: Sequence[T], k: int) -> list[T]:
        return self._rng().sample(population, k)
