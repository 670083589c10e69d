"""A hub imports every rule set as it is made, not on a player's first choice of one: that
import held the process's event loop — every call and socket in it — for 0.26 s on a loaded
machine, once for 10 s (a caller's first "00" of another rule set)."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import sys
from sqlalchemy.ext.asyncio import async_sessionmaker
from vollmond.engine.ruleset import get_ruleset, ruleset_ids
from vollmond.service.hub import Hub

Hub(async_sessionmaker())
before = {name for name in sys.modules if name.startswith("vollmond.engine.")}
for ruleset_id in ruleset_ids():
    get_ruleset(ruleset_id)
after = {name for name in sys.modules if name.startswith("vollmond.engine.")}
print(len(ruleset_ids()), sorted(after - before))
"""


def test_a_new_hub_has_imported_every_rule_set() -> None:
    """In a fresh process (this one has imported them all long ago), asking for each rule
    set after the hub was made imports nothing more."""
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True, timeout=120
    ).stdout.split(maxsplit=1)
    assert int(out[0]) >= 3 and out[1].strip() == "[]", out
