"""A migrated SQLite database, made once per test process and copied for each test.

Migrating a new SQLite file to the head costs about 0.4 s of CPU (Alembic's batch mode
rebuilds tables); the suite starts some three hundred fresh SQLite stores on two cores. A copy
of one migrated file is the same database for a fraction of that. The migration path itself
stays tested where it is the subject (tests/store/test_store_migrations.py migrates from empty).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from vollmond.store import migrate

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
