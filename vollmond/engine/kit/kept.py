"""Answers kept by the identity of the immutable value they were worked out from.

States (and the tuples inside them) are immutable once `apply` returned them, so whatever is
worked out from one (a view's shared part, the menus' targets, who has won) holds as long as
that very object lives. A `Kept` remembers the last `limit` answers by the object's id; each
entry holds the object itself, so its id cannot be taken by another object while kept, and a
hit is only a hit if it is the same object. The oldest answer goes first (a fan-out or a bot
game asks about the newest state). Bot games may run in worker threads (the balance
preview): two threads may work out the same answer, and an eviction may find the entry gone.
"""

from __future__ import annotations

from collections import OrderedDict
from enum import Enum
from typing import Generic, Literal, TypeVar

K = TypeVar("K")
A = TypeVar("A")


class Missing(Enum):
    """Nothing kept (None may be a kept answer)."""

    MISSING = 0


MISSING = Missing.MISSING


class Kept(Generic[K, A]):
    __slots__ = ("_entries", "limit")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._entries: OrderedDict[int, tuple[K, A]] = OrderedDict()

    def get(self, value: K) -> A | Literal[Missing.MISSING]:
        """The answer kept for this very object, or MISSING."""
        hit = self._entries.get(id(value))
        return hit[1] if hit is not None and hit[0] is value else MISSING

    def put(self, value: K, answer: A) -> A:
        """Keep `answer` for `value` (the oldest goes beyond `limit`); returns it."""
        entries = self._entries
        entries[id(value)] = (value, answer)
        if len(entries) > self.limit:
            # Not contextlib.suppress: a context manager costs more than the rest of `put`,
            # and in a bot game nearly every new state evicts one.
            try:  # noqa: SIM105
                entries.popitem(last=False)
            except KeyError:  # another thread evicted it first
                pass
        return answer

    def clear(self) -> None:
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)
