"""A running service per test, on SQLite (file in tmp_path) and on the real PostgreSQL.

PostgreSQL tests get a schema of their own (a migrated one, emptied after the test before the next
test of the process takes it: tests/store/templates.py); if the server
is unreachable the tests fail loudly rather than skip, so a PostgreSQL-only bug cannot hide.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import pytest
from sqlalchemy.exc import SQLAlchemyError

from tests.store.support import BACKENDS, POSTGRES_URL
from tests.store.templates import give_back_postgres, lend_postgres
from vollmond.service.config import Settings
from vollmond.service.policy import Policy

from .support import ApiClient, Service, ServiceFactory, running_service
from .wsplay import FAST_POLICY


@pytest.fixture(params=BACKENDS)
async def database(request: pytest.FixtureRequest) -> AsyncIterator[tuple[str, str | None]]:
    """(backend, schema): SQLite needs nothing; PostgreSQL gets a schema of its own."""
    backend: str = request.param
    if backend == "sqlite":
        yield backend, None
        return
    try:
        schema = await lend_postgres("vollmond_svc")  # migrated to the head, and empty
    except (OSError, TimeoutError, SQLAlchemyError) as exc:
        pytest.fail(f"PostgreSQL is required but {POSTGRES_URL} failed: {exc!r}", pytrace=False)
    try:
        yield backend, schema
    finally:
        await give_back_postgres(schema)


@pytest.fixture
def settings_for(database: tuple[str, str | None], tmp_path: Path) -> Callable[[Policy], Settings]:
    backend, schema = database

    def make(policy: Policy) -> Settings:
        return Settings(
            data_dir=tmp_path / "data",
            database_url=POSTGRES_URL if backend == "postgresql" else None,
            database_schema=schema,
            policy=policy,
        )

    return make


@pytest.fixture
def start_service(
    database: tuple[str, str | None], settings_for: Callable[[Policy], Settings]
) -> ServiceFactory:
    """For tests that need their own operator policy: `async with start_service(policy)`."""

    def start(policy: Policy) -> AbstractAsyncContextManager[Service]:
        return running_service(database[0], settings_for(policy))

    return start


@pytest.fixture
async def service(start_service: ServiceFactory) -> AsyncIterator[Service]:
    """The service with the default operator policy."""
    async with start_service(Policy()) as running:
        yield running


@pytest.fixture
async def api(service: Service) -> AsyncIterator[Callable[[], ApiClient]]:
    """A factory of browser stand-ins, all closed at the end of the test."""
    made: list[ApiClient] = []

    def make() -> ApiClient:
        client = ApiClient(service)
        made.append(client)
        return client

    yield make
    for client in made:
        await client.close()


@pytest.fixture
async def fast_service(start_service: ServiceFactory) -> AsyncIterator[Service]:
    """A service whose operators allow sub-second phases, so a whole game takes seconds."""
    async with start_service(FAST_POLICY) as running:
        yield running


@pytest.fixture
async def browsers(fast_service: Service) -> AsyncIterator[Callable[[], ApiClient]]:
    made: list[ApiClient] = []

    def make() -> ApiClient:
        client = ApiClient(fast_service)
        made.append(client)
        return client

    yield make
    for client in made:
        await client.close()
