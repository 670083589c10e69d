"""`random.Random.shuffle` and `sample` with the same draws and the same order, cheaper.

Bots shuffle their options at every turn, and golden transcripts and replays hold their
choices fixed, so a faster shuffle must draw exactly what `random.Random.shuffle` draws:
Fisher-Yates from the end, each index by `getrandbits` of the bound's bit length, redrawn
while out of range (CPython's `_randbelow_with_getrandbits`). Here that loop is inlined
instead of a method call per element; `permutation` is `rng.sample(items, len(items))`
(CPython's pool branch, the one a full sample always takes). tests/engine/test_draws.py
holds both equal to the library's. A generator of another type (a subclass may draw
differently) is passed to its own `shuffle` and `sample`.
"""

from __future__ import annotations

import random
from typing import Any


def shuffle(rng: random.Random, items: list[Any]) -> None:
    """Shuffle `items` in place exactly as `rng.shuffle(items)` would."""
    if type(rng) is not random.Random:
        rng.shuffle(items)
        return
    getrandbits = rng.getrandbits
    for i in range(len(items) - 1, 0, -1):
        bound = i + 1
        bits = bound.bit_length()
        j = getrandbits(bits)
        while j >= bound:
            j = getrandbits(bits)
        items[i], items[j] = items[j], items[i]


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
