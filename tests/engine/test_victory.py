"""Who wins (V1-V3), bonded deaths (S10, S11), the defector (S12), the fox (S13), and the
stalemate draw (our decision: after `stalemate_rounds` quiet rounds the game is a draw)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.scenario import Scenario
from vollmond.engine.core import AudienceKind
from vollmond.engine.standard.codes import Ev, Rej
from vollmond.engine.standard.types import Phase


def at(g: Scenario, phase: Phase) -> bool:
    """The scenario's phase now (a call, so the type checker does not pin it down)."""
    return g.phase is phase


def over(g: Scenario) -> dict[str, Any]:
    """The game_over event's parameters; the game must be over."""
    assert at(g, Phase.OVER)
    assert g.state.outcome is not None
    params = dict(g.last(Ev.GAME_OVER).params)
    assert params["sides"] == [s.value for s in g.state.outcome.sides]
    assert params["winners"] == sorted(g.state.outcome.winners)
    return params


# --- V1: the village wins when no evil lives --------------------------------------------------


@pytest.mark.rule("V1", "D5")
def test_village_wins_when_the_last_evil_is_banished() -> None:
    g = Scenario("evil evil seer doctor filler filler filler")
    g.run("evil 1,2 -> 7; timeout; timeout; nominate 3 -> 1; timeout; vote 2,3,4,5,6 -> 1")
    g.run("vote 1 -> 0")
    assert not at(g, Phase.OVER)  # one evil is still alive
    g.run("timeout; timeout; nominate 3 -> 2; timeout; vote 3,4,5,6 -> 2; vote 2 -> 0")
    result = over(g)
    assert result["sides"] == ["village"]
    # The whole village side wins, the dead (7) included; the evil team does not.
    assert result["winners"] == [3, 4, 5, 6, 7]
    assert result["roles"] == {
        "1": "evil", "2": "evil", "3": "seer", "4": "doctor",
        "5": "filler", "6": "filler", "7": "filler",
    }  # fmt: skip
    assert g.last(Ev.GAME_OVER).audience.kind is AudienceKind.PUBLIC


@pytest.mark.rule("V1")
def test_village_wins_at_night_when_the_witch_poisons_the_last_evil() -> None:
    g = Scenario("evil witch filler filler filler")
    g.run("poison 2 -> 1; timeout")
    assert over(g)["sides"] == ["village"]
    assert g.refused("nominate 3 -> 4") == Rej.GAME_OVER


# --- V2: the evil team wins when at least as many as all others --------------------------------


@pytest.mark.rule("V2")
def test_evil_wins_when_as_many_as_the_others() -> None:
    g = Scenario("evil evil seer filler filler filler")
    g.run("evil 1,2 -> 3; timeout")
    assert not at(g, Phase.OVER)  # 2 evil against 3
    g.run("timeout; nominate 1 -> 4; timeout; vote 1,2,5 -> 4; vote 4,6 -> 0")
    result = over(g)
    assert result["sides"] == ["evil"]
    assert result["winners"] == [1, 2]


@pytest.mark.rule("V2", "D1")
def test_evil_wins_at_dawn_after_the_morning_report() -> None:
    g = Scenario("evil evil filler filler filler")
    g.run("evil 1,2 -> 3; timeout")
    assert over(g)["sides"] == ["evil"]
    codes = [e.code for e in g.last_events]
    assert codes.index(Ev.MORNING_REPORT) < codes.index(Ev.GAME_OVER)
    assert Ev.PHASE_STARTED not in codes  # no morning phase after the end


@pytest.mark.rule("V2", "S18")
def test_evil_wins_by_instant_kill() -> None:
    g = Scenario("evil evil filler filler filler", instant_kill=True)
    g.run("timeout; instant 2 -> 4")
    assert over(g)["sides"] == ["evil"]
    assert g.refused("shoot 3 -> 1") == Rej.GAME_OVER


@pytest.mark.rule("V2", "S12")
def test_defector_does_not_count_for_the_evil_majority() -> None:
    g = Scenario("evil defector filler filler")
    g.run("evil 1 -> 3; timeout")
    # Living: evil 1, defector 2, filler 4. Counted with evil it would be 2 : 1; it is 1 : 2.
    assert g.dead == {3}
    assert not at(g, Phase.OVER)
    g.run("timeout; nominate 1 -> 4; timeout; vote 1,2 -> 4; vote 4 -> 0")
    result = over(g)
    assert result["sides"] == ["evil"]
    assert result["winners"] == [1, 2]  # S12: the defector wins with the evil team


@pytest.mark.rule("V2", "S13")
def test_fox_counts_among_the_others() -> None:
    g = Scenario("evil fox filler filler")
    g.run("evil 1 -> 3; timeout")
    assert not at(g, Phase.OVER)  # evil 1 against fox and filler
    g.run("timeout; nominate 1 -> 4; timeout; vote 1,2 -> 4; vote 4 -> 0")
    result = over(g)
    assert result["sides"] == ["evil", "fox"]
    assert result["winners"] == [1, 2]


# --- V3: extra winners ------------------------------------------------------------------------


@pytest.mark.rule("V3", "S11")
def test_lovers_both_alive_win_in_addition() -> None:
    # Lovers 1 (evil) and 3 (filler): the evil side wins and the villager lover wins too.
    g = Scenario("evil evil filler filler filler filler", lovers=(1, 3))
    g.run("evil 1,2 -> 4; timeout; timeout; nominate 1 -> 5; timeout")
    g.run("vote 1,2,3 -> 5; vote 5,6 -> 0")
    result = over(g)
    assert result["sides"] == ["evil", "lovers"]
    assert result["winners"] == [1, 2, 3]
    assert result["lovers"] == [1, 3]


@pytest.mark.rule("V3", "S11")
def test_only_the_two_lovers_left_win_alone_even_if_one_is_evil() -> None:
    g = Scenario("evil filler filler filler", lovers=(1, 2))
    g.run("evil 1 -> 3; timeout")
    assert not at(g, Phase.OVER)
    g.run("timeout; nominate 1 -> 4; timeout; vote 1,2 -> 4; vote 4 -> 0")
    # 1 evil against 1 other would be an evil win; the lovers alone are the exception.
    result = over(g)
    assert result["sides"] == ["lovers"]
    assert result["winners"] == [1, 2]


@pytest.mark.rule("V3", "S11")
def test_lovers_alive_win_in_addition_to_the_village_dead_lovers_do_not() -> None:
    g = Scenario("evil filler filler filler filler", lovers=(2, 3))
    g.run("timeout; timeout; nominate 2 -> 1; timeout; vote 2,3,4,5 -> 1; vote 1 -> 0")
    result = over(g)
    assert result["sides"] == ["village", "lovers"]
    assert result["winners"] == [2, 3, 4, 5]
    g = Scenario("evil filler filler filler filler filler", lovers=(2, 3))
    g.run("evil 1 -> 2; timeout")
    assert g.dead == {2, 3}
    g.run("timeout; nominate 4 -> 1; timeout; vote 4,5,6 -> 1; vote 1 -> 0")
    result = over(g)
    assert result["sides"] == ["village"]
    assert result["winners"] == [2, 3, 4, 5, 6]  # as villagers, not as lovers


@pytest.mark.rule("V3", "S13")
def test_fox_alive_wins_in_addition_to_the_village() -> None:
    g = Scenario("evil fox filler filler filler")
    g.run("timeout; timeout; nominate 2 -> 1; timeout; vote 2,3,4,5 -> 1; vote 1 -> 0")
    result = over(g)
    assert result["sides"] == ["village", "fox"]
    assert result["winners"] == [2, 3, 4, 5]


@pytest.mark.rule("V3", "S13")
def test_dead_fox_wins_nothing() -> None:
    g = Scenario("evil fox filler filler filler")
    g.run("evil 1 -> 2; timeout; timeout; nominate 3 -> 1; timeout; vote 3,4,5 -> 1")
    g.run("vote 1 -> 0")
    result = over(g)
    assert result["sides"] == ["village"]
    assert result["winners"] == [3, 4, 5]  # the fox plays alone: not a village winner


# --- S10: twins die together ------------------------------------------------------------------


@pytest.mark.rule("S10", "D1")
def test_twins_die_together_at_night() -> None:
    g = Scenario("evil evil twin twin filler filler filler")
    g.run("evil 1,2 -> 4; timeout")
    assert g.dead == {3, 4}
    assert g.last(Ev.MORNING_REPORT).params["dead"] == [
        {"seat": 4, "role": "twin"},
        {"seat": 3, "role": "twin"},
    ]


@pytest.mark.rule("S10", "S5")
def test_twins_die_together_when_the_hunter_shoots_one() -> None:
    g = Scenario("evil evil twin twin hunter filler filler filler")
    g.run("timeout; timeout; shoot 5 -> 3")
    assert g.dead == {3, 4}
    assert g.last(Ev.SHOT_FIRED).params["dead"] == [
        {"seat": 3, "role": "twin"},
        {"seat": 4, "role": "twin"},
    ]


@pytest.mark.rule("S10", "D5")
def test_twins_die_together_on_banishment() -> None:
    g = Scenario("evil evil twin twin filler filler filler filler")
    g.run("timeout; timeout; nominate 1 -> 3; timeout; vote 1,2,5,6,7 -> 3; vote 3,4,8 -> 0")
    assert g.dead == {3, 4}
    assert g.last(Ev.VOTE_RESULT).params["dead"] == [
        {"seat": 3, "role": "twin"},
        {"seat": 4, "role": "twin"},
    ]


# --- S11: lovers die together ----------------------------------------------------------------


@pytest.mark.rule("S11", "D1")
def test_lovers_die_together_at_night() -> None:
    g = Scenario("evil evil seer filler filler filler filler", lovers=(3, 6))
    g.run("evil 1,2 -> 3; timeout")
    assert g.dead == {3, 6}
    assert g.last(Ev.MORNING_REPORT).params["dead"] == [
        {"seat": 3, "role": "seer"},
        {"seat": 6, "role": "filler"},
    ]


@pytest.mark.rule("S11", "D5")
def test_lovers_die_together_on_banishment() -> None:
    g = Scenario("evil evil seer filler filler filler filler", lovers=(2, 5))
    g.run("timeout; timeout; nominate 3 -> 2; timeout; vote 3,4,6,7 -> 2; vote 1,2,5 -> 0")
    assert g.dead == {2, 5}
    result = g.last(Ev.VOTE_RESULT).params
    assert result["banished"] == 2 and result["role"] == "evil"
    assert result["dead"] == [{"seat": 2, "role": "evil"}, {"seat": 5, "role": "filler"}]


@pytest.mark.rule("S11")
def test_lovers_know_each_other_and_nobody_else_does() -> None:
    g = Scenario("evil evil seer filler filler filler filler", lovers=(3, 6))
    for seat in (3, 6):
        revealed = g.events_for(seat, Ev.PARTNER_REVEALED)
        assert [e.params for e in revealed] == [{"kind": "lovers", "seats": [3, 6]}]
    assert g.events_for(4, Ev.PARTNER_REVEALED) == []
    assert not any(s["lover"] for s in g.view(4)["seats"])


# --- S12: the defector -----------------------------------------------------------------------


@pytest.mark.rule("S12", "V1")
def test_defector_loses_with_the_evil_team() -> None:
    g = Scenario("evil defector filler filler filler")
    g.run("timeout; timeout; nominate 3 -> 1; timeout; vote 2,3,4,5 -> 1; vote 1 -> 0")
    result = over(g)
    assert result["sides"] == ["village"]
    assert 2 not in result["winners"]  # alive, but on the evil side
    assert result["winners"] == [3, 4, 5]


@pytest.mark.rule("S12")
def test_defector_is_unknown_to_the_evil_team() -> None:
    g = Scenario("evil evil defector filler filler filler")
    team = g.events_for(1, Ev.TEAM_REVEALED)
    assert [e.params["members"] for e in team] == [[1, 2]]
    assert g.events_for(3, Ev.TEAM_REVEALED) == []


# --- Stalemate (decision) ------------------------------------------------------------------


QUIET_ROUND = "timeout; timeout; timeout"  # night, morning, day without nominations


@pytest.mark.rule("V1", "V2")
def test_three_quiet_rounds_end_in_a_draw() -> None:
    g = Scenario("evil evil seer doctor filler filler filler")
    g.run(QUIET_ROUND)
    assert at(g, Phase.NIGHT) and g.state.round == 2 and g.state.quiet_rounds == 1
    g.run(QUIET_ROUND)
    assert at(g, Phase.NIGHT) and g.state.round == 3 and g.state.quiet_rounds == 2
    g.run(QUIET_ROUND)
    result = over(g)
    assert result["sides"] == ["draw"] and result["winners"] == []
    assert g.dead == set()


@pytest.mark.rule("V1", "V2")
def test_a_death_resets_the_quiet_count() -> None:
    g = Scenario("evil evil seer doctor filler filler filler filler filler")
    g.run(QUIET_ROUND)  # round 1
    g.run(QUIET_ROUND)  # round 2
    assert g.state.quiet_rounds == 2
    g.run("evil 1,2 -> 9; timeout; timeout; timeout")  # round 3: someone dies
    assert not at(g, Phase.OVER) and g.state.quiet_rounds == 0
    g.run(QUIET_ROUND)  # round 4
    g.run(QUIET_ROUND)  # round 5
    assert not at(g, Phase.OVER)
    g.run(QUIET_ROUND)  # round 6: the third quiet round in a row
    assert over(g)["sides"] == ["draw"]


@pytest.mark.rule("V1", "V2")
def test_a_banishment_is_not_a_quiet_round_and_the_limit_is_an_option() -> None:
    g = Scenario("evil evil seer doctor filler filler filler filler filler", stalemate_rounds=1)
    g.run("timeout; timeout; nominate 3 -> 9; timeout; vote 1,2,3,4 -> 9; vote 5,6,7,8,9 -> 0")
    assert g.dead == {9} and at(g, Phase.NIGHT)
    g.run(QUIET_ROUND)
    assert over(g)["sides"] == ["draw"]


@pytest.mark.rule("V2")
def test_a_deal_that_already_gives_evil_its_majority_ends_at_once() -> None:
    g = Scenario("evil evil seer filler")
    assert g.phase is Phase.OVER
    assert g.last("game_over").params["sides"] == ["evil"]
