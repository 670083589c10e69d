"""B3, B4: accusations, defences as timed floors, the compulsory vote, runoff, mayor's vote."""

from __future__ import annotations

import pytest

from tests.engine.mayor.scenario import MayorScenario
from vollmond.engine.mayor.codes import Ev, Rej
from vollmond.engine.mayor.commands import Vote
from vollmond.engine.mayor.legal import legal_commands
from vollmond.engine.mayor.types import Stage, Status

SEVEN = "nazi nazi citizen citizen citizen citizen citizen"


def day(mayor: int = 7, roles: str = SEVEN, **kw: object) -> MayorScenario:
    """An elected mayor, a quiet first night: the accusations of day 1 are open."""
    g = MayorScenario(roles, **kw).elect(mayor).quiet_night()  # type: ignore[arg-type]
    assert g.stage() is Stage.ACCUSATIONS
    return g


@pytest.mark.rule("B3")
def test_the_accused_defend_in_turn_then_everyone_votes_and_the_most_votes_go_to_prison() -> None:
    g = day().run("accuse 3 -> 1; accuse 1 -> 4; timeout")
    assert g.stage() is Stage.DEFENCE
    assert dict(g.last(Ev.FLOOR_GIVEN).params) == {"seat": 1, "seconds": 30.0, "purpose": "defence"}
    g.run("floor-timeout")
    assert g.last(Ev.FLOOR_GIVEN).params["seat"] == 4
    g.run("yield")
    assert g.stage() is Stage.VOTE
    assert g.last(Ev.TRIAL_OPENED).params["accused"] == [1, 4]
    g.run("vote 2,3,4,5,6 -> 1; vote 1,7 -> 4")
    prison = g.last(Ev.IMPRISONED)
    assert (prison.params["seat"], prison.params["role"], prison.params["how"]) == (
        1,
        "nazi",
        "vote",
    )
    assert g.status(1) is Status.IMPRISONED
    assert g.view(3)["seats"][0]["role"] == "nazi"  # the card is turned over for everyone
    assert g.stage() is Stage.NIGHT


@pytest.mark.rule("B3")
def test_only_the_accused_can_be_voted_for_and_there_is_no_abstention() -> None:
    g = day().run("accuse 3 -> 1; accuse 1 -> 4; timeout").defences()
    assert g.refused("vote 2 -> 5") == Rej.NOT_A_CANDIDATE
    menu = legal_commands(g.state, 2)
    assert menu == [Vote(2, 1), Vote(2, 4)]  # no "abstain" among the choices
    g.run("vote 2 -> 1")
    assert g.refused("vote 2 -> 4") == Rej.ALREADY_VOTED


@pytest.mark.rule("B3")
def test_accusing_is_once_a_day_of_another_living_player_not_yet_accused() -> None:
    g = day()
    assert g.refused("accuse 3 -> 3") == Rej.TARGET_SELF
    g.run("accuse 3 -> 1")
    assert g.refused("accuse 3 -> 2") == Rej.ALREADY_ACCUSED
    assert g.refused("accuse 4 -> 1") == Rej.TARGET_ACCUSED
    assert g.refused("accuse 4 -> 9") == Rej.TARGET_UNKNOWN


@pytest.mark.rule("B3")
def test_a_day_without_accusations_has_no_vote() -> None:
    g = day().run("timeout")
    assert Ev.NO_ACCUSATIONS in g.codes()
    assert g.stage() is Stage.NIGHT and g.out == set()


@pytest.mark.rule("B3")
def test_a_vote_nobody_casts_sends_nobody_to_prison() -> None:
    """Decision: the rules cannot move a finger; missing votes count for nobody."""
    g = day().run("accuse 3 -> 1; timeout").defences().run("timeout")
    assert Ev.ACQUITTED in g.codes() and g.out == set()


@pytest.mark.rule("B4")
def test_a_tie_goes_to_a_runoff_between_the_tied() -> None:
    g = day().run("accuse 3 -> 1; accuse 1 -> 4; accuse 4 -> 5; timeout").defences()
    g.run("vote 1,2,3 -> 4; vote 4,5,6 -> 1; vote 7 -> 5")
    assert g.last(Ev.TRIAL_TIED).params["tied"] == [1, 4]
    assert g.stage() is Stage.REVOTE
    assert g.refused("vote 7 -> 5") == Rej.NOT_A_CANDIDATE
    g.run("vote 1,2,3,7 -> 4; vote 4,5,6 -> 1")
    prison = g.last(Ev.IMPRISONED)
    assert (prison.params["seat"], prison.params["how"]) == (4, "runoff")


@pytest.mark.rule("B4")
def test_a_second_tie_is_decided_by_the_mayors_double_vote() -> None:
    roles = "nazi citizen citizen citizen citizen citizen"
    g = day(mayor=6, roles=roles).run("accuse 3 -> 1; accuse 1 -> 4; timeout").defences()
    g.run("vote 1,2,3 -> 4; vote 4,5,6 -> 1")
    assert g.stage() is Stage.REVOTE
    g.run("vote 1,2,3 -> 4; vote 4,5,6 -> 1")  # the mayor (6) points at 1
    prison = g.last(Ev.IMPRISONED)
    assert (prison.params["seat"], prison.params["how"]) == (1, "mayor")
    assert prison.params["tally"] == {"1": 3, "4": 3}  # the public count, one vote each


@pytest.mark.rule("B4")
def test_without_a_mayor_a_second_tie_sends_nobody_to_prison() -> None:
    """Decision: in doubt for the accused (the mayor left the game during the day)."""
    roles = "nazi citizen citizen citizen citizen citizen citizen"
    g = day(mayor=7, roles=roles).run("accuse 3 -> 1; accuse 1 -> 4; timeout").defences()
    g.run("leave 7")
    g.run("vote 1,2,3 -> 4; vote 4,5,6 -> 1; vote 1,2,3 -> 4; vote 4,5,6 -> 1")
    assert Ev.ACQUITTED in g.codes() and g.status(1) is Status.ALIVE
    assert g.status(4) is Status.ALIVE


@pytest.mark.rule("B3")
def test_the_out_cannot_accuse_or_vote() -> None:
    g = MayorScenario(SEVEN).elect(7).night(3)
    assert g.refused("accuse 3 -> 1") == Rej.ACTOR_OUT
    g.run("accuse 4 -> 1; timeout").defences()
    assert g.refused("vote 3 -> 1") == Rej.ACTOR_OUT


@pytest.mark.rule("B3")
def test_a_single_accused_still_faces_the_vote_and_may_point_at_themself() -> None:
    """Decisions: one accusation still leads to a vote (it is compulsory and only the accused
    can be chosen, so the accused goes unless nobody votes); pointing at oneself is allowed."""
    g = day().run("accuse 3 -> 1; timeout").defences()
    assert g.stage() is Stage.VOTE
    assert legal_commands(g.state, 1) == [Vote(1, 1)]
    g.run("vote 1 -> 1; timeout")
    assert g.status(1) is Status.IMPRISONED
    assert g.last(Ev.IMPRISONED).params["tally"] == {"1": 1}
