"""Seats that belong to the signed-in account (issue 12): "Meine Spiele" from the server, and
the seat a signed-in device takes over the WebSocket without that browser's seat token.

Guests (no account) keep using seat tokens. A seat found by account is the same seat: the
server sends it exactly what the token would have.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vollmond.service.hub import Hub
from vollmond.store.games import get_game
from vollmond.store.models import GameStatus
from vollmond.store.seats import Seat, list_seats, seats_of_account

#: How many of an account's games "Meine Spiele" lists.
MY_GAMES_LIMIT = 20
OPEN_STATUSES = (GameStatus.LOBBY, GameStatus.RUNNING)


@dataclass(frozen=True, slots=True)
class AccountSeat:
    game_id: str
    world: str
    status: str
    house: int | None
    host: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "game": self.game_id,
            "world": self.world,
            "status": self.status,
            "house": self.house,
            "host": self.host,
        }


async def open_seats(hub: Hub, account_id: int) -> list[AccountSeat]:
    """The account's seats in games not yet finished, newest first."""
    out: list[AccountSeat] = []
    for seat in await seats_of_account(hub.sessions, account_id):
        game = await get_game(hub.sessions, seat.game_id)
        if game.status not in OPEN_STATUSES:
            continue
        host = game.host_account_id == account_id
        out.append(AccountSeat(game.id, game.world, game.status.value, seat.house, host))
        if len(out) >= MY_GAMES_LIMIT:
            break
    return out


async def account_seat(hub: Hub, game_id: str, account_id: int) -> Seat | None:
    """The account's numbered seat in one game, or None."""
    for seat in await list_seats(hub.sessions, game_id):
        if seat.account_id == account_id and seat.house is not None:
            return seat
    return None
