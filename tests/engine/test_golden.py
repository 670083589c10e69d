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
from pathlib import Path
from typing import Any

import pytest

from tests.engine import golden_harness as golden
from vollmond.engine.standard import DeckId, GameOptions, Phase
from vollmond.engine.standard.replay import replay
from vollmond.engine.standard.sim import play_game
from vollmond.engine.standard.view import visible_events

GOLDEN = Path(__file__).parent / "golden"

GAMES: dict[str, tuple[GameOptions, int]] = {
    "werwolf_auto_8_seed1": (GameOptions(players=8, world="werwolf"), 1),
    "vampir_starter_seed11": (GameOptions(players=7, world="vampir", deck=DeckId.STARTER), 11),
    "mafia_tribunal_instant_kill_seed3": (
        GameOptions(players=13, world="mafia", deck=DeckId.TRIBUNAL, instant_kill=True),
        3,
    ),
}


def transcript(options: GameOptions, seed: int) -> dict[str, Any]:
    game = play_game(options, seed)
    assert game.state is not None and game.state.phase is Phase.OVER
    events = replay(options, seed, game.commands).events
    outcome = game.state.outcome
    assert outcome is not None
    meta = {
        "options": options.to_json(),
        "seed": seed,
        "commands": len(game.commands),
        "sides": [s.value for s in outcome.sides],
        "winners": sorted(outcome.winners),
    }
    return golden.transcript(meta, events, options.players, visible_events)


@pytest.mark.parametrize("name", sorted(GAMES))
def test_golden_transcript(name: str) -> None:
    options, seed = GAMES[name]
    actual = transcript(options, seed)
    golden.check_golden(GOLDEN / f"{name}.json", actual)


def test_transcripts_are_private_per_seat() -> None:
    """The golden files are worth keeping only if seats really hear different things."""
    options, seed = GAMES["werwolf_auto_8_seed1"]
    doc = transcript(options, seed)
    per_viewer = doc["transcripts"]
    roles = [e for e in per_viewer["1"] if e[0] == "role_assigned"]
    assert len(roles) == 1
    assert not any(e[0] == "role_assigned" for e in per_viewer["spectator"])
    assert len({json.dumps(t) for t in per_viewer.values()}) > 1
