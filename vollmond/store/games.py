"""Games: creation, lookup by invitation code, status changes, and what to resume at start."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from vollmond.store.db import Sessions
from vollmond.store.errors import GameExistsError, GameNotFoundError
from vollmond.store.hashing import invitation_code_hash, legacy_invitation_code_hash
from vollmond.store.models import GameRow, GameStatus
from vollmond.store.types import utcnow

SEED_MAX = 2**63 - 1
"""Seeds are stored as signed 64-bit integers (the widest integer both backends share)."""

UNFINISHED = (GameStatus.LOBBY, GameStatus.RUNNING)
_ENDED = (GameStatus.FINISHED, GameStatus.ABORTED)


@dataclass(frozen=True, slots=True)
class Game:
    """A game's stored header; its course is in the event log."""

    id: str
    world: str
    options: dict[str, Any]
    seed: int
    status: GameStatus
    private: bool
    host_account_id: int | None
    created_at: datetime
    finished_at: datetime | None
    ruleset: str = "standard"
    """The registry id of the rules this game is played by (`vollmond.engine.ruleset`)."""


def _game(row: GameRow) -> Game:
    return Game(
        id=row.id,
        world=row.world,
        options=row.options,
        seed=row.seed,
        status=GameStatus(row.status),
        private=row.invitation_hash is not None,
        host_account_id=row.host_account_id,
        created_at=row.created_at,
        finished_at=row.finished_at,
        ruleset=row.ruleset,
    )


def new_game_id() -> str:
    """Random, so ids in URLs reveal neither how many games exist nor which come next."""
    return uuid.uuid4().hex


async def create_game(
    sessions: Sessions,
    *,
    world: str,
    options: dict[str, Any],
    seed: int,
    ruleset: str = "standard",
    invitation_code: str | None = None,
    invitation_key: bytes | None = None,
    host_account_id: int | None = None,
    game_id: str | None = None,
    status: GameStatus = GameStatus.LOBBY,
    now: datetime | None = None,
) -> Game:
    """Store a new game; a private round passes its invitation code, of which only an HMAC
    with `invitation_key` (hashing.invitation_key) is kept.

    Raises GameExistsError if the id or the invitation code is already in use.
    """
    if not 0 <= seed <= SEED_MAX:
        raise ValueError(f"seed must be in 0..{SEED_MAX}")
    if invitation_code and invitation_key is None:
        raise ValueError("an invitation code is stored only as an HMAC: pass invitation_key")
    row = GameRow(
        id=game_id or new_game_id(),
        world=world,
        ruleset=ruleset,
        options=options,
        seed=seed,
        status=status,
        invitation_hash=(
            invitation_code_hash(invitation_code, invitation_key)
            if invitation_code and invitation_key is not None
            else None
        ),
        host_account_id=host_account_id,
        created_at=now or utcnow(),
        finished_at=None,
    )
    try:
        async with sessions.begin() as session:
            session.add(row)
    except IntegrityError as exc:
        raise GameExistsError(row.id) from exc
    return _game(row)


async def get_game(sessions: Sessions, game_id: str) -> Game:
    """The game with this id; raises GameNotFoundError."""
    async with sessions() as session:
        row = await session.get(GameRow, game_id)
    if row is None:
        raise GameNotFoundError(game_id)
    return _game(row)


async def find_game_by_invitation(sessions: Sessions, code: str, key: bytes) -> Game | None:
    """The private round this code invites to, if any (rate limiting is the caller's job).

    Rounds founded before migration 0005 were stored with a bare SHA-256 of their code; they
    are found by it too, and their row is rehashed to the HMAC right then (the one moment the
    code is known), so an open round's code keeps working across the upgrade.
    """
    try:
        current = invitation_code_hash(code, key)
        legacy = legacy_invitation_code_hash(code)
    except ValueError:
        return None
    async with sessions.begin() as session:
        row = await session.scalar(
            select(GameRow).where(GameRow.invitation_hash.in_((current, legacy)))
        )
        if row is not None and row.invitation_hash == legacy:
            await session.execute(
                update(GameRow).where(GameRow.id == row.id).values(invitation_hash=current)
            )
            row.invitation_hash = current
    return _game(row) if row else None


async def set_game_status(
    sessions: Sessions, game_id: str, status: GameStatus, *, now: datetime | None = None
) -> Game:
    """Move a game along its life cycle; ending it records when."""
    async with sessions.begin() as session:
        row = await session.get(GameRow, game_id, with_for_update=True)
        if row is None:
            raise GameNotFoundError(game_id)
        row.status = status
        if status in _ENDED and row.finished_at is None:
            row.finished_at = now or utcnow()
    return _game(row)


async def list_games(
    sessions: Sessions,
    *,
    statuses: Iterable[GameStatus] = UNFINISHED,
    world: str | None = None,
    include_private: bool = True,
) -> list[Game]:
    """Games in the given states (by default the ones a restarted server must resume)."""
    query = select(GameRow).where(GameRow.status.in_(list(statuses)))
    if world is not None:
        query = query.where(GameRow.world == world)
    if not include_private:
        query = query.where(GameRow.invitation_hash.is_(None))
    async with sessions() as session:
        rows = await session.scalars(query.order_by(GameRow.created_at, GameRow.id))
        return [_game(row) for row in rows]
