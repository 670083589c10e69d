"""Test settings and types shared by the store tests (kept out of conftest to be importable)."""

from __future__ import annotations

import os
from dataclasses import dataclass

POSTGRES_URL = os.environ.get(
    "VOLLMOND_TEST_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
)
BACKENDS = ("sqlite", "postgresql")


@dataclass(frozen=True)
class Target:
    """Where one test's database lives: a SQLite file, or a PostgreSQL URL plus schema."""

    backend: str
    url: str
    schema: str | None
