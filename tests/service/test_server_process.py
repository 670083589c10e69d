"""The test harness's server process (tests/service/process.py) starts where it says it does."""

from __future__ import annotations

import signal
from pathlib import Path

from tests.service.process import ServerProcess


async def test_a_server_whose_web_port_was_taken_meanwhile_starts_on_another(
    tmp_path: Path,
) -> None:
    """`free_port` found the port free, then another test's server took it: the server under
    test exits on the bind, and the other one answers /healthz on that port. The start must not
    take that answer for its own (a suite run waited a minute for a dead node's SIP); it starts
    again on another port."""
    (tmp_path / "other").mkdir()
    (tmp_path / "mine").mkdir()
    other = ServerProcess(data_dir=tmp_path / "other" / "data")
    await other.start()
    try:
        server = ServerProcess(data_dir=tmp_path / "mine" / "data", port=other.port)
        await server.start()
        try:
            assert server.starts == 2 and server.port != other.port
            assert server.process is not None and server.process.poll() is None
            assert "Address already in use" in server.log_text()
        finally:
            server.kill(signal.SIGTERM)
    finally:
        other.kill(signal.SIGTERM)
