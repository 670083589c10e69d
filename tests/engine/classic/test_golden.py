"""A golden per-player transcript of one seeded full classic game (DESIGN §5).

Regenerate after an intended change and review the diff:

    VOLLMOND_REGOLD=1 pytest tests/engine/classic/test_golden.py
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.engine import golden_harness as golden
from vollmond.engine.classic.options import ClassicOptions
from vollmond.engine.classic.replay import simulate
from vollmond.engine.classic.types import DeckId
from vollmond.engine.classic.view import visible_events

GOLDEN = Path(__file__).parent / "golden" / "duesterwald_full_10_seed4.json"
OPTIONS = ClassicOptions(players=10, deck=DeckId.FULL)
SEED = 4


def transcript() -> dict[str, Any]:
    game = simulate(OPTIONS, SEED)
    assert game.state.outcome is not None
    meta = {
        "options": OPTIONS.to_json(),
        "seed": SEED,
        "commands": len(game.commands),
        "sides": [s.value for s in game.state.outcome.sides],
        "winners": sorted(game.state.outcome.winners),
    }
    return golden.transcript(meta, game.events, OPTIONS.players, visible_events)


def test_golden_transcript() -> None:
    golden.check_golden(GOLDEN, transcript())


def test_seats_hear_different_things() -> None:
    per_viewer = transcript()["transcripts"]
    assert not any(e[0] == "role_assigned" for e in per_viewer["spectator"])
    assert len({json.dumps(t) for t in per_viewer.values()}) > 2
