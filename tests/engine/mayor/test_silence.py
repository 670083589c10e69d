"""B6: the dead and the imprisoned hear the living but are never heard by them."""

from __future__ import annotations

import pytest

from tests.engine.mayor.scenario import MayorScenario
from vollmond.engine.core import Viewer
from vollmond.engine.mayor.codes import Ev, Rej
from vollmond.engine.mayor.routing import FULL, SPECTATORS, Route, routing
from vollmond.engine.mayor.types import Stage, Status

SEVEN = "nazi nazi citizen citizen citizen citizen citizen"


def _one_dead_one_imprisoned() -> MayorScenario:
    g = MayorScenario(SEVEN).elect(7).night(3)  # 3 is dead
    g.run("accuse 4 -> 5; timeout").defences().all_vote(5)  # 5 is in prison
    assert g.status(3) is Status.DEAD and g.status(5) is Status.IMPRISONED
    return g


@pytest.mark.rule("B6")
def test_the_out_hear_the_market_and_each_other_but_the_living_never_hear_them() -> None:
    g = _one_dead_one_imprisoned().quiet_night()
    assert g.stage() is Stage.ACCUSATIONS
    table = routing(g.state)
    living = sorted(g.alive)
    listeners: list[int | str] = [*living, SPECTATORS]
    for seat in listeners:
        sources = {r.source for r in table[seat]}
        assert not sources & {3, 5}, (seat, table[seat])
    for out in (3, 5):
        sources = {r.source for r in table[out]}
        assert set(living) <= sources  # they still listen to the village
        assert ({3, 5} - {out}) <= sources  # and to each other
    assert Route(4, FULL) in table[3]


@pytest.mark.rule("B6")
def test_at_night_the_out_hear_only_each_other_and_the_team_only_itself() -> None:
    g = _one_dead_one_imprisoned()
    assert g.stage() is Stage.NIGHT
    table = routing(g.state)
    assert {r.source for r in table[1]} == {2}
    assert {r.source for r in table[3]} == {5}
    assert table[4] == () and table[SPECTATORS] == ()


@pytest.mark.rule("B6")
def test_the_out_chat_only_with_the_out() -> None:
    g = _one_dead_one_imprisoned().quiet_night()
    g.run("say 3: I was right about 1!")
    chat = g.last(Ev.CHAT)
    assert chat.params["room"] == "out" and chat.audience.seats == {3, 5}
    assert not chat.audience.includes(Viewer.player(4))
    assert not chat.audience.includes(Viewer.spectator())
    assert g.refused("accuse 3 -> 1") == Rej.ACTOR_OUT


@pytest.mark.rule("B6")
def test_after_the_game_everyone_talks_again() -> None:
    g = MayorScenario("nazi citizen citizen citizen", lovers=None).elect(4).night(3)
    g.run("accuse 2 -> 1; timeout").defences().all_vote(1)
    assert g.state.is_over
    assert {r.source for r in routing(g.state)[3]} == {1, 2, 4}
