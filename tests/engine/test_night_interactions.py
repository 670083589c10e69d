"""How the night's steps meet: protection, heal, trap, poison, visits, the creeper's drag and
bonded partners dying along. Seats are numbered from 1 in the order of the role string."""

from __future__ import annotations

import pytest

from tests.scenario import Scenario, next_night
from vollmond.engine.standard import ActionKind, Phase, Side
from vollmond.engine.standard.codes import Ev, Rej


def reported(g: Scenario) -> list[int]:
    dead = g.last(Ev.MORNING_REPORT).params["dead"]
    assert isinstance(dead, list)
    seats = []
    for entry in dead:
        assert isinstance(entry, dict)
        seat = entry["seat"]
        assert isinstance(seat, int)
        seats.append(seat)
    return seats


# --- protection and healing -----------------------------------------------------------------


@pytest.mark.rule("S2", "S3")
def test_doctor_and_witch_heal_on_the_same_victim_saves_once_and_uses_the_potion() -> None:
    g = Scenario("evil evil doctor witch filler filler filler filler", stalemate_rounds=9)
    g.run("protect 3 -> 6; evil 1,2 -> 6; heal 4 -> 6; timeout")
    assert g.dead == set()
    assert g.state.player(4).role_state.charges_of(ActionKind.HEAL) == 0
    next_night(g)
    g.run("evil 1,2 -> 7")
    assert g.refused("heal 4 -> 7") == Rej.NO_CHARGES
    g.run("timeout")
    assert g.dead == {7}


@pytest.mark.rule("S2", "S6")
def test_doctor_and_knight_on_the_same_house_save_it() -> None:
    g = Scenario("evil evil doctor knight filler filler filler filler")
    g.run("protect 3 -> 6; protect 4 -> 6; evil 1,2 -> 6; timeout")
    assert g.dead == set()


@pytest.mark.rule("S3", "S2")
def test_poison_kills_despite_the_doctors_protection() -> None:
    g = Scenario("evil evil doctor witch filler filler filler filler")
    g.run("protect 3 -> 6; poison 4 -> 6; timeout")
    assert g.dead == {6}


@pytest.mark.rule("S3", "S6")
def test_poison_kills_despite_the_knights_protection() -> None:
    g = Scenario("evil evil knight witch filler filler filler filler")
    g.run("protect 3 -> 1; poison 4 -> 1; timeout")
    assert g.dead == {1}


@pytest.mark.rule("S3", "N3")
def test_poison_and_attack_on_different_houses_kill_both() -> None:
    g = Scenario("evil evil doctor witch filler filler filler filler")
    g.run("evil 1,2 -> 5; poison 4 -> 6; timeout")
    assert g.dead == {5, 6}
    assert reported(g) == [5, 6]


@pytest.mark.rule("S3", "S2")
def test_protected_victim_poisoned_too_dies_once() -> None:
    g = Scenario("evil evil doctor witch filler filler filler filler")
    g.run("protect 3 -> 5; evil 1,2 -> 5; poison 4 -> 5; timeout")
    assert g.dead == {5}
    assert reported(g) == [5]


# --- the trap --------------------------------------------------------------------------------


@pytest.mark.rule("S9", "S2")
def test_trap_springs_on_a_protected_house_too() -> None:
    g = Scenario("evil evil evil trapper doctor seer filler filler filler filler")
    g.run("trap 4 -> 7; protect 5 -> 7; evil 1,2,3 -> 7; timeout")
    assert 7 in g.alive
    assert len(g.dead) == 1 and g.dead <= {1, 2, 3}


@pytest.mark.rule("S9", "S4")
def test_trap_at_the_night_owls_house_catches_an_attacker_while_she_is_away() -> None:
    g = Scenario("evil evil evil trapper night_owl seer filler filler filler filler")
    g.run("trap 4 -> 5; visit 5 -> 8; evil 1,2,3 -> 5; timeout")
    assert 5 in g.alive
    assert len(g.dead) == 1 and g.dead <= {1, 2, 3}


@pytest.mark.rule("S9", "S4")
def test_night_owl_visiting_the_trapped_victim_still_does_not_come_back() -> None:
    # decision: she dies visiting the attacked house, whatever saved the host.
    g = Scenario("evil evil evil trapper night_owl seer filler filler filler filler")
    g.run("trap 4 -> 8; visit 5 -> 8; evil 1,2,3 -> 8; timeout")
    assert 8 in g.alive and 5 in g.dead
    assert len(g.dead - {5}) == 1 and g.dead - {5} <= {1, 2, 3}


@pytest.mark.rule("S9", "S3")
def test_trapped_victim_needs_no_heal_and_a_given_heal_is_still_used() -> None:
    g = Scenario("evil evil evil trapper witch seer filler filler filler filler")
    g.run("trap 4 -> 8; evil 1,2,3 -> 8; heal 5 -> 8; timeout")
    assert 8 in g.alive
    assert g.state.player(5).role_state.charges_of(ActionKind.HEAL) == 0
    assert len(g.dead) == 1 and g.dead <= {1, 2, 3}


# --- the night-owl ----------------------------------------------------------------------------


@pytest.mark.rule("S4", "S2")
def test_night_owl_visiting_a_protected_victim_does_not_come_back() -> None:
    g = Scenario("evil evil night_owl doctor filler filler filler filler")
    g.run("visit 3 -> 6; protect 4 -> 6; evil 1,2 -> 6; timeout")
    assert g.dead == {3}


@pytest.mark.rule("S4", "S3")
def test_night_owl_visiting_the_poisoned_house_comes_back() -> None:
    # decision: "the victim of the night" is the evil team's victim, not the poisoned.
    g = Scenario("evil evil night_owl witch filler filler filler filler")
    g.run("visit 3 -> 6; poison 4 -> 6; evil 1,2 -> 7; timeout")
    assert g.dead == {6, 7}


@pytest.mark.rule("S4", "S3")
def test_poison_reaches_the_night_owl_even_when_she_is_away() -> None:
    g = Scenario("evil evil night_owl witch filler filler filler filler")
    g.run("visit 3 -> 6; poison 4 -> 3; timeout")
    assert g.dead == {3}


@pytest.mark.rule("S4", "S3")
def test_night_owl_visiting_the_healed_victim_does_not_come_back() -> None:
    g = Scenario("evil evil night_owl witch filler filler filler filler")
    g.run("visit 3 -> 6; evil 1,2 -> 6; heal 4 -> 6; timeout")
    assert g.dead == {3}


# --- the creeper --------------------------------------------------------------------------------

CREEPER = "evil evil creeper doctor witch filler filler filler"


@pytest.mark.rule("S17", "S2")
def test_protected_creeper_does_not_drag_anyone() -> None:
    g = Scenario(CREEPER)
    g.run("protect 4 -> 3; evil 1,2 -> 3; timeout")
    assert g.dead == set()


@pytest.mark.rule("S17", "S3")
def test_healed_creeper_does_not_drag_anyone() -> None:
    g = Scenario(CREEPER)
    g.run("evil 1,2 -> 3; heal 5 -> 3; timeout")
    assert g.dead == set()


@pytest.mark.rule("S17", "S3")
def test_poisoned_creeper_drags_nobody() -> None:
    g = Scenario(CREEPER)
    g.run("poison 5 -> 3; evil 1,2 -> 6; timeout")
    assert g.dead == {3, 6}


@pytest.mark.rule("S17", "S9")
def test_trapped_creeper_survives_and_only_the_trap_kills() -> None:
    g = Scenario("evil evil evil creeper trapper filler filler filler filler filler")
    g.run("trap 5 -> 4; evil 1,2,3 -> 4; timeout")
    assert 4 in g.alive
    assert len(g.dead) == 1 and g.dead <= {1, 2, 3}


@pytest.mark.rule("S17", "V1")
def test_creeper_dragging_the_last_evil_player_wins_the_game_for_the_village() -> None:
    g = Scenario("evil creeper filler filler filler")
    g.run("evil 1 -> 2; timeout")
    assert g.dead == {1, 2}
    assert g.phase is Phase.OVER
    assert g.last(Ev.GAME_OVER).params["sides"] == [Side.VILLAGE.value]


# --- bonded partners ----------------------------------------------------------------------------


@pytest.mark.rule("S11", "D1")
def test_lovers_die_together_after_the_night_kill() -> None:
    g = Scenario("evil evil seer doctor filler filler filler filler", lovers=(3, 6))
    g.run("evil 1,2 -> 3; timeout")
    assert g.dead == {3, 6}
    assert g.last(Ev.MORNING_REPORT).params["dead"] == [
        {"seat": 3, "role": "seer"},
        {"seat": 6, "role": "filler"},
    ]


@pytest.mark.rule("S11", "S2")
def test_a_protected_lover_keeps_the_partner_alive() -> None:
    g = Scenario("evil evil seer doctor filler filler filler filler", lovers=(3, 6))
    g.run("protect 4 -> 3; evil 1,2 -> 3; timeout")
    assert g.dead == set()


@pytest.mark.rule("S11", "S3")
def test_a_poisoned_lover_takes_the_partner_along() -> None:
    g = Scenario("evil evil witch seer filler filler filler filler", lovers=(5, 7))
    g.run("poison 3 -> 7; timeout")
    assert g.dead == {5, 7}


@pytest.mark.rule("S10", "D1")
def test_twins_die_together_after_the_night_kill() -> None:
    g = Scenario("evil evil twin twin seer filler filler filler")
    g.run("evil 1,2 -> 4; timeout")
    assert g.dead == {3, 4}
    assert reported(g) == [4, 3]


@pytest.mark.rule("S10", "S4")
def test_the_twin_of_a_night_owl_who_does_not_come_back_dies_too() -> None:
    g = Scenario("evil evil night_owl twin twin filler filler filler filler")
    g.run("visit 3 -> 1; evil 1,2 -> 6; timeout")
    assert g.dead == {3, 6}
    h = Scenario("evil evil twin twin night_owl filler filler filler filler")
    h.run("visit 5 -> 6; evil 1,2 -> 4; timeout")
    assert h.dead == {3, 4}


@pytest.mark.rule("S17", "S11")
def test_the_creepers_dragged_attacker_takes_his_lover_along() -> None:
    g = Scenario("evil evil creeper filler filler filler filler filler", lovers=(1, 6))
    g.run("evil 1 -> 3; timeout")
    assert g.dead == {3, 1, 6}
    assert reported(g) == [3, 1, 6]


@pytest.mark.rule("S17", "S11")
def test_a_creeper_who_is_a_lover_takes_his_lover_and_an_attacker() -> None:
    g = Scenario("evil evil creeper filler filler filler filler filler", lovers=(3, 7))
    g.run("evil 1 -> 3; timeout")
    assert g.dead == {1, 3, 7}


@pytest.mark.rule("S11", "S9")
def test_a_trapped_attacker_takes_his_lover_along() -> None:
    g = Scenario("evil evil trapper filler filler filler filler filler", lovers=(2, 8))
    g.run("trap 3 -> 5; evil 2 -> 5; timeout")
    assert g.dead == {2, 8}
