"""The bots' shuffle draws exactly what `random.Random.shuffle` draws (replays depend on it)."""

from __future__ import annotations

import random

from vollmond.engine.kit.draws import permutation, shuffle


def test_shuffle_orders_and_draws_like_the_library() -> None:
    for seed in range(200):
        for size in (0, 1, 2, 3, 7, 12, 33, 200):
            ours, theirs = random.Random(f"s{seed}"), random.Random(f"s{seed}")
            mine, library = list(range(size)), list(range(size))
            shuffle(ours, mine)
            theirs.shuffle(library)
            assert mine == library
            assert ours.random() == theirs.random()  # the stream is at the same place


def test_permutation_is_a_full_sample_of_the_library() -> None:
    for seed in range(200):
        for size in (0, 1, 2, 5, 6, 12, 21, 22, 200):
            ours, theirs = random.Random(f"p{seed}"), random.Random(f"p{seed}")
            items = [f"x{i}" for i in range(size)]
            assert permutation(ours, items) == theirs.sample(items, size)
            assert ours.random() == theirs.random()


class _Reversing(random.Random):
    def shuffle(self, x: list[object]) -> None:  # type: ignore[override]
        x.reverse()

    def sample(self, population: object, k: int, *, counts: object = None) -> list[object]:  # type: ignore[override]
        return ["own"]


def test_another_generator_shuffles_its_own_way() -> None:
    items = [1, 2, 3]
    shuffle(_Reversing(1), items)
    assert items == [3, 2, 1]
    assert permutation(_Reversing(1), items) == ["own"]
