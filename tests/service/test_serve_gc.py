"""A serving process collects its youngest generation less often and keeps what existed
before it served out of the collector's reach (`workers.tune_gc`; docs/decisions.md,
"Fan-out"). In a child process: the test's own collector is left as it is."""

from __future__ import annotations

import json
import subprocess
import sys

from vollmond.workers import GC_YOUNG_THRESHOLD

CHILD = """
import gc, json, uvicorn
from vollmond import workers
seen = {}
def run(self, sockets=None):
    seen.update(threshold=gc.get_threshold()[0], frozen=gc.get_freeze_count())
uvicorn.Server.run = run
workers.serve_on(app=None, sockets=[])
print(json.dumps(seen))
"""


def test_serving_tunes_the_collector_before_the_server_runs() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, check=True, timeout=60
    )
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["threshold"] == GC_YOUNG_THRESHOLD
    assert seen["frozen"] > 1000  # the modules and what the app made, frozen before serving
