"""`vollmond simulate --rules NAME --json` (issue 14): every registered rule set plays its own
bot games through the protocol, and the same seeds give the same figures."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from vollmond.cli import app
from vollmond.engine.ruleset import ruleset_ids


def _simulate(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["simulate", "--json", "--games", "3", *args])
    assert result.exit_code == 0, result.output
    out: dict[str, Any] = json.loads(result.stdout)
    out.pop("games_per_second")  # the only figure that depends on the machine
    return out


@pytest.mark.parametrize("rules", ruleset_ids())
def test_simulate_each_rule_set_deterministically(rules: str) -> None:
    first = _simulate("--rules", rules, "--players", "8", "--seed", "7")
    assert first == _simulate("--rules", rules, "--players", "8", "--seed", "7")
    assert (first["rules"], first["games"], first["players"]) == (rules, 3, 8)
    assert sum(first["wins"].values()) >= 3  # every game is won by at least one side
    assert first["commands"] > 0


def test_simulate_plays_different_games_for_different_seeds() -> None:
    runs = [_simulate("--rules", "classic", "--seed", str(s), "--games", "1") for s in range(5)]
    assert len({r["commands"] for r in runs}) > 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--rules", "chess"], "unknown rule set"),
        (["--rules", "classic", "--world", "werwolf"], "unknown classic world"),
        (["--rules", "mayor", "--players", "50"], "need 4..40 players"),
        (["--rules", "classic", "--deck", "nope"], "not classic founding options"),
    ],
)
def test_simulate_refuses_what_the_rule_set_does_not_have(args: list[str], message: str) -> None:
    result = CliRunner().invoke(app, ["simulate", "--json", *args])
    assert result.exit_code == 2
    assert message in result.output
