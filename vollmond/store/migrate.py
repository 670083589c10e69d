"""Bring a database to the newest schema; called once at service start.

Alembic is configured from code so that an installed service needs no `alembic.ini` and no
working-directory assumptions. Operators can run `python -m vollmond.store`; developers
can use the Alembic CLI with
`vollmond/store/migrations/alembic.ini`.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import URL, Connection, inspect, text
from sqlalchemy.ext.asyncio import AsyncEngine

from vollmond.store.db import Sessions, create_engine, make_sessionmaker

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"

# Arbitrary but fixed key: several service nodes sharing one PostgreSQL may start together, and
# only one of them must run the migrations while the others wait.
_MIGRATION_LOCK_KEY = 0x766F6C6C6D6F6E64  # "vollmond"


def alembic_config() -> Config:
    """An Alembic config pointing at the packaged migrations, independent of the cwd."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    return config


@functools.cache
def head_revision() -> str | None:
    """The newest revision of the packaged migrations (read once per process)."""
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def _current_revision(connection: Connection) -> str | None:
    if not inspect(connection).has_table("alembic_version"):
        return None
    revision = connection.execute(text("SELECT version_num FROM alembic_version")).scalar()
    return None if revision is None else str(revision)


def _upgrade(connection: Connection, revision: str) -> None:
    # A database already at the head (every restart) needs no Alembic run: it would load and
    # compile every migration script to find nothing to do.
    if revision == "head" and _current_revision(connection) == head_revision():
        return
    config = alembic_config()
    config.attributes["connection"] = connection
    command.upgrade(config, revision)


def _downgrade(connection: Connection, revision: str) -> None:
    config = alembic_config()
    config.attributes["connection"] = connection
    command.downgrade(config, revision)


async def _run_locked(
    target: str | URL | AsyncEngine, step: Callable[[Connection, str], None], revision: str
) -> None:
    engine = target if isinstance(target, AsyncEngine) else create_engine(target)
    try:
        async with engine.begin() as connection:
            if connection.dialect.name == "postgresql":
                await connection.execute(
                    text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK_KEY}
                )
            elif connection.dialect.name == "sqlite":
                # The sqlite3 module would otherwise run DDL outside any transaction: a failed
                # migration would be left half done and two processes could race. An explicit
                # write transaction makes the upgrade atomic there too.
                await connection.exec_driver_sql("BEGIN IMMEDIATE")
            await connection.run_sync(step, revision)
    finally:
        if engine is not target:
            await engine.dispose()


async def migrate(target: str | URL | AsyncEngine, revision: str = "head") -> None:
    """Upgrade the database at `target` (a URL or an engine) to `revision`.

    An engine is accepted so callers with special connection settings (a PostgreSQL schema)
    migrate exactly the database they will use; an engine built here is disposed here.
    The upgrade runs as one transaction holding a lock (an advisory lock on PostgreSQL, the
    write lock on SQLite), so concurrent starts migrate once and a failure leaves nothing behind.
    """
    await _run_locked(target, _upgrade, revision)


async def downgrade(target: str | URL | AsyncEngine, revision: str) -> None:
    """Step the schema back to `revision` ("base" drops everything); for operators and tests."""
    await _run_locked(target, _downgrade, revision)


@asynccontextmanager
async def open_store(
    url: str | URL, *, schema: str | None = None, migrate_to_head: bool = True
) -> AsyncIterator[Sessions]:
    """Engine, migrations and sessionmaker for the lifetime of a service; disposed on exit."""
    engine = create_engine(url, schema=schema)
    try:
        if migrate_to_head:
            await migrate(engine)
        yield make_sessionmaker(engine)
    finally:
        await engine.dispose()
