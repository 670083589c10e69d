"""Fixtures running every store test against SQLite and the real PostgreSQL.

PostgreSQL tests are isolated by a schema per test (a new one, or one emptied after an earlier
test of the same process) instead of a fresh database, so they need no CREATEDB right and
cannot disturb other users of `test`.
If PostgreSQL is unreachable the tests fail loudly: a silently skipped backend would let
PostgreSQL-only bugs (locking, JSON, timestamps) slip through.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

from vollmond.store import Sessions, create_engine, make_sessionmaker, migrate

from .support import BACKENDS, POSTGRES_URL, Target
from .templates import give_back_postgres, lend_postgres, seed_sqlite, sqlite_path


@pytest.fixture(params=BACKENDS)
async def target(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Target]:
    backend: str = request.param
    if backend == "sqlite":
        yield Target(backend, f"sqlite+aiosqlite:///{tmp_path / 'data' / 'vollmond.sqlite3'}", None)
        return
    # A test that asks for `sessions` wants a migrated schema: one lent and emptied afterwards
    # (tests/store/templates.py); the others (migrations) get an empty one, dropped afterwards.
    migrated = "sessions" in request.fixturenames
    admin = create_engine(POSTGRES_URL)
    try:
        if migrated:
            schema = await lend_postgres("vollmond_test")
        else:
            schema = f"vollmond_test_{uuid.uuid4().hex[:16]}"
            async with admin.begin() as connection:
                await connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    except (OSError, TimeoutError, SQLAlchemyError) as exc:
        await admin.dispose()
        pytest.fail(
            f"PostgreSQL is required for the store tests but {POSTGRES_URL} failed: {exc!r}. "
            "Start it with `pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main "
            "start` or point VOLLMOND_TEST_POSTGRES_URL at a server.",
            pytrace=False,
        )
    try:
        yield Target(backend, POSTGRES_URL, schema)
    finally:
        if migrated:
            await give_back_postgres(schema)
        else:
            async with admin.begin() as connection:
                await connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        await admin.dispose()


@pytest.fixture
async def engine(target: Target) -> AsyncIterator[AsyncEngine]:
    """An engine on an empty database; disposed so no connection outlives the test."""
    engine = create_engine(target.url, schema=target.schema)
    try:
        yield engine
    finally:
        await engine.dispose()


@pytest.fixture
async def sessions(target: Target, engine: AsyncEngine) -> Sessions:
    """A migrated database, as the service sees it at start (SQLite: a copy of one migrated
    file, tests/store/templates.py)."""
    if target.backend == "sqlite":
        await seed_sqlite(sqlite_path(target.url))
    await migrate(engine)  # PostgreSQL: the lent schema is migrated already (`target`)
    return make_sessionmaker(engine)
