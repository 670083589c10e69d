"""The command without its installed script: `python -m vollmond` and `python -m vollmond.cli`
answer as `vollmond` does (before, `python -m vollmond.cli` did nothing and exited 0)."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize("module", ["vollmond", "vollmond.cli"])
def test_the_module_runs_the_command(module: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", module, "--help"],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "Usage: vollmond" in done.stdout
    for command in ("serve", "admin", "simulate"):
        assert command in done.stdout
