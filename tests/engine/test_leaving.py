"""Leaving a running game: like a death, role revealed; the table never stalls on an empty seat."""

from __future__ import annotations

import pytest

from tests.scenario import Scenario
from vollmond.engine.standard import Leave


def test_a_leaver_is_revealed_and_gone() -> None:
    g = Scenario("evil evil seer doctor filler filler")
    assert g.send(Leave(5)) is None
    assert g.dead == {5}
    left = g.last("player_left")
    assert left.params["dead"] == [{"seat": 5, "role": "filler"}]
    assert g.refused("protect 4 -> 5") == "target_dead"


@pytest.mark.rule("D4")
def test_the_vote_ends_when_the_last_missing_voter_leaves() -> None:
    g = Scenario("evil evil seer doctor filler filler")
    g.run("timeout").to_day()
    g.run("nominate 3 -> 1; timeout")
    g.run("vote 2,3,4,5 -> 1; vote 1 -> 0")
    assert g.phase.value == "vote"
    assert g.send(Leave(6)) is None
    assert g.phase.value == "night"
    assert 1 in g.dead


@pytest.mark.rule("N7")
def test_the_victim_is_fixed_when_the_last_unvoted_evil_leaves() -> None:
    g = Scenario("evil evil witch doctor filler filler")
    g.run("evil 1 -> 5")
    assert g.events_for(3, "witch_victim") == []
    assert g.send(Leave(2)) is None
    assert g.events_for(3, "witch_victim")[-1].params["victim"] == 5


@pytest.mark.rule("V1")
def test_the_last_evil_leaving_ends_the_game() -> None:
    g = Scenario("evil seer doctor filler")
    assert g.send(Leave(1)) is None
    assert g.phase.value == "over"
    assert g.last("game_over").params["sides"] == ["village"]


def test_the_dead_cannot_leave_twice() -> None:
    g = Scenario("evil evil seer doctor filler filler")
    g.send(Leave(5))
    assert g.send(Leave(5)) is not None
