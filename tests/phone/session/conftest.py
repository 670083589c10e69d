"""A real hub on a real SQLite store (a file in tmp_path) for every phone session test."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.store.templates import seed_sqlite
from vollmond.service.hub import Hub
from vollmond.service.policy import Policy
from vollmond.store import open_store


@pytest.fixture
async def hub(tmp_path: Path) -> AsyncIterator[Hub]:
    await seed_sqlite(tmp_path / "phone.db")
    async with open_store(f"sqlite+aiosqlite:///{tmp_path / 'phone.db'}") as sessions:
        running = Hub(sessions, Policy())
        try:
            yield running
        finally:
            await running.close()
