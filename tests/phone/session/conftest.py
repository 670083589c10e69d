"""A real hub on a real SQLite store (a file in tmp_path) for every phone session test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TypeVar

import pytest

from tests.store.templates import seed_sqlite
from vollmond.service.hub import Hub
from vollmond.service.policy import Policy
from vollmond.store import Sessions, open_store

AnyHub = TypeVar("AnyHub", bound=Hub)


@asynccontextmanager
async def hub_on_sqlite(
    tmp_path: Path, make: Callable[[Sessions], AnyHub]
) -> AsyncIterator[AnyHub]:
    """The hub `make` builds on a fresh SQLite store in `tmp_path`, closed afterwards."""
    await seed_sqlite(tmp_path / "phone.db")
    async with open_store(f"sqlite+aiosqlite:///{tmp_path / 'phone.db'}") as sessions:
        running = make(sessions)
        try:
            yield running
        finally:
            await running.close()


@pytest.fixture
async def hub(tmp_path: Path) -> AsyncIterator[Hub]:
    async with hub_on_sqlite(tmp_path, lambda sessions: Hub(sessions, Policy())) as running:
        yield running
