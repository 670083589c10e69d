"""Migrations build the schema on an empty database and agree with the models."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, inspect, text
from sqlalchemy.ext.asyncio import AsyncEngine

from vollmond.store import create_engine, migrate, normalize_url, resolve_database_url
from vollmond.store.migrate import alembic_config, downgrade
from vollmond.store.models import Base

from .support import Target

CORE_TABLES = {
    "accounts",
    "credit_ledger",
    "game_commands",
    "game_events",
    "games",
    "grants",
    "karma_ledger",
    "phone_identities",
    "premium_periods",
}
# Every table the models declare, whoever added it; `test_models_match_migrations` checks
# that the migrations create exactly these, column by column.
EXPECTED_TABLES = set(Base.metadata.tables) | {"alembic_version"}


def test_core_tables_are_declared() -> None:
    assert CORE_TABLES <= EXPECTED_TABLES


def _head() -> str:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None
    return head


async def _tables(engine: AsyncEngine) -> set[str]:
    async with engine.connect() as connection:
        return set(await connection.run_sync(lambda c: inspect(c).get_table_names()))


async def _revision(engine: AsyncEngine) -> str | None:
    async with engine.connect() as connection:
        revision = await connection.scalar(text("SELECT version_num FROM alembic_version"))
    return None if revision is None else str(revision)


async def test_migrations_apply_on_empty_database(engine: AsyncEngine) -> None:
    assert await _tables(engine) == set()
    await migrate(engine)
    assert await _tables(engine) == EXPECTED_TABLES
    assert await _revision(engine) == _head()


async def test_migrate_twice_is_a_no_op(engine: AsyncEngine) -> None:
    await migrate(engine)
    await migrate(engine)
    assert await _revision(engine) == _head()


async def test_concurrent_starts_migrate_once(target: Target, engine: AsyncEngine) -> None:
    """Several service nodes starting together must not trip over each other's migration."""
    others = [create_engine(target.url, schema=target.schema) for _ in range(3)]
    try:
        await asyncio.gather(migrate(engine), *(migrate(other) for other in others))
    finally:
        for other in others:
            await other.dispose()
    assert await _tables(engine) == EXPECTED_TABLES
    assert await _revision(engine) == _head()


async def test_models_match_migrations(engine: AsyncEngine) -> None:
    """A model change without a migration (or the reverse) shows up here as a diff."""
    await migrate(engine)

    def diff(connection: Connection) -> list[Any]:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        return list(compare_metadata(context, Base.metadata))

    async with engine.connect() as connection:
        assert await connection.run_sync(diff) == []


async def test_downgrade_to_base_and_back(engine: AsyncEngine) -> None:
    await migrate(engine)
    await downgrade(engine, "base")
    assert await _tables(engine) == {"alembic_version"}
    await migrate(engine)
    assert await _tables(engine) == EXPECTED_TABLES


async def test_migrate_by_url_creates_the_sqlite_file(tmp_path: Path) -> None:
    data_dir = tmp_path / "nested" / "data"
    url = resolve_database_url(data_dir, environ={})
    await migrate(url)
    assert (data_dir / "vollmond.sqlite3").is_file()
    engine = create_engine(url)
    try:
        assert await _tables(engine) == EXPECTED_TABLES
    finally:
        await engine.dispose()


def test_database_url_prefers_environment(tmp_path: Path) -> None:
    url = resolve_database_url(tmp_path, environ={"DATABASE_URL": "postgres://u@db:5432/prod"})
    assert url.drivername == "postgresql+asyncpg"
    assert url.host == "db"
    assert url.database == "prod"


def test_database_url_defaults_to_sqlite_in_data_dir(tmp_path: Path) -> None:
    url = resolve_database_url(tmp_path, environ={"DATABASE_URL": "  "})
    assert url.drivername == "sqlite+aiosqlite"
    assert url.database == str(tmp_path.resolve() / "vollmond.sqlite3")


def test_unknown_backend_is_refused() -> None:
    with pytest.raises(ValueError, match="unsupported database backend"):
        normalize_url("mysql://u@h/db")
