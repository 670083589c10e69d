"""Moderation tests run on SQLite and the real PostgreSQL, like the store tests whose
per-test database fixtures they reuse; time is a clock the test moves by hand."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.store.conftest import engine, sessions, target
from vollmond.moderation import Moderation
from vollmond.settings.moderation import ModerationSettings
from vollmond.store import Role, Sessions, create_game
from vollmond.store.hashing import hash_secret
from vollmond.store.models import AccountRow, PhoneIdentityRow
from vollmond.store.phone import normalize_number

__all__ = ["engine", "sessions", "target"]

START = datetime(2026, 12, 1, 20, 0, tzinfo=UTC)


class Clock:
    """The only time the code under test sees; tests move it forward explicitly."""

    def __init__(self, now: datetime = START) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> datetime:
        self.now += timedelta(**delta)
        return self.now


class People:
    """Account ids of one admin, one moderator and two players."""

    def __init__(self, admin: int, moderator: int, alice: int, bob: int) -> None:
        self.admin = admin
        self.moderator = moderator
        self.alice = alice
        self.bob = bob


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def settings() -> ModerationSettings:
    return ModerationSettings(moderator_ban_max_hours=48)


@pytest.fixture
async def people(sessions: Sessions) -> People:
    """Inserted directly: these accounts never log in, and four argon2 hashes per test would
    be most of the suite's time."""
    rows = [
        AccountRow(name=name, name_key=name.casefold(), password_hash="-", role=role)
        for name, role in (
            ("Ada", Role.ADMIN),
            ("Mo", Role.MODERATOR),
            ("Alice", Role.PLAYER),
            ("Bob", Role.PLAYER),
        )
    ]
    async with sessions.begin() as session:
        session.add_all(rows)
    return People(*(row.id for row in rows))


@pytest.fixture
async def game_id(sessions: Sessions) -> str:
    game = await create_game(sessions, world="werwolf", options={}, seed=1, game_id="g1")
    return game.id


@pytest.fixture
def moderation(
    sessions: Sessions, settings: ModerationSettings, tmp_path: Path, clock: Clock
) -> Moderation:
    return Moderation(sessions, settings, tmp_path / "data", clock=clock)


async def phone_identity(
    sessions: Sessions,
    *,
    number: str | None = None,
    pin: str | None = None,
    account_id: int | None = None,
) -> int:
    """A phone identity as the telephone identity code leaves it (a verified number and/or a
    PIN, maybe linked); inserted directly so these tests do not depend on how numbers get
    verified."""
    row = PhoneIdentityRow(
        number=normalize_number(number) if number is not None else None,
        pin_hash=await hash_secret(pin) if pin is not None else None,
        account_id=account_id,
        created_at=START,
    )
    async with sessions.begin() as session:
        session.add(row)
    return row.id
