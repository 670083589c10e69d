"""The golden-transcript harness every rule set's golden test uses (DESIGN §5).

A transcript is, for every seat and for a spectator, the [code, params] of the events that
viewer receives, plus the game's meta data. The checked-in JSON file must match exactly, so
any change in what someone hears shows up. `VOLLMOND_REGOLD=1` rewrites the file instead;
review the diff. Only the rule set's own `visible_events` and meta differ between rule sets.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from vollmond.engine.core import Event, Viewer

REGOLD = os.environ.get("VOLLMOND_REGOLD") == "1"

VisibleEvents = Callable[[Sequence[Event], Viewer], Iterable[Event]]


def transcript(
    meta: dict[str, Any], events: Sequence[Event], players: int, visible: VisibleEvents
) -> dict[str, Any]:
    """The document of one game, through JSON once so tuples and enum members compare like
    the stored file."""
    viewers = {str(s): Viewer.player(s) for s in range(1, players + 1)}
    viewers["spectator"] = Viewer.spectator()
    doc = {
        "meta": meta,
        "transcripts": {
            name: [[e.code, dict(e.params)] for e in visible(events, viewer)]
            for name, viewer in viewers.items()
        },
    }
    loaded: dict[str, Any] = json.loads(json.dumps(doc))
    return loaded


def render(doc: dict[str, Any]) -> str:
    """One event per line, so a changed transcript reads as a small diff."""
    out = ["{", f' "meta": {json.dumps(doc["meta"], sort_keys=True)},', ' "transcripts": {']
    viewers = list(doc["transcripts"].items())
    for i, (name, entries) in enumerate(viewers):
        out.append(f"  {json.dumps(name)}: [")
        for j, entry in enumerate(entries):
            comma = "," if j < len(entries) - 1 else ""
            out.append("   " + json.dumps(entry, sort_keys=True, ensure_ascii=False) + comma)
        out.append("  ]" + ("," if i < len(viewers) - 1 else ""))
    out += [" }", "}", ""]
    return "\n".join(out)


def first_difference(expected: dict[str, Any], actual: dict[str, Any]) -> str:
    if expected["meta"] != actual["meta"]:
        return f"meta differs: {expected['meta']} != {actual['meta']}"
    for name, want in expected["transcripts"].items():
        got = actual["transcripts"].get(name)
        if got == want:
            continue
        if got is None:
            return f"viewer {name} missing"
        for i, (w, g) in enumerate(zip(want, got, strict=False)):
            if w != g:
                return f"viewer {name}, event {i}: expected {w}, got {g}"
        return f"viewer {name}: expected {len(want)} events, got {len(got)}"
    return "extra viewers: " + ", ".join(sorted(set(actual["transcripts"]) - set(expected)))


def check_golden(path: Path, actual: dict[str, Any]) -> None:
    """Compare with the stored file (or rewrite it under VOLLMOND_REGOLD=1)."""
    if REGOLD:
        path.parent.mkdir(exist_ok=True)
        path.write_text(render(actual), encoding="utf-8")
    assert path.exists(), f"{path} missing: run with VOLLMOND_REGOLD=1 to create it"
    expected = json.loads(path.read_text(encoding="utf-8"))
    assert expected == actual, (
        f"{path.name}: transcript changed ({first_difference(expected, actual)}); "
        "if intended, regenerate with VOLLMOND_REGOLD=1 and review the diff"
    )
