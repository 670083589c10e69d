"""B5: the evil team must agree on one victim, otherwise nobody dies; announced by day."""

from __future__ import annotations

import pytest

from tests.engine.mayor.scenario import MayorScenario
from vollmond.engine.core import AudienceKind, Viewer
from vollmond.engine.mayor.codes import Ev, Rej
from vollmond.engine.mayor.types import Stage, Status
from vollmond.engine.mayor.view import project

SEVEN = "nazi nazi citizen citizen citizen citizen citizen"


def night() -> MayorScenario:
    return MayorScenario(SEVEN).elect(7)


@pytest.mark.rule("B5")
def test_an_agreed_victim_dies_and_is_announced_by_day_with_the_role() -> None:
    g = night().run("victim 1 -> 4")
    assert g.stage() is Stage.NIGHT  # one Nazi alone is not the team
    g.run("victim 2 -> 4")
    assert g.stage() is Stage.MORNING  # agreement ends the night
    report = g.last(Ev.NIGHT_VICTIM)
    assert report.audience.kind is AudienceKind.PUBLIC
    assert (report.params["seat"], report.params["role"]) == (4, "citizen")
    assert g.status(4) is Status.DEAD


@pytest.mark.rule("B5")
def test_no_agreement_means_no_victim() -> None:
    g = night().run("victim 1 -> 4; victim 2 -> 5; timeout")
    assert Ev.NIGHT_QUIET in g.codes() and g.out == set()


@pytest.mark.rule("B5")
def test_a_nazi_may_change_their_mind_until_the_team_agrees() -> None:
    g = night().run("victim 1 -> 4; victim 2 -> 5; victim 1 -> 5")
    assert g.stage() is Stage.MORNING and g.status(5) is Status.DEAD


@pytest.mark.rule("B5")
def test_only_the_team_chooses_and_never_one_of_its_own() -> None:
    g = night()
    assert g.refused("victim 3 -> 4") == Rej.NO_NIGHT_ACTION
    assert g.refused("victim 1 -> 2") == Rej.TARGET_TEAMMATE
    assert g.refused("victim 1 -> 1") == Rej.TARGET_SELF


@pytest.mark.rule("B5")
def test_the_choices_reach_the_living_team_only() -> None:
    g = night().run("victim 1 -> 4")
    chosen = g.last(Ev.VICTIM_CHOSEN)
    assert chosen.audience.seats == {1, 2}
    assert project(g.state, Viewer.player(2)).night_room is not None
    assert project(g.state, Viewer.player(4)).night_room is None


@pytest.mark.rule("B5")
def test_the_team_learns_each_other_only_when_it_first_wakes() -> None:
    """Seed 000: the Nazis recognise each other when first called at night, so during the
    first election a Nazi does not know the other."""
    g = MayorScenario(SEVEN)
    assert project(g.state, Viewer.player(1)).seats[1].role is None
    assert Ev.TEAM_REVEALED not in g.codes()
    g.elect(7)
    assert g.last(Ev.TEAM_REVEALED).params["members"] == [1, 2]
    assert project(g.state, Viewer.player(1)).seats[1].role == "nazi"
    assert project(g.state, Viewer.player(3)).seats[1].role is None
