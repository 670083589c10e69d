"""Seats: join and leave a lobby, number the houses at the start, find a seat by its token.

A seat's token is the player's key to their seat across reconnects; only its hash is kept.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, select, update

from vollmond.store.db import Sessions
from vollmond.store.models.seats import SeatRow
from vollmond.store.types import utcnow


@dataclass(frozen=True, slots=True)
class Seat:
    id: int
    game_id: str
    account_id: int | None
    name: str
    channel: str
    house: int | None
    joined_at: datetime
    #: The phone identity the seat was taken with (its karma's owner without an account).
    phone_identity_id: int | None = None


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _seat(row: SeatRow) -> Seat:
    return Seat(
        row.id,
        row.game_id,
        row.account_id,
        row.name,
        row.channel,
        row.house,
        row.joined_at,
        row.phone_identity_id,
    )


async def add_seat(
    sessions: Sessions,
    game_id: str,
    *,
    account_id: int | None,
    name: str,
    channel: str,
    token: str,
    phone_identity_id: int | None = None,
    now: datetime | None = None,
) -> Seat:
    row = SeatRow(
        game_id=game_id,
        account_id=account_id,
        phone_identity_id=phone_identity_id,
        name=name,
        channel=channel,
        token_hash=token_hash(token),
        house=None,
        joined_at=now or utcnow(),
    )
    async with sessions.begin() as session:
        session.add(row)
    return _seat(row)


async def remove_seat(sessions: Sessions, seat_id: int) -> None:
    async with sessions.begin() as session:
        await session.execute(delete(SeatRow).where(SeatRow.id == seat_id))


async def list_seats(sessions: Sessions, game_id: str) -> list[Seat]:
    """Seats in join order (house order once numbered)."""
    async with sessions() as session:
        rows = await session.scalars(
            select(SeatRow).where(SeatRow.game_id == game_id).order_by(SeatRow.id)
        )
        return [_seat(row) for row in rows]


async def seats_of_account(sessions: Sessions, account_id: int) -> list[Seat]:
    """Every seat an account holds, newest first (its games may be finished; the caller
    filters): the seat belongs to the account, not to one browser's storage (issue 12)."""
    async with sessions() as session:
        rows = await session.scalars(
            select(SeatRow).where(SeatRow.account_id == account_id).order_by(SeatRow.id.desc())
        )
        return [_seat(row) for row in rows]


async def seat_by_token(sessions: Sessions, game_id: str, token: str) -> Seat | None:
    async with sessions() as session:
        row = await session.scalar(
            select(SeatRow).where(
                SeatRow.game_id == game_id, SeatRow.token_hash == token_hash(token)
            )
        )
        return _seat(row) if row is not None else None


async def number_houses(sessions: Sessions, game_id: str) -> list[Seat]:
    """At the start: house numbers 1..N in join order, fixed for the game (W2)."""
    async with sessions.begin() as session:
        rows = list(
            await session.scalars(
                select(SeatRow)
                .where(SeatRow.game_id == game_id)
                .order_by(SeatRow.id)
                .with_for_update()
            )
        )
        for house, row in enumerate(rows, start=1):
            await session.execute(update(SeatRow).where(SeatRow.id == row.id).values(house=house))
            row.house = house
        return [_seat(row) for row in rows]
