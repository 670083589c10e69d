"""First scenarios: the night kill, protection, and a whole day."""

from __future__ import annotations

import pytest

from tests.scenario import Scenario


@pytest.mark.rule("N3", "S2")
def test_doctor_saves_the_victim() -> None:
    g = Scenario("evil evil seer doctor filler filler")
    g.run("evil 1,2 -> 3; protect 4 -> 3; timeout")
    assert g.dead == set()


@pytest.mark.rule("N3", "D1")
def test_most_votes_dies_and_is_announced_with_role() -> None:
    g = Scenario("evil evil seer doctor filler filler")
    g.run("evil 1,2 -> 5; timeout")
    assert g.dead == {5}
    report = g.last("morning_report")
    assert report.params["dead"] == [{"seat": 5, "role": "filler"}]


@pytest.mark.rule("D2", "D3", "D4", "D5")
def test_day_vote_banishes_the_most_voted() -> None:
    g = Scenario("evil evil seer doctor filler filler")
    g.run("evil 1,2 -> 5; timeout").to_day()
    g.run("nominate 3 -> 1; nominate 4 -> 2; timeout")
    g.run("vote 3,4,6 -> 1; vote 1 -> 2; vote 2 -> 0")
    assert 1 in g.dead
    result = g.last("vote_result")
    assert result.params["banished"] == 1 and result.params["role"] == "evil"
