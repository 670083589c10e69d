"""Golden per-player transcripts of three seeded bot games (DESIGN §5).

For each game `engine.standard.sim.play_game` plays with fixed options and seed; the transcript is,
for every seat and for a spectator, the list of [code, params] of the events that viewer
receives (`view.visible_events`), plus the outcome. The checked-in JSON files under
tests/engine/golden/ must match exactly, so any change in what someone hears shows up here.

When a change is intended (rules, bots, event codes), regenerate and review the diff:

    VOLLMOND_REGOLD=1 .venv/bin/pytest tests/engine/test_golden.py

Without VOLLMOND_REGOLD=1 the files are only read, never written.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from vollmond.engine.core import Event, Viewer
from vollmond.engine.standard import DeckId, GameOptions, Phase
from vollmond.engine.standard.replay import replay
from vollmond.engine.standard.sim import play_game
from vollmond.engine.standard.view import visible_events

GOLDEN = Path(__file__).parent / "golden"
REGOLD = os.environ.get("VOLLMOND_REGOLD") == "1"

GAMES: dict[str, tuple[GameOptions, int]] = {
    "werwolf_auto_8_seed1": (GameOptions(players=8, world="werwolf"), 1),
    "vampir_starter_seed2": (GameOptions(players=7, world="vampir", deck=DeckId.STARTER), 2),
    "mafia_tribunal_instant_kill_seed3": (
        GameOptions(players=13, world="mafia", deck=DeckId.TRIBUNAL, instant_kill=True),
        3,
    ),
}


def _entries(events: list[Event], viewer: Viewer) -> list[Any]:
    return [[e.code, dict(e.params)] for e in visible_events(events, viewer)]


def transcript(options: GameOptions, seed: int) -> dict[str, Any]:
    game = play_game(options, seed)
    assert game.state is not None and game.state.phase is Phase.OVER
    events = list(replay(options, seed, game.commands).events)
    viewers = {str(s): Viewer.player(s) for s in range(1, options.players + 1)}
    viewers["spectator"] = Viewer.spectator()
    outcome = game.state.outcome
    assert outcome is not None
    doc = {
        "meta": {
            "options": options.to_json(),
            "seed": seed,
            "commands": len(game.commands),
            "sides": [s.value for s in outcome.sides],
            "winners": sorted(outcome.winners),
        },
        "transcripts": {name: _entries(events, v) for name, v in viewers.items()},
    }
    # Through JSON once, so tuples and enum members compare like the stored file.
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


@pytest.mark.parametrize("name", sorted(GAMES))
def test_golden_transcript(name: str) -> None:
    options, seed = GAMES[name]
    actual = transcript(options, seed)
    path = GOLDEN / f"{name}.json"
    if REGOLD:
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(render(actual), encoding="utf-8")
    assert path.exists(), f"{path} missing: run with VOLLMOND_REGOLD=1 to create it"
    expected = json.loads(path.read_text(encoding="utf-8"))
    assert expected == actual, (
        f"{name}: transcript changed ({first_difference(expected, actual)}); "
        "if intended, regenerate with VOLLMOND_REGOLD=1 and review the diff"
    )


def test_transcripts_are_private_per_seat() -> None:
    """The golden files are worth keeping only if seats really hear different things."""
    options, seed = GAMES["werwolf_auto_8_seed1"]
    doc = transcript(options, seed)
    per_viewer = doc["transcripts"]
    roles = [e for e in per_viewer["1"] if e[0] == "role_assigned"]
    assert len(roles) == 1
    assert not any(e[0] == "role_assigned" for e in per_viewer["spectator"])
    assert len({json.dumps(t) for t in per_viewer.values()}) > 1
