"""Engine and session factories, and where the database lives.

Nothing here is global: the service builds one engine at start, passes its sessionmaker to
whoever needs the store, and disposes the engine at shutdown.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeAlias

from sqlalchemy import URL, event, make_url, text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.exc import TimeoutError as _PoolTimeoutError
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

Sessions: TypeAlias = async_sessionmaker[AsyncSession]
"""What every store function takes: each call opens its own short transaction from it."""

#: Every connection of the store stayed in use for the pool's whole timeout: the service is
#: overloaded, nothing is broken. Where a person waits for an answer, this is "busy, try
#: again", not a fault.
StoreBusyError = _PoolTimeoutError

DEFAULT_DATA_DIR = Path("data")
SQLITE_FILENAME = "vollmond.sqlite3"
DATABASE_URL_ENV = "DATABASE_URL"

# How long a SQLite writer waits for the file lock before failing; writes are short, so a
# timeout means something is stuck rather than merely busy.
SQLITE_BUSY_TIMEOUT_MS = 15_000


def resolve_database_url(
    data_dir: Path | str | None = None, environ: Mapping[str, str] | None = None
) -> URL:
    """Pick the database: `DATABASE_URL` if set, else the SQLite file in the data directory.

    `postgres://` and `postgresql://` URLs (as hosting providers hand them out) are mapped to
    the asyncpg driver, plain `sqlite://` to aiosqlite, because the store is async only.
    """
    env = os.environ if environ is None else environ
    raw = env.get(DATABASE_URL_ENV, "").strip()
    if raw:
        return normalize_url(raw)
    directory = Path(data_dir) if data_dir is not None else DEFAULT_DATA_DIR
    return URL.create("sqlite+aiosqlite", database=str(directory.resolve() / SQLITE_FILENAME))


def normalize_url(url: str | URL) -> URL:
    """Map a database URL onto the async driver the store uses for its backend."""
    parsed = make_url(url) if isinstance(url, str) else url
    backend = parsed.get_backend_name()
    if backend in ("postgres", "postgresql"):
        return parsed.set(drivername="postgresql+asyncpg")
    if backend == "sqlite":
        return parsed.set(drivername="sqlite+aiosqlite")
    raise ValueError(f"unsupported database backend {backend!r}; use sqlite or postgresql")


def create_engine(url: str | URL, *, schema: str | None = None, echo: bool = False) -> AsyncEngine:
    """Build the async engine with the per-backend settings the store relies on.

    `schema` (PostgreSQL only) puts every table in that schema via `search_path`; tests use it
    to isolate themselves, deployments may use it to share a database.
    """
    parsed = normalize_url(url)
    connect_args: dict[str, Any] = {}
    if parsed.get_backend_name() == "sqlite":
        if schema is not None:
            raise ValueError("schemas are a PostgreSQL feature; SQLite uses one file per store")
        database = parsed.database or ""
        if database and database != ":memory:" and not database.startswith("file:"):
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        connect_args["timeout"] = SQLITE_BUSY_TIMEOUT_MS / 1000
    elif schema is not None:
        connect_args["server_settings"] = {"search_path": schema}
    engine = create_async_engine(parsed, echo=echo, connect_args=connect_args)
    if parsed.get_backend_name() == "sqlite":
        event.listen(engine.sync_engine, "connect", _configure_sqlite)
    return engine


def _configure_sqlite(dbapi_connection: Any, _connection_record: Any) -> None:
    """Per-connection SQLite settings: enforce foreign keys, let readers run beside a writer."""
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
    finally:
        cursor.close()


def make_sessionmaker(engine: AsyncEngine) -> Sessions:
    """Sessions that keep loaded values after commit, since results outlive the transaction."""
    return async_sessionmaker(engine, expire_on_commit=False)


async def database_answers(sessions: Sessions, timeout_s: float = 2.0) -> bool:
    """Whether the database answers a trivial query within `timeout_s`: `/healthz` says a node
    that cannot reach it is not healthy (every command would fail there), so a load balancer
    or an operator's monitoring sees it. A dead pooled connection found here is dropped by the
    pool, so the next check after the database is back answers again."""
    try:
        async with asyncio.timeout(timeout_s), sessions() as session:
            await session.execute(text("SELECT 1"))
    except (TimeoutError, OSError, SQLAlchemyError):
        return False
    return True
