"""The kernel's TCP keepalive finds the dead connections of clients that never ping, in place
of the WebSocket layer's own keepalive ping (which came in a burst for sockets opened
together; docs/decisions.md "Batch frames, no transport ping"). Checked on the server side of
real connections to `vollmond serve`, as the kernel reports them (`ss`)."""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from websockets.asyncio.client import connect

from vollmond.workers import KEEPALIVE_IDLE_S

from .process import ServerProcess, serving, workers_server

pytestmark = pytest.mark.skipif(shutil.which("ss") is None, reason="needs iproute2's ss")


def server_side_timers(port: int, client_port: int) -> list[tuple[str, str]]:
    """The timer column `ss` shows for the server's end of the connection from `client_port`."""
    out = subprocess.run(
        ["ss", "-tnoH", "state", "established", f"( sport = :{port} and dport = :{client_port} )"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return re.findall(r"timer:\((\w+),([^,]+),", out)


async def assert_keepalive_on_a_socket_to(port: int, path: str = "/ws") -> None:
    async with connect(f"ws://127.0.0.1:{port}{path}", ping_interval=None) as ws:
        client_port = ws.transport.get_extra_info("sockname")[1]
        # The timer shows once the connection is idle; the kernel arms it when it is made.
        timers: list[tuple[str, str]] = []
        for _ in range(50):
            timers = server_side_timers(port, client_port)
            if timers:
                break
            await asyncio.sleep(0.05)
        assert timers, "the server's end of the connection has no timer"
        kind, left = timers[0]
        assert kind == "keepalive"
        seconds = float(left.removesuffix("sec").removesuffix("ms")) / (
            1000 if left.endswith("ms") else 1
        )
        assert 0 < seconds <= KEEPALIVE_IDLE_S  # the kernel's default would be 7,200 s


async def test_one_process_keeps_its_websockets_alive_in_the_kernel(tmp_path: Path) -> None:
    async with serving(ServerProcess(tmp_path / "data")) as server:
        await assert_keepalive_on_a_socket_to(server.port)


async def test_workers_keep_their_websockets_alive_in_the_kernel(tmp_path: Path) -> None:
    server, ports = workers_server(tmp_path / "data", 2)
    try:
        await server.start(ready=ports)
        await assert_keepalive_on_a_socket_to(server.port)
        await assert_keepalive_on_a_socket_to(ports[1].port)
    finally:
        server.kill()
