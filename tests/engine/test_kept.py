"""Answers kept by identity (kit/kept.py): a hit only for the very object, None is an
answer like any other, and beyond the limit the oldest answer goes."""

from __future__ import annotations

from vollmond.engine.kit.kept import MISSING, Kept


def test_only_the_same_object_hits() -> None:
    kept: Kept[tuple[int, ...], str] = Kept(4)
    first = tuple(range(3))
    kept.put(first, "a")
    assert kept.get(first) == "a"
    assert kept.get(tuple(range(3))) is MISSING  # equal, but another object


def test_none_is_kept_as_an_answer() -> None:
    kept: Kept[list[int], str | None] = Kept(4)
    value = [1]
    assert kept.get(value) is MISSING
    assert kept.put(value, None) is None
    assert kept.get(value) is None


def test_the_oldest_goes_beyond_the_limit() -> None:
    kept: Kept[list[int], int] = Kept(2)
    values = [[i] for i in range(3)]
    for i, value in enumerate(values):
        kept.put(value, i)
    assert len(kept) == 2
    assert kept.get(values[0]) is MISSING
    assert (kept.get(values[1]), kept.get(values[2])) == (1, 2)
    kept.clear()
    assert kept.get(values[2]) is MISSING
