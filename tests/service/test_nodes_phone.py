"""The telephone on two nodes over NATS (issue 15; docs/deployment.md): the end-to-end test of
tests/phone/e2e/test_workers_phone.py with two real `vollmond serve --nats-url ... --node-id`
processes on one PostgreSQL schema instead of two workers — each caller's call on another
node, the voice of the caller whose node does not own the game relayed over NATS."""

from __future__ import annotations

import signal
import uuid
from pathlib import Path

import pytest

from tests.needs import need
from tests.phone.e2e.test_workers_phone import callers_on_two_processes
from tests.phone.test_sipp import free_udp_port

from .process import nats_node, start_one_deployment

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
        nats_node(
            tmp_path,
            node,
            NODES,
            namespace=namespace,
            schema=schema,
            sip_port=free_udp_port(),
        )
        for node in NODES
    ]
    try:
        await start_one_deployment(servers)
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
