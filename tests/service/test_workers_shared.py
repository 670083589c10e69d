"""Limits and `/metrics` across worker processes (issue 16 "every core", docs/scaling.md).

The real `vollmond serve --workers 2`, each worker also on a port of its own, so the test
spreads one client's attempts and sockets over both: the sign-up budget per address and the
ceiling of sockets per address are met once for the service, not once per worker (a closed
socket on either makes room again); and `/metrics` asked of either worker answers for both,
each sample labelled with its worker.
"""

from __future__ import annotations

import contextlib
import json
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from .process import Browser, WorkerPort, workers_server
from .support import PASSWORD

WORKERS = 2
NAMES = ("w0", "w1")
SIGNUPS = 3  # [policy] login_attempts_per_minute
SOCKETS = 2  # [web] ws_connections_per_address
CONFIG = f"""
[policy]
login_attempts_per_minute = {SIGNUPS}

[web]
ws_connections_per_address = {SOCKETS}
"""


@pytest.fixture
async def workers(tmp_path: Path) -> AsyncIterator[list[WorkerPort]]:
    config = tmp_path / "vollmond.toml"
    config.write_text(CONFIG)
    server, ports = workers_server(tmp_path / "data", WORKERS, config=config)
    try:
        await server.start(ready=ports)
        yield ports
    finally:
        server.kill(signal.SIGTERM)


async def _socket(worker: WorkerPort) -> tuple[ClientConnection, dict[str, Any]]:
    """A WebSocket to `worker` and its first answer to a ping (a pong, or the refusal).

    A refused socket is closed by the server right after its refusal, which may come before
    the ping is sent (under load it did): the send then fails, and the refusal is still there
    to read."""
    ws = await connect(worker.ws_url)
    with contextlib.suppress(ConnectionClosed):
        await ws.send(json.dumps({"type": "ping"}))
    return ws, json.loads(await ws.recv())


async def test_one_address_meets_one_budget_on_all_workers(workers: list[WorkerPort]) -> None:
    browsers = [Browser(workers[i % WORKERS]) for i in range(SIGNUPS + 1)]
    sockets: list[ClientConnection] = []
    try:
        statuses = []
        for i, browser in enumerate(browsers):  # one address, the workers taking turns
            body = {"name": f"budget{i}", "password": PASSWORD}
            statuses.append((await browser.post("/api/signup", body)).status_code)
        assert statuses == [200] * SIGNUPS + [429]

        for worker in workers:  # one socket on each worker: the ceiling of the address
            ws, answer = await _socket(worker)
            sockets.append(ws)
            assert answer["type"] == "pong"
        for worker in workers:
            extra, answer = await _socket(worker)
            await extra.close()
            assert answer.get("code") == "too_many_connections", answer

        await sockets.pop().close()  # the one on the second worker: room on the first again
        deadline = time.monotonic() + 10.0
        while True:
            ws, answer = await _socket(workers[0])
            if answer["type"] == "pong":
                sockets.append(ws)
                break
            await ws.close()
            assert time.monotonic() < deadline, "the closed socket was never released"
    finally:
        for ws in sockets:
            with contextlib.suppress(Exception):
                await ws.close()
        for browser in browsers:
            await browser.close()


async def test_metrics_of_either_worker_answer_for_both(workers: list[WorkerPort]) -> None:
    sockets = [await _socket(worker) for worker in workers]  # one socket on each worker
    try:
        assert [answer["type"] for _, answer in sockets] == ["pong", "pong"]
        async with httpx.AsyncClient(timeout=10) as http:
            for worker in workers:
                text = (await http.get(worker.base_url + "/metrics")).text
                for name in NAMES:
                    assert f'vollmond_worker_scraped{{worker="{name}"}} 1.0' in text
                    assert f'vollmond_games_running{{worker="{name}"}} 0.0' in text
                    assert f'process_resident_memory_bytes{{worker="{name}"}}' in text
                    assert f'vollmond_players_connected{{worker="{name}"}} 1.0' in text
                    assert f'vollmond_limits_unanswered_total{{worker="{name}"}} 0.0' in text
                assert text.count("# TYPE vollmond_players_connected gauge") == 1
                # The sockets' address is counted by one worker: the other asked it once.
                asked = [f'vollmond_limits_asked_total{{worker="{n}"}} 1.0' in text for n in NAMES]
                assert sorted(asked) == [False, True]
    finally:
        for ws, _ in sockets:
            await ws.close()
