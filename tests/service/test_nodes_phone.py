"""The telephone on two nodes over NATS (issue 15; docs/deployment.md): the end-to-end test of
tests/phone/e2e/test_workers_phone.py with two real `vollmond serve --nats-url ... --node-id`
processes on one PostgreSQL schema instead of two workers — each caller's call on another
node, the voice of the caller whose node does not own the game relayed over NATS."""

from __future__ import annotations

import shutil
import signal
import uuid
from pathlib import Path

import pytest

from tests.needs import need
from tests.phone.e2e.test_workers_phone import callers_on_two_processes
from tests.phone.test_sipp import free_udp_port
from tests.store.support import POSTGRES_URL

from .process import ServerProcess
from .test_shards import NATS_URL

NODES = ("a", "b")


@pytest.mark.slow
@pytest.mark.rule("N1", "X6")
@pytest.mark.parametrize("database", ["postgresql"], indirect=True)
async def test_two_callers_on_two_nodes_hear_each_other_by_day_not_at_night(
    tmp_path: Path, database: tuple[str, str | None]
) -> None:
    need("baresip", "espeak-ng", "sox")
    _, schema = database
    namespace = f"test{uuid.uuid4().hex}"
    servers = [
        ServerProcess(
            tmp_path / node / "data",
            database_url=POSTGRES_URL,
            schema=schema,
            sip_port=free_udp_port(),
            extra_args=[
                "--nats-url",
                NATS_URL,
                "--node-id",
                node,
                "--nodes",
                ",".join(NODES),
                "--nats-namespace",
                namespace,
            ],
            start_timeout_s=120.0,
        )
        for node in NODES
    ]
    for server in servers:
        server.data_dir.parent.mkdir(parents=True)
    try:
        await servers[0].start()
        # The nodes share the keys of one deployment (sessions, seat tokens, the vaults).
        for key in servers[0].data_dir.glob("*.key"):
            servers[1].data_dir.mkdir(mode=0o700, exist_ok=True)
            shutil.copy2(key, servers[1].data_dir / key.name)
        await servers[1].start()
        await callers_on_two_processes(
            tmp_path,
            servers,
            [s.sip_port for s in servers],
            NODES,
            lambda: "\n".join(s.log_text() for s in servers),
        )
    finally:
        for server in servers:
            server.kill(signal.SIGTERM)
