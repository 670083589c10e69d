"""A golden per-player transcript of one seeded full mayor game (DESIGN §5).

`sim.play_game` plays with fixed options and seed; the transcript is, for every seat and a
spectator, the [code, params] of the events that viewer receives, plus the outcome. The file
under tests/engine/mayor/golden/ must match exactly, so any change in what someone hears
shows up here. Regenerate after an intended change and review the diff:

    VOLLMOND_REGOLD=1 .venv/bin/pytest tests/engine/mayor/test_golden.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from vollmond.engine.core import Event, Viewer
from vollmond.engine.mayor.options import MayorOptions
from vollmond.engine.mayor.replay import replay
from vollmond.engine.mayor.sim import play_game
from vollmond.engine.mayor.view import visible_events

GOLDEN = Path(__file__).parent / "golden"
REGOLD = os.environ.get("VOLLMOND_REGOLD") == "1"

GAMES: dict[str, tuple[MayorOptions, int]] = {
    "thueringer_wald_8_seed1": (MayorOptions(players=8), 1),
}


def _entries(events: list[Event], viewer: Viewer) -> list[Any]:
    return [[e.code, dict(e.params)] for e in visible_events(events, viewer)]


def transcript(options: MayorOptions, seed: int) -> dict[str, Any]:
    game = play_game(options, seed)
    assert game.state is not None and game.state.outcome is not None
    events = list(replay(options, seed, game.commands).events)
    viewers = {str(s): Viewer.player(s) for s in range(1, options.players + 1)}
    viewers["spectator"] = Viewer.spectator()
    doc = {
        "meta": {
            "options": options.to_json(),
            "seed": seed,
            "commands": len(game.commands),
            "side": game.state.outcome.side.value,
            "winners": sorted(game.state.outcome.winners),
        },
        "transcripts": {name: _entries(events, v) for name, v in viewers.items()},
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


@pytest.mark.rule("B1", "B3", "B5", "B7")
@pytest.mark.parametrize("name", sorted(GAMES))
def test_golden_transcript(name: str) -> None:
    options, seed = GAMES[name]
    doc = transcript(options, seed)
    path = GOLDEN / f"{name}.json"
    if REGOLD:
        path.parent.mkdir(exist_ok=True)
        path.write_text(render(doc), encoding="utf-8")
    assert json.loads(path.read_text(encoding="utf-8")) == doc
