"""The smart bot: better than chance, and blind to what its seat may not know."""

from __future__ import annotations

import json
import random
from dataclasses import replace

from typer.testing import CliRunner

from vollmond.cli import app
from vollmond.engine.standard.commands import PhaseTimeout
from vollmond.engine.standard.options import GameOptions
from vollmond.engine.standard.queries import spec
from vollmond.engine.standard.replay import rng_for
from vollmond.engine.standard.rules import apply, new_game
from vollmond.engine.standard.ruleset import StandardRuleSet
from vollmond.engine.standard.smart_bot import SmartBot
from vollmond.engine.standard.state import GameState
from vollmond.engine.standard.types import Phase, Team
from vollmond.sim import pit


def test_the_smart_bot_beats_the_random_bot_over_500_games() -> None:
    report = pit(StandardRuleSet(), GameOptions(players=8), 8, 500, seed=1)
    print(f"smart {report.smart_rate:.1%} of seats won, random {report.random_rate:.1%}")
    assert report.smart_seats == report.random_seats == 500 * 4
    assert report.smart_rate > report.random_rate + 0.02


def _swap_hidden_roles(state: GameState, bot: int) -> GameState | None:
    """The same state with two other harmless seats' roles swapped (invisible to `bot`)."""
    others = [
        p
        for p in state.players
        if p.seat != bot and spec(p.role).team is Team.VILLAGE and not p.revealed
    ]
    pair = next(((a, b) for a in others for b in others if a.role != b.role), None)
    if pair is None:
        return None
    a, b = pair
    players = tuple(
        replace(p, spec=b.spec)
        if p.seat == a.seat
        else replace(p, spec=a.spec)
        if p.seat == b.seat
        else p
        for p in state.players
    )
    return replace(state, players=players)


def test_the_smart_bot_decides_from_its_own_view_only() -> None:
    """Swapping two other seats' hidden roles changes nothing the bot does, in any phase."""
    compared = 0
    for seed in range(1, 40):
        state = new_game(GameOptions(players=9), rng_for(seed, 0)).state
        for step in range(4):  # night, morning, day, vote of the first round
            for seat in range(1, 10):
                other = _swap_hidden_roles(state, seat)
                if other is None or not state.player(seat).alive:
                    continue
                first = SmartBot(seat, random.Random(seed)).choose(state)
                second = SmartBot(seat, random.Random(seed)).choose(other)
                assert first == second, (seed, step, seat)
                compared += 1
            if state.phase is Phase.OVER:
                break
            outcome = apply(state, PhaseTimeout(state.phase_seq), rng_for(seed, step + 1))
            assert not hasattr(outcome, "reason")
            state = outcome.state  # type: ignore[union-attr]
    assert compared > 500


def test_simulate_pits_the_bots_on_the_command_line() -> None:
    args = ["simulate", "--pit", "--games", "20", "--players", "8", "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["smart"]["seats"] == out["random"]["seats"] == 80
    assert 0 <= out["smart_win_rate"] <= 1
    assert out["rules"] == "standard"


def test_pitting_rules_without_a_smart_bot_is_a_clear_error() -> None:
    args = ["simulate", "--rules", "classic", "--pit", "--games", "2", "--players", "8"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "no smart and random bots to pit" in result.output
