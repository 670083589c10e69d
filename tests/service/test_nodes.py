"""Nodes sharing the games over NATS (issue 15, docs/deployment.md).

Two real `vollmond serve --nats-url ... --node-id ... --nodes a,b` processes on one PostgreSQL
schema and the real NATS server (a namespace of their own, so runs at once do not meet): the
same game as in test_workers, its seats spread over both nodes — one owns the game, the other
follows it through a mirror over NATS — and every seat sees every event it may see once, in
log order. The options that do not fit are refused before anything starts.
"""

from __future__ import annotations

import signal
import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vollmond.cli import app
from vollmond.nodes import NodeSpec
from vollmond.workers import WorkersError

from .process import nats_node, start_one_deployment
from .test_workers import play_and_check

NODES = ("a", "b")


@pytest.mark.parametrize("database", ["postgresql"], indirect=True)
async def test_players_on_two_nodes_share_one_game(
    tmp_path: Path, database: tuple[str, str | None]
) -> None:
    _, schema = database
    namespace = f"test{uuid.uuid4().hex}"
    servers = [
        nats_node(
            tmp_path,
            node,
            NODES,
            namespace=namespace,
            schema=schema,
        )
        for node in NODES
    ]
    try:
        await start_one_deployment(servers)
        await play_and_check(
            servers[0],
            servers,
            nodes=NODES,
            log_text=lambda: "\n".join(s.log_text() for s in servers),
        )
    finally:
        for server in servers:
            server.kill(signal.SIGTERM)


def test_node_options_that_do_not_fit_are_refused() -> None:
    url = "nats://127.0.0.1:4222"
    assert NodeSpec.parse("a", "a,b", url, "v") == NodeSpec("a", ("a", "b"), url, "v")
    assert NodeSpec.parse("a", None, url, "v").nodes == ("a",)
    for node, nodes, namespace, reason in [
        (None, "a,b", "v", "--node-id"),
        ("c", "a,b", "v", "this node"),
        ("a", "a,a,b", "v", "twice"),
        ("a", "a,b c", "v", "spaces"),
        ("a", "a,b.1", "v", "subject token"),
        ("a", "a,b", "v.x", "namespace"),
    ]:
        with pytest.raises(WorkersError, match=reason):
            NodeSpec.parse(node, nodes, url, namespace)
    leases = NodeSpec.parse("a", "a,b", url, "v", "leases", 3.0)
    assert (leases.ownership, leases.lease_ttl_s) == ("leases", 3.0)
    with pytest.raises(WorkersError, match="--ownership"):
        NodeSpec.parse("a", "a,b", url, "v", "raft")
    with pytest.raises(WorkersError, match="--lease-ttl"):
        NodeSpec.parse("a", "a,b", url, "v", "leases", 0.0)


def test_serve_refuses_workers_on_a_node(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `serve` points the logs at its stderr, which is CliRunner's and closed afterwards: keep
    # this test process's logging as it is.
    monkeypatch.setattr("vollmond.service.logs.configure_logging", lambda: None)
    node = ["serve", "--data-dir", str(tmp_path / "data"), "--nats-url", "nats://127.0.0.1:1"]
    node += ["--node-id", "a", "--nodes", "a,b"]
    workers = CliRunner().invoke(app, [*node, "--sip-port", "0", "--workers", "2"])
    assert workers.exit_code == 2 and "leave out --workers" in workers.output
