"""The test harness's server process (tests/service/process.py) starts where it says it does."""

from __future__ import annotations

import signal
import socket
from pathlib import Path

import httpx

from tests.service.process import ServerProcess, workers_server


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


async def test_a_server_whose_workers_port_was_taken_meanwhile_starts_on_others(
    tmp_path: Path,
) -> None:
    """The same for a worker's own port (`--worker-port-base`): another process holds the
    second worker's port; the supervisor exits on the bind and the start is tried again on
    other ports, which the test's worker endpoints follow."""
    server, workers = workers_server(tmp_path / "data", 2)
    assert server.worker_port_base is not None
    taken = server.worker_port_base + 1
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", taken))
        holder.listen()
        await server.start(ready=workers)
        try:
            assert server.starts == 2 and workers[1].port != taken
            assert "Address already in use" in server.log_text()
            async with httpx.AsyncClient(timeout=5) as http:
                for worker in workers:
                    assert (await http.get(worker.base_url + "/healthz")).status_code == 200
        finally:
            server.kill(signal.SIGTERM)
