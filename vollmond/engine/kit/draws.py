"""`random.Random`'s `sample`, `randrange` and `choice` with the same draws and the same
order, cheaper.

Bots draw at every turn, and golden transcripts and replays hold their choices fixed, so a
faster draw must draw exactly what the library draws: each index by `getrandbits` of the
bound's bit length, redrawn while out of range (CPython's `_randbelow_with_getrandbits`).
Here that loop is inlined instead of a method call per element: `permutation` is
`rng.sample(items, len(items))` (CPython's pool branch, the one a full sample always takes),
`below` is `rng.randrange(n)` and `pick` is `rng.choice`. tests/engine/test_draws.py holds
them equal to the library's. A generator of another type (a subclass may draw differently)
is passed to its own methods.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, TypeVar

T = TypeVar("T")


def below(rng: random.Random, bound: int) -> int:
    """A number in 0..bound-1 (bound > 0), drawn as `rng.randrange(bound)` draws it."""
    if type(rng) is not random.Random:
        return rng.randrange(bound)
    bits = bound.bit_length()
    j = rng.getrandbits(bits)
    while j >= bound:
        j = rng.getrandbits(bits)
    return j


def pick(rng: random.Random, items: Sequence[T]) -> T:
    """One of `items` (not empty), drawn as `rng.choice(items)` draws it."""
    if type(rng) is not random.Random:
        return rng.choice(items)
    return items[below(rng, len(items))]


def permutation(rng: random.Random, items: list[Any]) -> list[Any]:
    """A new list of `items` in the order `rng.sample(items, len(items))` would give."""
    if type(rng) is not random.Random:
        return rng.sample(items, len(items))
    getrandbits = rng.getrandbits
    pool = list(items)
    n = len(pool)
    result = [None] * n
    for i in range(n):
        bound = n - i
        bits = bound.bit_length()
        j = getrandbits(bits)
        while j >= bound:
            j = getrandbits(bits)
        result[i] = pool[j]
        pool[j] = pool[bound - 1]
    return result
