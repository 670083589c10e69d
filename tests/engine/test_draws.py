"""The bots' draws are exactly the library's (`sample`, `randrange`, `choice`): replays and
golden games depend on it."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, TypeVar

from vollmond.engine.kit.draws import below, permutation, pick

if TYPE_CHECKING:
    from _typeshed import SupportsLenAndGetItem

T = TypeVar("T")


def test_below_and_pick_draw_like_randrange_and_choice() -> None:
    for seed in range(200):
        for size in (1, 2, 3, 7, 12, 33, 200):
            ours, theirs = random.Random(f"b{seed}"), random.Random(f"b{seed}")
            items = [f"x{i}" for i in range(size)]
            assert below(ours, size) == theirs.randrange(size)
            assert pick(ours, items) == theirs.choice(items)
            assert ours.random() == theirs.random()  # the stream is at the same place


def test_permutation_is_a_full_sample_of_the_library() -> None:
    for seed in range(200):
        for size in (0, 1, 2, 5, 6, 12, 21, 22, 200):
            ours, theirs = random.Random(f"p{seed}"), random.Random(f"p{seed}")
            items = [f"x{i}" for i in range(size)]
            assert permutation(ours, items) == theirs.sample(items, size)
            assert ours.random() == theirs.random()


class _OwnWays(random.Random):
    def randrange(self, *args: object, **kwargs: object) -> int:
        return -1

    def choice(self, seq: SupportsLenAndGetItem[T]) -> T:
        return seq[len(seq) - 1]

    def sample(self, population: object, k: int, *, counts: object = None) -> list[object]:  # type: ignore[override]
        return ["own"]


def test_another_generator_draws_its_own_way() -> None:
    items = [1, 2, 3]
    assert below(_OwnWays(1), 3) == -1
    assert [pick(_OwnWays(seed), items) for seed in range(20)] == [3] * 20
    assert permutation(_OwnWays(1), items) == ["own"]
