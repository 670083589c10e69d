"""Seat codes: how a guest gets back to their seat after a dropped call.

A guest has no identity to be recognised by, so when seated they hear a short code (4-6
digits, the operator's ``[phone] seat_code_digits``). Calling back, ``4`` and the code restore
the seat — at the table before the start, or in the running game. The codes are kept in the
store (`vollmond.store.seat_codes`: hashed, with an expiry), so they survive a restart of the
service. Guessing is bounded per call and per source address (``[phone] seat_code_tries_*``);
the wrong tries per source are counted here, in the node's memory, like the calls themselves.
"""

from __future__ import annotations

import time
import weakref
from collections import deque
from dataclasses import dataclass, field

from vollmond.service.hub import Hub
from vollmond.settings import PhoneSettings


@dataclass(slots=True)
class WrongCodes:
    """Wrong seat codes per source address, within the operator's window."""

    tries: dict[str, deque[float]] = field(default_factory=dict)

    def blocked(self, source: str, settings: PhoneSettings, now: float | None = None) -> bool:
        """Too many wrong codes from this source address within the window."""
        now = time.monotonic() if now is None else now
        tries = self.tries.get(source)
        if tries is None:
            return False
        while tries and now - tries[0] > settings.seat_code_source_window_s:
            tries.popleft()
        return len(tries) >= settings.seat_code_tries_per_source

    def count(self, source: str, now: float | None = None) -> None:
        self.tries.setdefault(source, deque()).append(time.monotonic() if now is None else now)


_WRONG: weakref.WeakKeyDictionary[Hub, WrongCodes] = weakref.WeakKeyDictionary()


def wrong_codes(hub: Hub) -> WrongCodes:
    return _WRONG.setdefault(hub, WrongCodes())
