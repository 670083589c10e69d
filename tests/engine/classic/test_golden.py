"""A golden per-player transcript of one seeded full classic game (DESIGN §5).

Regenerate after an intended change and review the diff:

    VOLLMOND_REGOLD=1 pytest tests/engine/classic/test_golden.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from vollmond.engine.classic.options import ClassicOptions
from vollmond.engine.classic.replay import simulate
from vollmond.engine.classic.types import DeckId
from vollmond.engine.classic.view import visible_events
from vollmond.engine.core import Viewer

GOLDEN = Path(__file__).parent / "golden" / "duesterwald_full_10_seed4.json"
OPTIONS = ClassicOptions(players=10, deck=DeckId.FULL)
SEED = 4


def transcript() -> dict[str, Any]:
    game = simulate(OPTIONS, SEED)
    assert game.state.outcome is not None
    viewers = {str(s): Viewer.player(s) for s in range(1, OPTIONS.players + 1)}
    viewers["spectator"] = Viewer.spectator()
    doc = {
        "meta": {
            "options": OPTIONS.to_json(),
            "seed": SEED,
            "commands": len(game.commands),
            "sides": [s.value for s in game.state.outcome.sides],
            "winners": sorted(game.state.outcome.winners),
        },
        "transcripts": {
            name: [[e.code, dict(e.params)] for e in visible_events(game.events, v)]
            for name, v in viewers.items()
        },
    }
    loaded: dict[str, Any] = json.loads(json.dumps(doc))
    return loaded


def render(doc: dict[str, Any]) -> str:
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


def test_golden_transcript() -> None:
    actual = transcript()
    if os.environ.get("VOLLMOND_REGOLD") == "1":
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(render(actual), encoding="utf-8")
    assert GOLDEN.exists(), f"{GOLDEN} missing: run with VOLLMOND_REGOLD=1"
    expected = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert expected["meta"] == actual["meta"]
    for name, want in expected["transcripts"].items():
        assert actual["transcripts"][name] == want, f"viewer {name}: transcript changed"


def test_seats_hear_different_things() -> None:
    per_viewer = transcript()["transcripts"]
    assert not any(e[0] == "role_assigned" for e in per_viewer["spectator"])
    assert len({json.dumps(t) for t in per_viewer.values()}) > 2
