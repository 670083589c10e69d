"""A golden per-player transcript of one seeded full mayor game (DESIGN §5).

`sim.play_game` plays with fixed options and seed; the transcript is, for every seat and a
spectator, the [code, params] of the events that viewer receives, plus the outcome. The file
under tests/engine/mayor/golden/ must match exactly, so any change in what someone hears
shows up here. Regenerate after an intended change and review the diff:

    VOLLMOND_REGOLD=1 .venv/bin/pytest tests/engine/mayor/test_golden.py
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.engine import golden_harness as golden
from vollmond.engine.mayor.options import MayorOptions
from vollmond.engine.mayor.replay import replay
from vollmond.engine.mayor.sim import play_game
from vollmond.engine.mayor.view import visible_events

GOLDEN = Path(__file__).parent / "golden"

GAMES: dict[str, tuple[MayorOptions, int]] = {
    "thueringer_wald_8_seed1": (MayorOptions(players=8), 1),
}


def transcript(options: MayorOptions, seed: int) -> dict[str, Any]:
    game = play_game(options, seed)
    assert game.state is not None and game.state.outcome is not None
    events = replay(options, seed, game.commands).events
    meta = {
        "options": options.to_json(),
        "seed": seed,
        "commands": len(game.commands),
        "side": game.state.outcome.side.value,
        "winners": sorted(game.state.outcome.winners),
    }
    return golden.transcript(meta, events, options.players, visible_events)


@pytest.mark.rule("B1", "B3", "B5", "B7")
@pytest.mark.parametrize("name", sorted(GAMES))
def test_golden_transcript(name: str) -> None:
    options, seed = GAMES[name]
    golden.check_golden(GOLDEN / f"{name}.json", transcript(options, seed))
