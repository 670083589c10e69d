"""Answers kept by the identity of the immutable value they were worked out from.

States (and the tuples inside them) are immutable once `apply` returned them, so whatever is
worked out from one (a view's shared part, the menus' targets, who has won) holds as long as
that very object lives. A `Kept` remembers the last `limit` answers by the object's id; each
entry holds the object itself, so its id cannot be taken by another object while kept, and a
hit is only a hit if it is the same object. The oldest answer goes first (a fan-out or a bot
game asks about the newest state). Bot games may run in worker threads (the balance
preview): two threads may work out the same answer, and an eviction may find the entry gone.

The entry asked last is also held on its own and compared first: a bot game asks the same
state (or players' tuple) a dozen times in a row, and one identity test is cheaper than an
`id` call and a dictionary lookup. The entries are a plain dictionary (insertion order is
age; the oldest is the first key), which costs less per entry than an `OrderedDict`.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Generic, Literal, TypeVar

K = TypeVar("K")
A = TypeVar("A")


class Missing(Enum):
    """Nothing kept (None may be a kept answer)."""

    MISSING = 0


MISSING = Missing.MISSING

_NOBODY: tuple[Any, Any] = (object(), None)
"""The last entry before there is one: no value is this fresh object."""


class Kept(Generic[K, A]):
    __slots__ = ("_entries", "_last", "limit")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._entries: dict[int, tuple[K, A]] = {}
        self._last: tuple[K, A] = _NOBODY

    def get(self, value: K) -> A | Literal[Missing.MISSING]:
        """The answer kept for this very object, or MISSING."""
        last = self._last  # one read: another thread may replace it, never half
        if last[0] is value:
            return last[1]
        hit = self._entries.get(id(value))
        if hit is None or hit[0] is not value:
            return MISSING
        self._last = hit
        return hit[1]

    def put(self, value: K, answer: A) -> A:
        """Keep `answer` for `value` (the oldest goes beyond `limit`); returns it."""
        entries = self._entries
        entries[id(value)] = self._last = (value, answer)
        if len(entries) > self.limit:
            # Not contextlib.suppress: a context manager costs more than the rest of `put`,
            # and in a bot game nearly every new state evicts one.
            try:  # noqa: SIM105
                del entries[next(iter(entries))]
            except (KeyError, RuntimeError, StopIteration):
                pass  # another thread changed the entries between our two steps
        return answer

    def clear(self) -> None:
        self._last = _NOBODY
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)
