"""A player who leaves in the middle of a phase: nothing decided afterwards may still count
on them (issue 14's three defects). Each test failed on the code before its fix."""

from __future__ import annotations

import pytest

from tests.scenario import Scenario
from vollmond.engine.core import Json
from vollmond.engine.standard import ActionKind, Leave
from vollmond.engine.standard.codes import Ev, Rej


def reported(g: Scenario) -> list[Json]:
    """The seats of the last morning report's dead, in the report's order."""
    dead = g.last(Ev.MORNING_REPORT).params["dead"]
    assert isinstance(dead, list)
    return [entry["seat"] for entry in dead if isinstance(entry, dict)]


@pytest.mark.rule("D3", "D4")
def test_votes_for_a_nominee_who_left_count_for_nobody() -> None:
    g = Scenario("evil evil seer doctor filler filler")
    g.run("timeout").to_day()
    g.run("nominate 3 -> 5; nominate 4 -> 1; timeout")
    g.run("vote 1,2,3 -> 5; vote 4 -> 1")
    assert g.send(Leave(5)) is None
    g.run("vote 6 -> 1")
    result = g.last(Ev.VOTE_RESULT)
    assert result.params["banished"] == 1
    assert result.params["tally"] == {"1": 2}
    assert 1 in g.dead


@pytest.mark.rule("D4")
def test_a_vote_left_with_only_votes_for_the_leaver_banishes_nobody() -> None:
    g = Scenario("evil evil seer doctor filler filler")
    g.run("timeout").to_day()
    g.run("nominate 3 -> 5; nominate 4 -> 1; timeout")
    g.run("vote 1,2,3,4 -> 5")
    assert g.send(Leave(5)) is None
    g.run("vote 6 -> 0")
    assert g.last(Ev.VOTE_RESULT).params["banished"] is None
    assert g.dead == {5}


@pytest.mark.rule("S9")
@pytest.mark.parametrize("seed", range(12))
def test_the_trap_never_catches_an_attacker_who_left(seed: int) -> None:
    g = Scenario("evil evil trapper filler filler filler filler", seed=seed)
    g.run("evil 1,2 -> 5; trap 3 -> 5")
    assert g.send(Leave(1)) is None
    g.run("timeout")
    assert g.dead == {1, 2}
    assert reported(g) == [2]


@pytest.mark.rule("S17")
@pytest.mark.parametrize("seed", range(12))
def test_the_creeper_never_drags_an_attacker_who_left(seed: int) -> None:
    g = Scenario("evil evil creeper filler filler filler filler filler", seed=seed)
    g.run("evil 1,2 -> 3")
    assert g.send(Leave(1)) is None
    g.run("timeout")
    assert g.dead == {1, 2, 3}
    assert reported(g) == [3, 2]


@pytest.mark.rule("S9")
def test_when_every_attacker_left_the_trap_catches_a_living_member_of_the_room() -> None:
    g = Scenario("evil evil evil trapper filler filler filler filler filler filler")
    g.run("evil 1,2 -> 6; evil 3 -> 7; trap 4 -> 6")
    assert g.send(Leave(1)) is None
    assert g.send(Leave(2)) is None
    g.run("timeout")
    assert g.dead == {1, 2, 3}


@pytest.mark.rule("S3", "N7")
def test_the_witch_cannot_heal_a_victim_who_left() -> None:
    g = Scenario("evil evil witch filler filler filler filler")
    g.run("evil 1,2 -> 5")
    assert g.send(Leave(5)) is None
    assert g.refused("heal 3 -> 5") == Rej.TARGET_DEAD
    assert g.state.player(3).role_state.charges_of(ActionKind.HEAL) == 1
