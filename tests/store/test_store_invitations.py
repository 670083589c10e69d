"""Invitation codes at rest (issue 8): an HMAC with the service key, never a bare SHA-256.

A copy of the database alone must not let anyone find a private round's 50-bit code by trying
them all. Rounds founded before the upgrade keep their code while they are open (migration 0005).
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncEngine

from vollmond.store import (
    GameStatus,
    Sessions,
    create_game,
    find_game_by_invitation,
    get_game,
    make_sessionmaker,
    migrate,
)
from vollmond.store.hashing import invitation_key
from vollmond.store.migrate import downgrade
from vollmond.store.models import GameRow

KEY = invitation_key("the service secret from secret.key")
OPTIONS: dict[str, Any] = {"size": 5}
CODE = "MOND4711XQ"


def sha256(code: str) -> str:
    return hashlib.sha256(code.casefold().encode()).hexdigest()


async def stored_hash(sessions: Sessions, game_id: str) -> str | None:
    async with sessions() as session:
        return await session.scalar(select(GameRow.invitation_hash).where(GameRow.id == game_id))


async def test_the_stored_hash_cannot_be_checked_without_the_service_key(
    sessions: Sessions,
) -> None:
    game = await create_game(
        sessions, world="werwolf", options=OPTIONS, seed=1, invitation_code=CODE, invitation_key=KEY
    )
    stored = await stored_hash(sessions, game.id)
    assert stored is not None
    # What an attacker with the database computes for each guess finds nothing …
    assert stored != sha256(CODE)
    assert stored != hashlib.sha256(CODE.encode()).hexdigest()
    # … and neither does the service with another key: the key is part of the hash.
    assert await find_game_by_invitation(sessions, CODE, invitation_key("another")) is None
    found = await find_game_by_invitation(sessions, "mond 4711 xq", KEY)
    assert found is not None and found.id == game.id


async def legacy_round(sessions: Sessions, game_id: str, code: str, status: GameStatus) -> None:
    """A private round as the service stored it before migration 0005."""
    async with sessions.begin() as session:
        await session.execute(
            insert(GameRow).values(
                id=game_id,
                world="werwolf",
                options=OPTIONS,
                seed=7,
                status=status,
                invitation_hash=sha256(code),
                host_account_id=None,
                created_at=datetime(2026, 11, 1, tzinfo=UTC),
                finished_at=None,
            )
        )


async def test_upgrade_keeps_open_rounds_and_retires_ended_rounds_codes(
    engine: AsyncEngine,
) -> None:
    await migrate(engine)
    await downgrade(engine, "0004")
    old = make_sessionmaker(engine)
    await legacy_round(old, "open", "OPENROUND2", GameStatus.LOBBY)
    await legacy_round(old, "ended", "ENDEDROUND", GameStatus.FINISHED)
    await migrate(engine)
    sessions = make_sessionmaker(engine)

    # An ended round: nothing left to brute-force, but it is still a private round.
    assert await stored_hash(sessions, "ended") != sha256("ENDEDROUND")
    assert (await get_game(sessions, "ended")).private
    assert await find_game_by_invitation(sessions, "ENDEDROUND", KEY) is None

    # An open round: its players' code still works, and using it rehashes the row.
    assert await stored_hash(sessions, "open") == sha256("OPENROUND2")
    found = await find_game_by_invitation(sessions, "openround2", KEY)
    assert found is not None and found.id == "open" and found.private
    assert await stored_hash(sessions, "open") not in (None, sha256("OPENROUND2"))
    again = await find_game_by_invitation(sessions, "OPENROUND2", KEY)
    assert again is not None and again.id == "open"
