"""Guest seat codes in the store: a guest who drops calls back and types the code (issue 11).

A code stands for one seat. Only its HMAC is kept (`hashing.seat_code_hash`), with an expiry;
the seat's token is not kept at all: a code that is typed gives the seat a new token (the old
one was the dropped call's and is no longer held by anyone), so nothing in the database lets a
reader take a seat. Codes outlive a restart of the service, which memory did not.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError

from vollmond.store.db import Sessions
from vollmond.store.hashing import seat_code_hash
from vollmond.store.models.seats import SeatCodeRow, SeatRow
from vollmond.store.seats import token_hash
from vollmond.store.types import utcnow

ISSUE_TRIES = 20
"""Random codes tried before giving up (a code in use is drawn again)."""


@dataclass(frozen=True, slots=True)
class HeldSeat:
    """What a seat code stands for."""

    game_id: str
    seat_id: int


async def issue_seat_code(
    sessions: Sessions,
    key: bytes,
    *,
    game_id: str,
    seat_id: int,
    digits: int,
    ttl_s: float,
    now: datetime | None = None,
) -> str:
    """A fresh code for the seat, kept `ttl_s` seconds; the seat's earlier code and every
    expired code are forgotten."""
    now = now or utcnow()
    async with sessions.begin() as session:
        await session.execute(
            delete(SeatCodeRow).where(
                (SeatCodeRow.seat_id == seat_id) | (SeatCodeRow.expires_at <= now)
            )
        )
    for _ in range(ISSUE_TRIES):
        code = f"{secrets.randbelow(10**digits):0{digits}d}"
        row = SeatCodeRow(
            code_hash=seat_code_hash(code, key),
            seat_id=seat_id,
            game_id=game_id,
            expires_at=now + timedelta(seconds=ttl_s),
        )
        try:
            async with sessions.begin() as session:
                session.add(row)
        except IntegrityError:
            continue  # the code is another seat's
        return code
    raise RuntimeError("no free seat code")


async def find_seat_code(
    sessions: Sessions, key: bytes, code: str, now: datetime | None = None
) -> HeldSeat | None:
    """The seat a code stands for, while it has not expired."""
    now = now or utcnow()
    async with sessions() as session:
        row = await session.scalar(
            select(SeatCodeRow).where(
                SeatCodeRow.code_hash == seat_code_hash(code, key), SeatCodeRow.expires_at > now
            )
        )
        return HeldSeat(row.game_id, row.seat_id) if row is not None else None


async def renew_seat_token(sessions: Sessions, held: HeldSeat) -> str | None:
    """A new token for the seat (the caller's key to it from now on); None if it is gone."""
    token = secrets.token_urlsafe(24)
    async with sessions.begin() as session:
        done = await session.execute(
            update(SeatRow)
            .where(SeatRow.id == held.seat_id, SeatRow.game_id == held.game_id)
            .values(token_hash=token_hash(token))
        )
    return token if done.rowcount else None  # type: ignore[attr-defined]
