"""Bring a database to the newest schema; called once at service start.

Alembic is configured from code so that an installed service needs no `alembic.ini` and no
working-directory assumptions. Operators can run `python -m vollmond.store`; developers
can use the Alembic CLI with
`vollmond/store/migrations/alembic.ini`.

Alembic itself is imported only when a migration runs: a database already at the head (every
restart, every worker of `--workers`) is recognised from the scripts' source
(`scripts_head`), without Alembic's imports or executing every script (docs/decisions.md,
"Start-up").
"""

from __future__ import annotations

import ast
import functools
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import URL, Connection, inspect, text
from sqlalchemy.ext.asyncio import AsyncEngine

from vollmond.store.db import Sessions, create_engine, make_sessionmaker

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"

# Arbitrary but fixed key: several service nodes sharing one PostgreSQL may start together, and
# only one of them must run the migrations while the others wait.
_MIGRATION_LOCK_KEY = 0x766F6C6C6D6F6E64  # "vollmond"


def alembic_config() -> Config:
    """An Alembic config pointing at the packaged migrations, independent of the cwd."""
    # Alembic (0.1 s of CPU to import) only where it is used (start-up cost, issue 16).
    from alembic.config import Config  # noqa: PLC0415

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    return config


@functools.cache
def head_revision() -> str | None:
    """The newest revision of the packaged migrations (read once per process): from the
    scripts' source, or, should they ever not form one chain, as Alembic finds it."""
    head = scripts_head(MIGRATIONS_DIR / "versions")
    if head is not None:
        return head
    from alembic.script import ScriptDirectory  # noqa: PLC0415 - see scripts_head

    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def scripts_head(versions: Path) -> str | None:
    """The head of the revision scripts in `versions`, from each script's literal `revision`
    and `down_revision` (parsed, not executed), when they form one unbranched chain; None for
    anything else (no scripts, a value that is not a literal, a branch, a merge, a gap), which
    `head_revision` leaves to Alembic. Alembic would import every script (and itself) to
    answer the same.
    """
    parents: dict[str, str | None] = {}
    for path in sorted(versions.glob("*.py")):
        if path.name == "__init__.py":
            continue
        values = _literals(path.read_text(encoding="utf-8"))
        revision, parent = values.get("revision"), values.get("down_revision", ...)
        if not isinstance(revision, str) or not (parent is None or isinstance(parent, str)):
            return None
        if revision in parents:
            return None
        parents[revision] = parent
    child_of = {parent: revision for revision, parent in parents.items()}
    if len(child_of) != len(parents):
        return None  # two scripts on one parent: a branch, or two first revisions
    chain = [child_of[None]] if None in child_of else []
    while chain and chain[-1] in child_of and len(chain) <= len(parents):
        chain.append(child_of[chain[-1]])
    return chain[-1] if chain and len(chain) == len(parents) else None


def _literals(source: str) -> dict[str, object]:
    """The module-level names `source` assigns a literal (`x = "a"`, `x: str = "a"`)."""
    found: dict[str, object] = {}
    for node in ast.parse(source).body:
        target: ast.expr
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if isinstance(target, ast.Name) and isinstance(value, ast.Constant):
            found[target.id] = value.value
    return found


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
    from alembic import command  # noqa: PLC0415 - Alembic when a migration runs

    config = alembic_config()
    config.attributes["connection"] = connection
    command.upgrade(config, revision)


def _downgrade(connection: Connection, revision: str) -> None:
    from alembic import command  # noqa: PLC0415 - Alembic when a migration runs

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
