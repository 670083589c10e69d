"""`/healthz` asks the database: a node that lost its PostgreSQL answers 503 until it is back.

The database connection runs through a TCP relay in this test, so that "the network to the
database" can really break (the shared PostgreSQL server itself stays up for the other tests):
the relay stops listening and cuts every connection it carried, then listens again.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import make_url

from tests.store.support import POSTGRES_URL
from tests.store.templates import give_back_postgres, lend_postgres
from vollmond.service.config import Settings

from .support import running_service


class Relay:
    """A TCP relay from a local port to PostgreSQL that can be cut and restored."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.port = 0
        self.server: asyncio.Server | None = None
        self.writers: set[asyncio.StreamWriter] = set()

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._carry, "127.0.0.1", self.port)
        self.port = self.server.sockets[0].getsockname()[1]

    async def cut(self) -> None:
        assert self.server is not None
        self.server.close()
        for writer in list(self.writers):
            writer.transport.abort()
        self.writers.clear()
        await self.server.wait_closed()

    async def _carry(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.transport.abort()
            return
        self.writers |= {writer, up_writer}

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError):
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            dst.transport.abort()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        self.writers -= {writer, up_writer}


@pytest.fixture
async def relay() -> AsyncIterator[Relay]:
    url = make_url(POSTGRES_URL)
    relay = Relay(url.host or "127.0.0.1", url.port or 5432)
    await relay.start()
    try:
        yield relay
    finally:
        if relay.server is not None and relay.server.is_serving():
            await relay.cut()


async def _health(http: httpx.AsyncClient) -> tuple[int, str]:
    response = await http.get("/healthz")
    return response.status_code, response.text


async def _until(http: httpx.AsyncClient, wanted: int, within_s: float) -> str:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    while True:
        status, text = await _health(http)
        if status == wanted:
            return text
        assert loop.time() < deadline, f"/healthz stayed {status} {text!r}"
        await asyncio.sleep(0.1)


async def test_healthz_is_503_while_the_database_is_unreachable(
    relay: Relay, tmp_path: Path
) -> None:
    schema = await lend_postgres("vollmond_health")
    url = make_url(POSTGRES_URL).set(host="127.0.0.1", port=relay.port)
    settings = Settings(
        data_dir=tmp_path / "data",
        database_url=url.render_as_string(hide_password=False),
        database_schema=schema,
    )
    try:
        async with (
            running_service("postgresql", settings) as service,
            httpx.AsyncClient(base_url=service.base_url, timeout=10) as http,
        ):
            assert await _health(http) == (200, "ok")
            await relay.cut()
            assert await _until(http, 503, within_s=10.0) == "database unreachable"
            await relay.start()  # the same port again
            assert await _until(http, 200, within_s=10.0) == "ok"
    finally:
        await give_back_postgres(schema)
