"""Seat codes: how a guest gets back to their seat after a dropped call.

A guest has no identity to be recognised by, so when seated they hear a short code (5 digits).
Calling back, ``4`` and the code restore the seat — at the table before the start, or in the
running game. The code stands for the seat's token (the same token the browser keeps), so it
is as good as the seat itself: it is random, only said to that caller, and guessing is bounded
per call and per source address. Codes live in the node's memory (a guest's seat is as
node-local as the call), one per seat, and die with their game.
"""

from __future__ import annotations

import secrets
import time
import weakref
from collections import deque
from dataclasses import dataclass, field
from typing import Final

from vollmond.service.hub import Hub

SEAT_CODE_DIGITS: Final = 5
WRONG_PER_CALL: Final = 3
WRONG_PER_SOURCE: Final = 10
SOURCE_WINDOW_S: Final = 3600.0


@dataclass(frozen=True, slots=True)
class HeldSeat:
    game_id: str
    token: str


@dataclass(slots=True)
class SeatCodes:
    """The codes of one hub's guest seats, and the wrong tries per source address."""

    seats: dict[str, HeldSeat] = field(default_factory=dict)
    by_token: dict[str, str] = field(default_factory=dict)
    wrong: dict[str, deque[float]] = field(default_factory=dict)

    def issue(self, game_id: str, token: str) -> str:
        """The seat's code (the same one again for the same seat)."""
        known = self.by_token.get(token)
        if known is not None:
            return known
        while True:
            code = f"{secrets.randbelow(10**SEAT_CODE_DIGITS):0{SEAT_CODE_DIGITS}d}"
            if code not in self.seats:
                break
        self.seats[code] = HeldSeat(game_id, token)
        self.by_token[token] = code
        return code

    def find(self, code: str) -> HeldSeat | None:
        return self.seats.get(code)

    def forget_game(self, game_id: str) -> None:
        for code, held in list(self.seats.items()):
            if held.game_id == game_id:
                del self.seats[code]
                self.by_token.pop(held.token, None)

    def blocked(self, source: str, now: float | None = None) -> bool:
        """Too many wrong codes from this source address within the window."""
        now = time.monotonic() if now is None else now
        tries = self.wrong.get(source)
        if tries is None:
            return False
        while tries and now - tries[0] > SOURCE_WINDOW_S:
            tries.popleft()
        return len(tries) >= WRONG_PER_SOURCE

    def count_wrong(self, source: str, now: float | None = None) -> None:
        self.wrong.setdefault(source, deque()).append(time.monotonic() if now is None else now)


_CODES: weakref.WeakKeyDictionary[Hub, SeatCodes] = weakref.WeakKeyDictionary()


def seat_codes(hub: Hub) -> SeatCodes:
    return _CODES.setdefault(hub, SeatCodes())
