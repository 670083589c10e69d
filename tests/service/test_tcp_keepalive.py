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


# iproute2's `format_ms_timer`: minutes as "1min", then seconds as "5sec" or, with
# milliseconds, "5." followed by "123ms" ("5.123ms" is five seconds); a timer just armed at
# 60 s reads "1min".
_SS_TIMER = re.compile(r"(?:(\d+)min)?(?:(\d+)(sec|\.))?(?:(\d+)ms)?")


def ss_timer_seconds(text: str) -> float:
    """The seconds an `ss` timer column says are left."""
    found = _SS_TIMER.fullmatch(text)
    assert found is not None and text, f"not a timer of ss: {text!r}"
    minutes, seconds, _, millis = found.groups()
    return int(minutes or 0) * 60 + int(seconds or 0) + int(millis or 0) / 1000


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("1min", 60.0), ("1min5sec", 65.0), ("59sec", 59.0), ("5.123ms", 5.123), ("123ms", 0.123)],
)
def test_ss_timer_text_is_read_as_seconds(text: str, seconds: float) -> None:
    assert ss_timer_seconds(text) == pytest.approx(seconds)


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
        seconds = ss_timer_seconds(left)
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
