"""Guests' seat codes for the telephone channel, as the hub hands them out.

The telephone does not open the store (tests/test_architecture.py): the announcer asks this
service, which the hub builds on its own sessions and invitation key. The codes themselves
(hashed, one per seat, with an expiry) are :mod:`vollmond.store.seat_codes`'.
"""

from __future__ import annotations

from vollmond.store import Sessions
from vollmond.store.seat_codes import HeldSeat, find_seat_code, issue_seat_code, renew_seat_token

__all__ = ["HeldSeat", "SeatCodes"]


class SeatCodes:
    """Issue a guest's code for its seat, find the seat a code stands for, hand it back."""

    def __init__(self, sessions: Sessions, key: bytes) -> None:
        self._sessions = sessions
        self._key = key

    async def issue(self, game_id: str, seat_id: int, *, digits: int, ttl_s: float) -> str:
        return await issue_seat_code(
            self._sessions, self._key, game_id=game_id, seat_id=seat_id, digits=digits, ttl_s=ttl_s
        )

    async def find(self, code: str) -> HeldSeat | None:
        return await find_seat_code(self._sessions, self._key, code)

    async def renew_token(self, held: HeldSeat) -> str | None:
        """A new token for the seat (the old one stops working); None if the seat is gone."""
        return await renew_seat_token(self._sessions, held)
