"""`vollmond serve` runs one worker per core unless told otherwise (issue 16 "every core").

The command line only: the server is not started (the supervisor and a single process are
replaced by recorders of how they were called); tests/service/test_workers.py and
tests/voice/test_rooms_workers.py run the workers themselves.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from vollmond.cli import app


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    """How `serve` started: ("workers", N), ("one", None) or ("node", None)."""
    calls: list[tuple[str, Any]] = []
    # `serve` points the logs at its stderr, which is CliRunner's and closed afterwards.
    monkeypatch.setattr("vollmond.service.logs.configure_logging", lambda: None)
    monkeypatch.setattr("os.cpu_count", lambda: 3)

    def serve_workers(_settings: object, count: int, **_options: object) -> int:
        calls.append(("workers", count))
        return 0

    monkeypatch.setattr("vollmond.workers.serve_workers", serve_workers)
    monkeypatch.setattr("vollmond.workers.serve_app", lambda *_a: calls.append(("one", None)))
    monkeypatch.setattr("vollmond.nodes.serve_node", lambda *_a: calls.append(("node", None)))
    return calls


def serve(tmp_path: Path, *args: str) -> int:
    base = ["serve", "--data-dir", str(tmp_path / "data"), "--sip-port", "0"]
    return CliRunner().invoke(app, [*base, *args]).exit_code


def test_serve_runs_a_worker_per_core_by_default(
    tmp_path: Path, started: list[tuple[str, Any]]
) -> None:
    assert serve(tmp_path) == 0
    assert serve(tmp_path, "--workers", "1") == 0
    assert serve(tmp_path, "--workers", "2") == 0
    assert started == [("workers", 3), ("one", None), ("workers", 2)]


def test_a_node_over_nats_is_one_process_by_default(
    tmp_path: Path, started: list[tuple[str, Any]]
) -> None:
    node = ("--nats-url", "nats://127.0.0.1:1", "--node-id", "a", "--nodes", "a,b")
    assert serve(tmp_path, *node) == 0
    assert serve(tmp_path, *node, "--workers", "1") == 0
    assert started == [("node", None), ("node", None)]
