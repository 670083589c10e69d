"""Alembic environment for the store.

Two ways in: `vollmond.store.migrate.migrate()` hands over an open (sync-facing) connection of
the async engine through `config.attributes["connection"]`; the Alembic CLI (developers only)
gets none, so an async engine is built here from `DATABASE_URL` or the default SQLite file.
"""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy import Connection

from vollmond.store.db import create_engine, resolve_database_url
from vollmond.store.models import Base

TARGET_METADATA = Base.metadata


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=TARGET_METADATA,
        # SQLite cannot ALTER most things; batch mode rebuilds the table instead.
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


async def _run_with_own_engine() -> None:
    url = context.config.get_main_option("sqlalchemy.url") or resolve_database_url()
    engine = create_engine(url)
    try:
        async with engine.connect() as connection:
            await connection.run_sync(_run)
            await connection.commit()
    finally:
        await engine.dispose()


def _main() -> None:
    if context.is_offline_mode():
        raise RuntimeError("offline (SQL script) migrations are not supported")
    connection = context.config.attributes.get("connection")
    if isinstance(connection, Connection):
        _run(connection)
    else:
        asyncio.run(_run_with_own_engine())


_main()
