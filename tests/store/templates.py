"""A migrated SQLite database, made once per test process and copied for each test.

Migrating a new SQLite file to the head costs about 0.4 s of CPU (Alembic's batch mode
rebuilds tables); the suite starts some three hundred fresh SQLite stores on two cores. A copy
of one migrated file is the same database for a fraction of that. The migration path itself
stays tested where it is the subject (tests/store/test_store_migrations.py migrates from empty).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

from sqlalchemy import make_url, text

from vollmond.store import create_engine, migrate

from .support import POSTGRES_URL

_template: Path | None = None


async def _migrated_template() -> Path:
    global _template  # noqa: PLW0603 - one template per test process
    if _template is None:
        path = Path(tempfile.mkdtemp(prefix="vollmond-template-")) / "template.sqlite3"
        await migrate(f"sqlite+aiosqlite:///{path}")
        _template = path
    return _template


async def seed_sqlite(path: Path) -> None:
    """Put a migrated database at `path` unless a database is there already."""
    if path.exists():
        return
    template = await _migrated_template()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    shutil.copyfile(template, path)


def sqlite_path(url: str) -> Path:
    """The file of a `sqlite+aiosqlite:///...` URL."""
    prefix = "sqlite+aiosqlite:///"
    if not url.startswith(prefix):
        raise ValueError(f"not a SQLite file URL: {url}")
    return Path(url.removeprefix(prefix))


# -- PostgreSQL ----------------------------------------------------------------------------------
# The same for PostgreSQL, whose tests each get a schema of their own: one schema per process is
# migrated and dumped with pg_dump (a real tool for exactly this); a test's schema is made by
# running that dump with the schema's name put in. Alembic's Python and the DDL it sends cost
# about 0.4 s per schema; the dump runs in one round trip.
_pg_dump: str | None = None
_PG_TEMPLATE = f"vollmond_tpl_{uuid.uuid4().hex[:16]}"


async def _postgres_dump() -> str:
    global _pg_dump  # noqa: PLW0603 - one dump per test process
    if _pg_dump is not None:
        return _pg_dump
    admin = create_engine(POSTGRES_URL)
    try:
        async with admin.begin() as connection:
            await connection.execute(text(f'CREATE SCHEMA "{_PG_TEMPLATE}"'))
        engine = create_engine(POSTGRES_URL, schema=_PG_TEMPLATE)
        try:
            await migrate(engine)
        finally:
            await engine.dispose()
        url = make_url(POSTGRES_URL)
        dump = subprocess.run(
            [
                "pg_dump",
                f"--host={url.host or '127.0.0.1'}",
                f"--port={url.port or 5432}",
                f"--username={url.username or 'postgres'}",
                f"--dbname={url.database or 'test'}",
                f"--schema={_PG_TEMPLATE}",
                "--no-owner",
                "--no-privileges",
                "--inserts",
            ],
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        ).stdout
    finally:
        async with admin.begin() as connection:
            await connection.execute(text(f'DROP SCHEMA IF EXISTS "{_PG_TEMPLATE}" CASCADE'))
        await admin.dispose()
    create = f"CREATE SCHEMA {_PG_TEMPLATE};"
    if create not in dump:
        raise RuntimeError(f"pg_dump gave no {create!r}")
    dump = dump.replace(create, f"CREATE SCHEMA IF NOT EXISTS {_PG_TEMPLATE};")
    # pg_dump 15.14 and newer fence the script with psql meta-commands (\restrict): not SQL.
    dump = "\n".join(line for line in dump.splitlines() if not line.startswith("\\"))
    _pg_dump = dump
    return dump


async def _run_sql(sql: str) -> None:
    """Several statements in one round trip (asyncpg's simple query protocol)."""
    admin = create_engine(POSTGRES_URL)
    try:
        async with admin.connect() as connection:
            raw = await connection.get_raw_connection()
            driver = raw.driver_connection
            assert driver is not None
            await driver.execute(sql)
    finally:
        await admin.dispose()


async def seed_postgres(schema: str) -> None:
    """Make the schema `schema` (new, or existing and empty) migrated to the head."""
    await _run_sql((await _postgres_dump()).replace(_PG_TEMPLATE, schema))


# A schema whose test has ended is emptied and lent to the next test of the same process:
# creating the forty-odd tables with their indexes and dropping them again cost PostgreSQL more
# CPU per test than most tests themselves (a fifth of the machine under the whole suite, by
# `perf`). Emptying is the dump's data part run again after deleting every row: the same rows
# (the migrations' own) and the same sequence values as a fresh copy.
_emptied: list[str] = []
_reset: str | None = None


async def _reset_sql() -> str:
    """Delete every row of the template's tables (foreign keys not checked while doing so),
    then put back the dump's rows and sequence values."""
    global _reset  # noqa: PLW0603 - one per test process, from the one dump
    if _reset is None:
        dump = await _postgres_dump()
        tables = re.findall(rf"^CREATE TABLE {_PG_TEMPLATE}\.(\w+) \(", dump, re.MULTILINE)
        if not tables:
            raise RuntimeError("pg_dump gave no CREATE TABLE")
        data = [
            line
            for line in dump.splitlines()
            if line.startswith(("INSERT INTO ", "SELECT pg_catalog.setval("))
        ]
        _reset = "\n".join(
            [
                "BEGIN;",
                "SET LOCAL lock_timeout = '10s';",
                "SET LOCAL session_replication_role = replica;",
                *(f"DELETE FROM {_PG_TEMPLATE}.{table};" for table in tables),
                *data,
                "COMMIT;",
            ]
        )
    return _reset


async def lend_postgres(prefix: str) -> str:
    """A migrated schema of its own for one test: an emptied one of this process or a new one."""
    if _emptied:
        return _emptied.pop()
    schema = f"{prefix}_{uuid.uuid4().hex[:16]}"
    await seed_postgres(schema)
    return schema


async def give_back_postgres(schema: str) -> None:
    """Empty the schema for the next test; one that cannot be emptied is dropped instead."""
    try:
        await _run_sql((await _reset_sql()).replace(_PG_TEMPLATE, schema))
    except Exception:  # whatever went wrong (a lock held too long...): a fresh one next time
        await _run_sql(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        return
    _emptied.append(schema)


async def drop_lent_schemas() -> None:
    """At the end of the test process: the emptied schemas are not left behind."""
    while _emptied:
        await _run_sql(f'DROP SCHEMA IF EXISTS "{_emptied.pop()}" CASCADE')
