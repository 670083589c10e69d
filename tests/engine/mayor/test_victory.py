"""B7: the game ends when all Nazis or all democrats are out; the mixed lover pair."""

from __future__ import annotations

import pytest

from tests.engine.mayor.scenario import MayorScenario
from vollmond.engine.mayor.codes import Ev
from vollmond.engine.mayor.types import Side, Stage, Status


def outcome(g: MayorScenario) -> tuple[str, list[int]]:
    over = g.last(Ev.GAME_OVER)
    return over.params["side"], over.params["winners"]  # type: ignore[return-value]


@pytest.mark.rule("B7")
def test_the_democrats_win_when_every_nazi_is_out_the_out_democrats_too() -> None:
    g = MayorScenario("nazi citizen citizen citizen citizen").elect(5).night(2)
    g.run("accuse 3 -> 1; timeout").defences().all_vote(1)
    assert outcome(g) == (Side.DEMOCRATS, [2, 3, 4, 5])
    assert g.state.is_over and g.stage() is Stage.OVER


@pytest.mark.rule("B7")
def test_the_nazis_win_only_when_every_democrat_is_out_no_parity_rule() -> None:
    g = MayorScenario("nazi citizen citizen citizen").elect(4).night(2)
    g.run("accuse 1 -> 3; timeout").defences().all_vote(3)
    assert g.alive == {1, 4}
    assert not g.state.is_over  # one Nazi and one democrat: the game goes on (seed 000)
    g.run("victim 1 -> 4")
    assert outcome(g) == (Side.NAZIS, [1])


@pytest.mark.rule("B7")
def test_a_mixed_lover_pair_wins_when_nobody_else_is_left() -> None:
    g = MayorScenario("nazi citizen citizen citizen", lovers=(1, 2)).elect(4).night(3)
    g.run("accuse 1 -> 4; timeout").defences().all_vote(4)
    assert g.alive == {1, 2}
    assert outcome(g) == (Side.LOVERS, [1, 2])


@pytest.mark.rule("B7")
def test_a_mixed_lover_pair_does_not_win_with_either_team() -> None:
    g = MayorScenario("nazi citizen citizen citizen citizen", lovers=(1, 2)).elect(3)
    g.night(4).run("accuse 3 -> 1; timeout").defences().all_vote(1)
    assert g.status(1) is Status.IMPRISONED and g.status(2) is Status.DEAD  # grief
    assert outcome(g) == (Side.DEMOCRATS, [3, 4, 5])  # 2 loved a Nazi: no win


@pytest.mark.rule("B7")
def test_a_same_team_lover_pair_wins_with_its_team() -> None:
    g = MayorScenario("nazi citizen citizen citizen citizen", lovers=(2, 3)).elect(5).night(4)
    g.run("accuse 3 -> 1; timeout").defences().all_vote(1)
    assert outcome(g) == (Side.DEMOCRATS, [2, 3, 4, 5])


@pytest.mark.rule("B7")
def test_lovers_leave_the_game_together() -> None:
    g = MayorScenario("nazi nazi citizen citizen citizen citizen citizen", lovers=(3, 4))
    g.elect(7).run("victim 1,2 -> 3")
    report = g.last(Ev.NIGHT_VICTIM)
    assert report.params["dead"] == [{"seat": 3, "role": "citizen"}, {"seat": 4, "role": "citizen"}]


def test_rounds_without_anyone_leaving_end_in_a_draw() -> None:
    """Decision: like the standard rules, three quiet rounds end the game undecided."""
    g = MayorScenario("nazi citizen citizen citizen citizen").elect(5)
    for _ in range(3):
        g.quiet_night().run("timeout")
    assert outcome(g) == (Side.DRAW, [])
