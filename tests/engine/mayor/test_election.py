"""B1, B2: the mayor election before the first night, and again after the mayor left."""

from __future__ import annotations

import pytest

from tests.engine.mayor.scenario import MayorScenario
from vollmond.engine.core import Viewer
from vollmond.engine.mayor.codes import Ev, Rej
from vollmond.engine.mayor.commands import Stand, YieldFloor
from vollmond.engine.mayor.routing import DUCKED, FULL, Route, routing
from vollmond.engine.mayor.types import Stage
from vollmond.engine.mayor.view import project

SIX = "nazi nazi citizen citizen citizen citizen"


@pytest.mark.rule("B1")
def test_before_the_first_night_candidates_introduce_themselves_and_the_most_votes_win() -> None:
    g = MayorScenario(SIX)
    assert g.stage() is Stage.CANDIDACY and g.state.round == 1
    g.run("stand 4; stand 1; decline 2,3,5,6")
    assert g.stage() is Stage.INTRODUCTIONS
    # Introductions in the order of standing, each a timed floor.
    assert dict(g.last(Ev.FLOOR_GIVEN).params) == {
        "seat": 4,
        "seconds": 20.0,
        "purpose": "introductions",
    }
    assert g.timers[-1].delay_s == 20.0
    g.run("floor-timeout")
    assert g.last(Ev.FLOOR_GIVEN).params["seat"] == 1
    g.run("yield")
    assert g.stage() is Stage.BALLOT
    assert g.last(Ev.BALLOT_OPENED).params["candidates"] == [4, 1]
    g.run("vote 1,2,3,4 -> 4; vote 5,6 -> 1")
    elected = g.last(Ev.MAYOR_ELECTED)
    assert elected.params["seat"] == 4 and elected.params["how"] == "vote"
    assert elected.params["tally"] == {"1": 2, "4": 4}
    assert g.state.mayor == 4
    assert g.stage() is Stage.NIGHT  # only then the first night begins


@pytest.mark.rule("B1")
def test_the_speaker_has_the_floor_the_others_are_ducked_and_only_the_speaker_yields() -> None:
    g = MayorScenario(SIX).run("stand 2,3; decline 1,4,5,6")
    table = routing(g.state)
    assert Route(2, FULL) in table[5]
    assert Route(3, DUCKED) in table[5]
    refused = g.send(YieldFloor(3))
    assert refused is not None and refused.code == Rej.NOT_YOUR_FLOOR
    g.run("yield")
    assert g.state.floor is not None and g.state.floor.speaker == 3


@pytest.mark.rule("B1")
def test_a_tied_ballot_goes_to_a_runoff_between_the_tied_leaders() -> None:
    g = MayorScenario(SIX).run("stand 1,2,3; decline 4,5,6; yield; yield; yield")
    g.run("vote 1,4 -> 1; vote 2,5 -> 2; vote 3,6 -> 3")
    assert g.stage() is Stage.RUNOFF
    assert g.last(Ev.ELECTION_TIED).params["tied"] == [1, 2, 3]
    g.run("vote 1,4,5,6 -> 2; vote 2 -> 1; vote 3 -> 3")
    elected = g.last(Ev.MAYOR_ELECTED)
    assert (elected.params["seat"], elected.params["how"]) == (2, "runoff")


@pytest.mark.rule("B1")
def test_a_runoff_candidate_must_be_one_of_the_tied() -> None:
    g = MayorScenario(SIX).run("stand 1,2,3; decline 4,5,6; yield; yield; yield")
    g.run("vote 1,2,5 -> 1; vote 3,4,6 -> 2")
    assert g.stage() is Stage.RUNOFF
    assert g.last(Ev.ELECTION_TIED).params["tied"] == [1, 2]
    assert g.refused("vote 4 -> 3") == Rej.NOT_A_CANDIDATE


@pytest.mark.rule("B1")
@pytest.mark.parametrize("seed", range(12))
def test_a_second_tie_is_decided_by_lot(seed: int) -> None:
    g = MayorScenario(SIX, seed=seed).run("stand 1,2; decline 3,4,5,6; yield; yield")
    g.run("vote 1,3,5 -> 1; vote 2,4,6 -> 2")
    assert g.stage() is Stage.RUNOFF
    g.run("vote 1,3,5 -> 1; vote 2,4,6 -> 2")
    elected = g.last(Ev.MAYOR_ELECTED)
    assert elected.params["how"] == "lot" and elected.params["seat"] in (1, 2)


def test_the_lot_can_fall_either_way() -> None:
    mayors = set()
    for seed in range(12):
        g = MayorScenario(SIX, seed=seed).run("stand 1,2; decline 3,4,5,6; yield; yield")
        g.run("vote 1,3,5 -> 1; vote 2,4,6 -> 2; vote 1,3,5 -> 1; vote 2,4,6 -> 2")
        mayors.add(g.state.mayor)
    assert mayors == {1, 2}


@pytest.mark.rule("B1")
def test_anyone_may_stand_a_nazi_too_and_a_single_candidate_is_elected_unopposed() -> None:
    g = MayorScenario(SIX).run("stand 1; decline 2,3,4,5,6")
    assert g.stage() is Stage.INTRODUCTIONS  # a single candidate still introduces themself
    g.run("yield")
    elected = g.last(Ev.MAYOR_ELECTED)
    assert (elected.params["seat"], elected.params["how"]) == (1, "unopposed")
    assert g.stage() is Stage.NIGHT


@pytest.mark.rule("B1")
def test_nobody_standing_puts_everyone_on_the_ballot_without_introductions() -> None:
    g = MayorScenario(SIX).run("decline 1,2,3,4,5,6")
    assert g.last(Ev.NO_CANDIDATES).params["candidates"] == [1, 2, 3, 4, 5, 6]
    assert g.stage() is Stage.BALLOT
    assert Ev.FLOOR_GIVEN not in g.codes()


@pytest.mark.rule("B1")
def test_the_candidacy_ends_at_its_time_and_a_decision_is_final() -> None:
    g = MayorScenario(SIX).run("stand 5")
    assert g.refused("decline 5") == Rej.ALREADY_DECIDED
    g.run("timeout")  # the others kept silent: they do not stand
    assert g.stage() is Stage.INTRODUCTIONS
    refused = g.send(Stand(6))
    assert refused is not None and refused.code == Rej.WRONG_STAGE


@pytest.mark.rule("B1")
def test_a_ballot_nobody_casts_ties_everyone_and_the_lot_decides() -> None:
    g = MayorScenario(SIX).run("stand 3,4; decline 1,2,5,6; yield; yield; timeout")
    assert g.last(Ev.ELECTION_TIED).params["tied"] == [3, 4]
    g.run("timeout")
    assert g.last(Ev.MAYOR_ELECTED).params["how"] == "lot"


@pytest.mark.rule("B1")
def test_who_voted_is_public_at_once_for_whom_only_in_the_result() -> None:
    g = MayorScenario(SIX).run("stand 3,4; decline 1,2,5,6; yield; yield; vote 1 -> 3")
    assert dict(g.last(Ev.VOTE_CAST).params) == {"voter": 1}
    ballot = project(g.state, Viewer.player(2)).ballot
    assert ballot is not None and ballot.voted == (1,)
    assert project(g.state, Viewer.spectator()).to_json()["ballot"] == {
        "candidates": [3, 4],
        "voted": [1],
        "waiting_for": [2, 3, 4, 5, 6],
    }
    g.run("vote 2,3,4,5,6 -> 4")
    assert g.last(Ev.MAYOR_ELECTED).params["votes"] == {
        "1": 3,
        "2": 4,
        "3": 4,
        "4": 4,
        "5": 4,
        "6": 4,
    }


@pytest.mark.rule("B2")
def test_a_mayor_killed_at_night_is_replaced_at_the_start_of_the_next_day() -> None:
    g = MayorScenario(SIX).elect(4)
    g.run("victim 1,2 -> 4")
    assert g.last(Ev.MAYOR_LOST).params["seat"] == 4
    assert g.view(1)["mayor"] is None
    g.run("timeout")  # the morning
    assert g.stage() is Stage.CANDIDACY  # before the accusations
    g.run("stand 5; decline 1,2,3,6; yield")
    assert g.state.mayor == 5
    assert g.stage() is Stage.ACCUSATIONS


@pytest.mark.rule("B2")
def test_a_mayor_sent_to_prison_is_replaced_only_after_the_night() -> None:
    g = MayorScenario(SIX).elect(3).quiet_night()
    assert g.stage() is Stage.ACCUSATIONS  # the mayor lives: no election this morning
    g.run("accuse 1 -> 3").run("timeout").defences().all_vote(3)
    assert g.state.mayor is None and g.last(Ev.MAYOR_LOST).params["seat"] == 3
    assert g.stage() is Stage.NIGHT
    g.quiet_night()
    assert g.stage() is Stage.CANDIDACY and g.state.round == 2  # the morning after night 2
