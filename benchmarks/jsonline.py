"""One JSON line per benchmark run, so that progress can be compared from run to run.

Every benchmark's `--json-out FILE` appends one line: which benchmark, when, on which machine
and commit, its parameters, its own figures and, measured in the same run, its baseline's.
Appending (never rewriting) keeps the history in one file that `jq` or a spreadsheet can read.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import time
from pathlib import Path
from typing import Any


def _commit() -> str | None:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).resolve().parent,
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return done.stdout.strip() or None


def append_json_line(
    path: Path,
    benchmark: str,
    *,
    figures: dict[str, Any],
    baseline: dict[str, Any],
    parameters: dict[str, Any],
) -> None:
    line = {
        "benchmark": benchmark,
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "host": platform.node(),
        "cpus": os.cpu_count(),
        "commit": _commit(),
        "parameters": parameters,
        "figures": figures,
        "baseline": baseline,
    }
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps(line, sort_keys=True) + "\n")
