"""The special roles of the night, one at a time (S1-S4, S6-S9, S14, S17).
Seats are numbered from 1 in the order of the role string."""

from __future__ import annotations

import pytest

from tests.scenario import Scenario, banish, next_night
from vollmond.engine.core import Viewer
from vollmond.engine.standard import ActionKind, CallSettings, Phase, RoleId
from vollmond.engine.standard.codes import Ev, Rej
from vollmond.engine.standard.legal import ability_targets
from vollmond.engine.standard.routing import routing
from vollmond.engine.standard.types import CallKind, CallStatus, NightStep

# --- S1 seer -------------------------------------------------------------------------------

SEER_TABLE = "evil evil seer defector fox filler filler filler"


@pytest.mark.rule("S1")
def test_seer_learns_at_once_that_an_evil_player_is_evil() -> None:
    g = Scenario(SEER_TABLE)
    g.run("check 3 -> 1")
    result = g.last(Ev.CHECK_RESULT)
    assert result.params == {"target": 1, "evil": True}
    assert result.audience.seats == {3}
    facts = g.view(3)["me"]["facts"]
    assert facts == [{"kind": "check", "round": 1, "subject": 1, "evil": True}]


@pytest.mark.rule("S1")
def test_seer_sees_a_villager_as_harmless() -> None:
    g = Scenario(SEER_TABLE)
    g.run("check 3 -> 6")
    assert g.last(Ev.CHECK_RESULT).params == {"target": 6, "evil": False}


@pytest.mark.rule("S1", "S12")
def test_seer_sees_the_defector_as_harmless() -> None:
    g = Scenario(SEER_TABLE)
    g.run("check 3 -> 4")
    assert g.last(Ev.CHECK_RESULT).params == {"target": 4, "evil": False}


@pytest.mark.rule("S1", "S13")
def test_seer_sees_the_fox_as_harmless() -> None:
    g = Scenario(SEER_TABLE)
    g.run("check 3 -> 5")
    assert g.last(Ev.CHECK_RESULT).params == {"target": 5, "evil": False}


@pytest.mark.rule("S1")
def test_seer_cannot_check_herself() -> None:
    g = Scenario(SEER_TABLE)
    assert g.refused("check 3 -> 3") == Rej.TARGET_SELF
    assert 3 not in ability_targets(g.state, 3, ActionKind.CHECK)


@pytest.mark.rule("S1")
def test_seer_checks_one_person_per_night_and_again_the_next_night() -> None:
    g = Scenario(SEER_TABLE, stalemate_rounds=9)
    g.run("check 3 -> 6")
    assert g.refused("check 3 -> 1") == Rej.ALREADY_ACTED
    next_night(g)
    g.run("check 3 -> 2")
    assert [e.params["target"] for e in g.events_for(3, Ev.CHECK_RESULT)] == [6, 2]


@pytest.mark.rule("S1", "D6")
def test_seer_cannot_check_the_dead_and_a_dead_seer_cannot_check() -> None:
    g = Scenario(SEER_TABLE, stalemate_rounds=9)
    g.run("evil 1,2 -> 6")
    next_night(g)
    assert g.refused("check 3 -> 6") == Rej.TARGET_DEAD
    g.run("evil 1,2 -> 3")
    next_night(g)
    assert g.refused("check 3 -> 1") == Rej.ACTOR_DEAD


@pytest.mark.rule("S1")
def test_nobody_else_learns_the_seers_answer() -> None:
    g = Scenario(SEER_TABLE)
    g.run("check 3 -> 1")
    for seat in (1, 2, 4, 5, 6, 7, 8):
        assert g.events_for(seat, Ev.CHECK_RESULT) == []


# --- S2 doctor -----------------------------------------------------------------------------

DOCTOR_TABLE = "evil evil doctor filler filler filler filler filler"


@pytest.mark.rule("S2", "N3")
def test_doctor_protects_the_victim_from_the_attack() -> None:
    g = Scenario(DOCTOR_TABLE)
    g.run("protect 3 -> 5; evil 1,2 -> 5; timeout")
    assert g.dead == set()


@pytest.mark.rule("S2")
def test_doctor_protecting_another_house_does_not_save_the_victim() -> None:
    g = Scenario(DOCTOR_TABLE)
    g.run("protect 3 -> 6; evil 1,2 -> 5; timeout")
    assert g.dead == {5}


@pytest.mark.rule("S2")
def test_doctor_may_protect_herself() -> None:
    g = Scenario(DOCTOR_TABLE)
    g.run("protect 3 -> 3; evil 1,2 -> 3; timeout")
    assert g.dead == set()


@pytest.mark.rule("S2")
def test_doctor_cannot_protect_the_same_person_two_nights_in_a_row() -> None:
    g = Scenario(DOCTOR_TABLE, stalemate_rounds=9)
    g.run("protect 3 -> 5")
    next_night(g)
    assert g.refused("protect 3 -> 5") == Rej.REPEAT_TARGET
    assert 5 not in ability_targets(g.state, 3, ActionKind.PROTECT)
    g.run("protect 3 -> 6")
    next_night(g)
    g.run("protect 3 -> 5; evil 1,2 -> 5; timeout")
    assert g.dead == set()


@pytest.mark.rule("S2")
def test_doctor_may_protect_the_same_person_again_after_a_night_off() -> None:
    g = Scenario(DOCTOR_TABLE, stalemate_rounds=9)
    g.run("protect 3 -> 3")
    next_night(g)
    assert g.refused("protect 3 -> 3") == Rej.REPEAT_TARGET
    next_night(g)  # the doctor protected nobody: the mark is cleared
    g.run("protect 3 -> 3; evil 1,2 -> 3; timeout")
    assert g.dead == set()


@pytest.mark.rule("S2")
def test_doctor_protects_one_person_per_night() -> None:
    g = Scenario(DOCTOR_TABLE)
    g.run("protect 3 -> 5")
    assert g.refused("protect 3 -> 6") == Rej.ALREADY_ACTED


# --- S3 witch ------------------------------------------------------------------------------

WITCH_TABLE = "evil evil witch seer filler filler filler filler"


@pytest.mark.rule("S3")
def test_witch_heal_saves_the_nights_victim_and_is_used_up() -> None:
    g = Scenario(WITCH_TABLE, stalemate_rounds=9)
    g.run("evil 1,2 -> 5; heal 3 -> 5; timeout")
    assert g.dead == set()
    assert g.state.player(3).role_state.charges_of(ActionKind.HEAL) == 0
    next_night(g)
    g.run("evil 1,2 -> 6")
    assert g.refused("heal 3 -> 6") == Rej.NO_CHARGES
    g.run("timeout")
    assert g.dead == {6}


@pytest.mark.rule("S3")
def test_witch_heal_names_the_victim_and_nobody_else() -> None:
    g = Scenario(WITCH_TABLE)
    g.run("evil 1,2 -> 5")
    assert g.refused("heal 3 -> 6") == Rej.VICTIM_UNKNOWN
    assert ability_targets(g.state, 3, ActionKind.HEAL) == [5]


@pytest.mark.rule("S3")
def test_witch_may_heal_herself_when_she_is_the_victim() -> None:
    # decision: the heal saves "the victim of the night", whoever it is.
    g = Scenario(WITCH_TABLE)
    g.run("evil 1,2 -> 3; heal 3 -> 3; timeout")
    assert g.dead == set()


@pytest.mark.rule("S3")
def test_witch_poison_kills_another_person_once_per_game() -> None:
    g = Scenario(WITCH_TABLE, stalemate_rounds=9)
    g.run("poison 3 -> 1; timeout")
    assert g.dead == {1}
    assert g.last(Ev.MORNING_REPORT).params["dead"] == [{"seat": 1, "role": "evil"}]
    next_night(g)
    assert g.refused("poison 3 -> 2") == Rej.NO_CHARGES


@pytest.mark.rule("S3")
def test_witch_cannot_poison_herself() -> None:
    g = Scenario(WITCH_TABLE)
    assert g.refused("poison 3 -> 3") == Rej.TARGET_SELF
    assert 3 not in ability_targets(g.state, 3, ActionKind.POISON)


@pytest.mark.rule("S3")
def test_witch_uses_at_most_one_potion_per_night() -> None:
    g = Scenario(WITCH_TABLE)
    g.run("evil 1,2 -> 5; heal 3 -> 5")
    assert g.refused("poison 3 -> 1") == Rej.ONE_POTION_PER_NIGHT
    h = Scenario(WITCH_TABLE)
    h.run("poison 3 -> 6; evil 1,2 -> 5")
    assert h.refused("heal 3 -> 5") == Rej.ONE_POTION_PER_NIGHT
    h.run("timeout")
    assert h.dead == {5, 6}


@pytest.mark.rule("S3")
def test_witch_may_pass_and_keeps_both_potions() -> None:
    g = Scenario(WITCH_TABLE, stalemate_rounds=9)
    g.run("evil 1,2 -> 5; timeout")
    assert g.dead == {5}
    assert g.state.player(3).role_state.charges_of(ActionKind.HEAL) == 1
    assert g.state.player(3).role_state.charges_of(ActionKind.POISON) == 1
    next_night(g)
    g.run("evil 1,2 -> 6; heal 3 -> 6; timeout")
    assert g.dead == {5}


@pytest.mark.rule("S3")
def test_witch_uses_both_potions_on_different_nights() -> None:
    g = Scenario(WITCH_TABLE, stalemate_rounds=9)
    g.run("evil 1,2 -> 5; heal 3 -> 5; timeout")
    next_night(g)
    g.run("poison 3 -> 2; timeout")
    assert g.dead == {2}
    assert g.state.player(3).role_state.charges == {ActionKind.HEAL: 0, ActionKind.POISON: 0}
    assert g.view(3)["me"]["memory"] == {"heal": 0, "poison": 0}


# --- S4 night-owl --------------------------------------------------------------------------

OWL_TABLE = "evil evil night_owl defector filler filler filler filler"


@pytest.mark.rule("S4")
def test_night_owl_away_from_home_survives_an_attack() -> None:
    g = Scenario(OWL_TABLE)
    g.run("visit 3 -> 5; evil 1,2 -> 3; timeout")
    assert g.dead == set()


@pytest.mark.rule("S4")
def test_night_owl_at_home_dies_of_an_attack() -> None:
    g = Scenario(OWL_TABLE)
    g.run("evil 1,2 -> 3; timeout")
    assert g.dead == {3}


@pytest.mark.rule("S4")
def test_night_owl_visiting_an_evil_player_does_not_come_back() -> None:
    g = Scenario(OWL_TABLE)
    g.run("visit 3 -> 2; evil 1,2 -> 6; timeout")
    assert g.dead == {3, 6}


@pytest.mark.rule("S4")
def test_night_owl_visiting_the_nights_victim_dies_with_the_victim() -> None:
    g = Scenario(OWL_TABLE)
    g.run("visit 3 -> 6; evil 1,2 -> 6; timeout")
    assert g.dead == {3, 6}


@pytest.mark.rule("S4")
def test_night_owl_visiting_a_quiet_house_comes_back() -> None:
    g = Scenario(OWL_TABLE)
    g.run("visit 3 -> 7; evil 1,2 -> 6; timeout")
    assert g.dead == {6}


@pytest.mark.rule("S4", "S12")
def test_night_owl_visiting_the_defector_comes_back() -> None:
    # decision: "a person of the evil team" means the night room; the defector is unknown to it.
    g = Scenario(OWL_TABLE)
    g.run("visit 3 -> 4; evil 1,2 -> 6; timeout")
    assert g.dead == {6}


@pytest.mark.rule("S4")
def test_night_owl_cannot_visit_herself() -> None:
    g = Scenario(OWL_TABLE)
    assert g.refused("visit 3 -> 3") == Rej.TARGET_SELF


# --- S6 knight -----------------------------------------------------------------------------

KNIGHT_TABLE = "evil evil knight filler filler filler filler filler"


@pytest.mark.rule("S6")
def test_knight_protects_another_player_from_the_attack() -> None:
    g = Scenario(KNIGHT_TABLE)
    g.run("protect 3 -> 5; evil 1,2 -> 5; timeout")
    assert g.dead == set()


@pytest.mark.rule("S6")
def test_knight_cannot_protect_himself() -> None:
    g = Scenario(KNIGHT_TABLE)
    assert g.refused("protect 3 -> 3") == Rej.TARGET_SELF
    assert 3 not in ability_targets(g.state, 3, ActionKind.PROTECT)


@pytest.mark.rule("S6")
def test_knight_cannot_protect_the_same_player_twice_in_a_row_but_after_a_pause() -> None:
    g = Scenario(KNIGHT_TABLE, stalemate_rounds=9)
    g.run("protect 3 -> 5")
    next_night(g)
    assert g.refused("protect 3 -> 5") == Rej.REPEAT_TARGET
    next_night(g)
    g.run("protect 3 -> 5; evil 1,2 -> 5; timeout")
    assert g.dead == set()


# --- S7 medium -----------------------------------------------------------------------------

MEDIUM_TABLE = "evil evil evil medium seer filler filler filler filler filler"


@pytest.mark.rule("S7")
def test_medium_learns_nothing_before_anyone_was_banished() -> None:
    g = Scenario(MEDIUM_TABLE, stalemate_rounds=9)
    assert g.events_for(4, Ev.MEDIUM_RESULT) == []
    next_night(g)
    assert g.events_for(4, Ev.MEDIUM_RESULT) == []


@pytest.mark.rule("S7", "D5")
def test_medium_learns_that_the_banished_player_was_evil() -> None:
    g = Scenario(MEDIUM_TABLE, stalemate_rounds=9)
    banish(g, 1)
    result = g.last(Ev.MEDIUM_RESULT)
    assert result.params == {"target": 1, "evil": True}
    assert result.audience.seats == {4}
    for seat in (2, 3, 5, 6):
        assert g.events_for(seat, Ev.MEDIUM_RESULT) == []


@pytest.mark.rule("S7")
def test_medium_learns_that_the_banished_player_was_harmless() -> None:
    g = Scenario(MEDIUM_TABLE, stalemate_rounds=9)
    banish(g, 6)
    assert g.last(Ev.MEDIUM_RESULT).params == {"target": 6, "evil": False}


@pytest.mark.rule("S7")
def test_medium_hears_each_night_about_the_most_recently_banished() -> None:
    g = Scenario(MEDIUM_TABLE, stalemate_rounds=9)
    banish(g, 6)
    next_night(g)  # nobody banished this day: still about seat 6
    banish(g, 2)
    told = [(e.params["target"], e.params["evil"]) for e in g.events_for(4, Ev.MEDIUM_RESULT)]
    assert told == [(6, False), (6, False), (2, True)]


@pytest.mark.rule("S7", "S12")
def test_medium_sees_a_banished_defector_as_harmless() -> None:
    # decision: the medium sees as the seer sees; the defector is not of the evil team.
    g = Scenario("evil evil evil medium defector filler filler filler filler filler")
    banish(g, 5)
    assert g.last(Ev.MEDIUM_RESULT).params == {"target": 5, "evil": False}


@pytest.mark.rule("S7")
def test_medium_is_not_told_about_night_deaths() -> None:
    g = Scenario(MEDIUM_TABLE, stalemate_rounds=9)
    g.run("evil 1,2,3 -> 7")
    next_night(g)
    assert 7 in g.dead
    assert g.events_for(4, Ev.MEDIUM_RESULT) == []


@pytest.mark.rule("S7", "S16")
def test_medium_does_not_count_a_spared_princess_as_banished() -> None:
    g = Scenario("evil evil evil medium princess filler filler filler filler filler")
    banish(g, 5)
    assert 5 in g.alive
    assert g.events_for(4, Ev.MEDIUM_RESULT) == []


# --- S8 necromancer ------------------------------------------------------------------------

NECRO_TABLE = "evil evil necromancer seer filler filler filler filler"


def _necro_night_two() -> Scenario:
    g = Scenario(NECRO_TABLE, stalemate_rounds=9)
    g.run("evil 1,2 -> 6")
    next_night(g)
    assert g.dead == {6}
    return g


@pytest.mark.rule("S8")
def test_necromancer_is_connected_to_a_dead_player_at_once() -> None:
    g = _necro_night_two()
    g.run("seance 3 -> 6")
    opened = g.last(Ev.SEANCE_OPENED)
    assert opened.audience.seats == {3, 6}
    assert opened.params["dead"] == 6
    [call] = g.state.calls
    assert (call.kind, call.status, call.caller, call.callee) == (
        CallKind.SEANCE,
        CallStatus.ACTIVE,
        3,
        6,
    )
    assert [r.source for r in routing(g.state)[3]] == [6]
    assert [r.source for r in routing(g.state)[6]] == [3]
    g.run("say 6: it was the baker")
    chat = g.last(Ev.CHAT)
    assert chat.audience.seats == {3, 6}
    assert not chat.audience.includes(Viewer.spectator())


@pytest.mark.rule("S8")
def test_necromancer_hash_alone_means_nobody() -> None:
    g = _necro_night_two()
    g.run("seance 3 -> #")
    assert g.state.calls == ()
    assert g.events_for(3, Ev.SEANCE_OPENED) == []
    assert g.refused("seance 3 -> 6") == Rej.ALREADY_ACTED


@pytest.mark.rule("S8")
def test_necromancer_cannot_reach_a_living_player() -> None:
    g = _necro_night_two()
    assert g.refused("seance 3 -> 5") == Rej.TARGET_ALIVE
    assert g.refused("seance 3 -> 3") == Rej.TARGET_ALIVE
    assert ability_targets(g.state, 3, ActionKind.SEANCE) == [None, 6]


@pytest.mark.rule("S8")
def test_the_seance_ends_with_the_night() -> None:
    g = _necro_night_two()
    g.run("seance 3 -> 6; timeout")
    ended = g.last(Ev.CALL_ENDED)
    assert ended.params["reason"] == "phase_end" and ended.params["kind"] == "seance"
    assert g.state.calls == ()


@pytest.mark.rule("S8")
def test_either_side_of_a_seance_may_hang_up_and_there_is_one_seance_per_night() -> None:
    g = _necro_night_two()
    g.run("seance 3 -> 6; hangup 6")
    assert g.last(Ev.CALL_ENDED).params["reason"] == "hung_up"
    assert g.state.calls == ()
    assert g.refused("seance 3 -> 6") == Rej.ALREADY_ACTED
    h = _necro_night_two()
    h.run("seance 3 -> 6; hangup 3")
    assert h.state.calls == ()


@pytest.mark.rule("S8")
def test_necromancer_in_night_one_has_nobody_to_reach() -> None:
    g = Scenario(NECRO_TABLE)
    assert ability_targets(g.state, 3, ActionKind.SEANCE) == [None]


# --- S9 trapper ----------------------------------------------------------------------------

TRAP_TABLE = "evil evil evil trapper seer filler filler filler filler filler"


@pytest.mark.rule("S9")
def test_trap_at_the_victims_house_kills_one_attacker_and_saves_the_victim() -> None:
    for seed in range(8):
        g = Scenario(TRAP_TABLE, seed=seed)
        g.run("trap 4 -> 7; evil 1,2 -> 7; evil 3 -> 8; timeout")
        assert 7 in g.alive and 8 in g.alive
        # Exactly one of those who attacked house 7 dies; evil 3 went elsewhere.
        assert len(g.dead) == 1 and g.dead <= {1, 2}


@pytest.mark.rule("S9")
def test_the_trap_picks_the_attacker_by_lot() -> None:
    caught = set()
    for seed in range(30):
        g = Scenario(TRAP_TABLE, seed=seed)
        g.run("trap 4 -> 7; evil 1,2,3 -> 7; timeout")
        caught |= g.dead
    assert caught == {1, 2, 3}


@pytest.mark.rule("S9")
def test_trap_elsewhere_does_not_save_the_victim() -> None:
    g = Scenario(TRAP_TABLE)
    g.run("trap 4 -> 8; evil 1,2,3 -> 7; timeout")
    assert g.dead == {7}


@pytest.mark.rule("S9")
def test_trapper_may_trap_his_own_house() -> None:
    g = Scenario(TRAP_TABLE)
    g.run("trap 4 -> 4; evil 1,2,3 -> 4; timeout")
    assert 4 in g.alive
    assert len(g.dead) == 1 and g.dead <= {1, 2, 3}


@pytest.mark.rule("S9", "S2")
def test_protection_does_not_save_an_attacker_from_the_trap() -> None:
    # decision: protection guards only against the evil attack.
    g = Scenario("evil trapper doctor filler filler filler filler filler")
    g.run("protect 3 -> 1; trap 2 -> 5; evil 1 -> 5; timeout")
    assert g.dead == {1}
    assert g.phase is Phase.OVER


@pytest.mark.rule("S9")
def test_trapper_sets_one_trap_per_night() -> None:
    g = Scenario(TRAP_TABLE)
    g.run("trap 4 -> 7")
    assert g.refused("trap 4 -> 8") == Rej.ALREADY_ACTED


# --- S14 vagabond --------------------------------------------------------------------------

VAGABOND_TABLE = "evil evil vagabond seer doctor filler filler filler"


@pytest.mark.rule("S14")
def test_night_one_opens_with_the_steal_step() -> None:
    g = Scenario(VAGABOND_TABLE)
    assert g.state.night is not None and g.state.night.step is NightStep.STEAL
    assert g.last(Ev.PHASE_STARTED).params["step"] == "steal"


@pytest.mark.rule("S14")
def test_nobody_else_can_act_during_the_steal_step() -> None:
    g = Scenario(VAGABOND_TABLE)
    assert g.refused("evil 1 -> 6") == Rej.WRONG_PHASE
    assert g.refused("check 4 -> 1") == Rej.WRONG_PHASE
    assert g.refused("protect 5 -> 6") == Rej.WRONG_PHASE
    for seat in (1, 2, 4, 5, 6):
        assert ability_targets(g.state, seat, ActionKind.EVIL_VOTE) == []


@pytest.mark.rule("S14")
def test_vagabond_steals_a_role_and_the_robbed_becomes_filler() -> None:
    g = Scenario(VAGABOND_TABLE)
    g.run("steal 3 -> 4")
    assert g.role(3) is RoleId.SEER
    assert g.role(4) is RoleId.FILLER
    assert g.last(Ev.ROLE_TAKEN).params == {"role": "seer", "source": 4}
    assert g.last(Ev.ROLE_TAKEN).audience.seats == {3}
    stolen = g.last(Ev.ROLE_STOLEN)
    assert stolen.audience.seats == {4} and stolen.params == {"role": "filler"}
    # The steal done, the main night begins and the new seer checks.
    assert g.state.night is not None and g.state.night.step is NightStep.MAIN
    g.run("check 3 -> 1")
    assert g.last(Ev.CHECK_RESULT).params == {"target": 1, "evil": True}
    assert g.refused("check 4 -> 1") == Rej.NO_SUCH_ABILITY


@pytest.mark.rule("S14")
def test_vagabond_hash_alone_becomes_filler_himself() -> None:
    g = Scenario(VAGABOND_TABLE)
    g.run("steal 3 -> #")
    assert g.role(3) is RoleId.FILLER
    assert g.role(4) is RoleId.SEER
    assert g.last(Ev.ROLE_TAKEN).params == {"role": "filler", "source": None}
    assert g.state.night is not None and g.state.night.step is NightStep.MAIN


@pytest.mark.rule("S14")
def test_vagabond_who_lets_the_steal_step_run_out_becomes_filler() -> None:
    g = Scenario(VAGABOND_TABLE)
    g.run("timeout")
    assert g.role(3) is RoleId.FILLER
    assert g.phase is Phase.NIGHT
    assert g.state.night is not None and g.state.night.step is NightStep.MAIN
    g.run("evil 1,2 -> 6; timeout")
    assert g.dead == {6}


@pytest.mark.rule("S14")
def test_vagabond_cannot_steal_from_himself_and_steals_only_once() -> None:
    g = Scenario(VAGABOND_TABLE)
    assert g.refused("steal 3 -> 3") == Rej.TARGET_SELF
    g.run("steal 3 -> 5")
    assert g.role(3) is RoleId.DOCTOR
    assert g.refused("steal 3 -> 4") == Rej.NO_SUCH_ABILITY


@pytest.mark.rule("S14", "N1")
def test_vagabond_stealing_an_evil_role_moves_into_the_night_room() -> None:
    g = Scenario(VAGABOND_TABLE)
    g.run("steal 3 -> 1")
    assert g.role(3) is RoleId.EVIL and g.role(1) is RoleId.FILLER
    revealed = g.last(Ev.TEAM_REVEALED)
    assert revealed.params["members"] == [2, 3]
    assert revealed.audience.seats == {2, 3}
    assert [r.source for r in routing(g.state)[3]] == [2]
    assert routing(g.state)[1] == ()
    assert g.refused("evil 1 -> 6") == Rej.NO_SUCH_ABILITY
    assert g.refused("evil 3 -> 2") == Rej.TARGET_TEAMMATE
    g.run("check 4 -> 3")
    assert g.last(Ev.CHECK_RESULT).params == {"target": 3, "evil": True}
    g.run("evil 3 -> 1; evil 2 -> 1")
    assert g.last(Ev.EVIL_VOTES_COMPLETE).params["victim"] == 1
    g.run("timeout")
    assert g.dead == {1}
    assert g.last(Ev.MORNING_REPORT).params["dead"] == [{"seat": 1, "role": "filler"}]


@pytest.mark.rule("S14", "N1")
def test_the_night_room_stays_closed_while_the_vagabond_steals() -> None:
    g = Scenario(VAGABOND_TABLE)
    assert g.events_for(1, Ev.TEAM_REVEALED) == []
    assert g.refused("say 1: who are you?") == Rej.NOBODY_HEARS
    assert routing(g.state)[1] == () and routing(g.state)[2] == ()
    assert g.view(1)["night_room"] is None
    assert [s["role"] for s in g.view(1)["seats"]][:2] == ["evil", None]
    g.run("steal 3 -> 4")
    assert [e.params["members"] for e in g.events_for(1, Ev.TEAM_REVEALED)] == [[1, 2]]
    assert [r.source for r in routing(g.state)[1]] == [2]
    assert [s["role"] for s in g.view(1)["seats"]][:2] == ["evil", "evil"]
    g.run("say 1: now we talk")
    assert g.last(Ev.CHAT).audience.seats == {1, 2}


@pytest.mark.rule("S14", "N1")
def test_a_robbed_evil_player_never_learns_the_team() -> None:
    g = Scenario(VAGABOND_TABLE)
    g.run("steal 3 -> 2")
    assert g.role(2) is RoleId.FILLER
    assert g.events_for(2, Ev.TEAM_REVEALED) == []
    assert g.view(2)["night_room"] is None
    assert [s["role"] for s in g.view(2)["seats"]][:3] == [None, "filler", None]
    assert [e.params["members"] for e in g.events_for(3, Ev.TEAM_REVEALED)] == [[1, 3]]


@pytest.mark.rule("S14", "S10")
def test_a_vagabond_who_steals_a_twin_learns_the_partner_and_the_robbed_does_not() -> None:
    g = Scenario("evil evil vagabond twin twin seer filler filler")
    assert g.events_for(4, Ev.PARTNER_REVEALED) == []
    assert g.view(4)["me"]["partners"] == []
    g.run("steal 3 -> 4")
    assert g.events_for(4, Ev.PARTNER_REVEALED) == []
    twins = g.last(Ev.PARTNER_REVEALED)
    assert twins.params == {"kind": "twin", "seats": [3, 5]}
    assert twins.audience.seats == {3, 5}
    assert g.view(3)["me"]["partners"] == [5]
    g.run("evil 1,2 -> 5; timeout")
    assert g.dead == {3, 5}


@pytest.mark.rule("S14", "S10", "C1")
def test_twins_call_each_other_without_calls_only_after_the_steal_step() -> None:
    g = Scenario(
        "evil evil vagabond twin twin seer filler filler", calls=CallSettings(enabled=False)
    )
    # With calls off, a call going through would tell a twin who the other one is.
    assert g.refused("call 4 -> 5") == Rej.CALLS_DISABLED
    g.run("steal 3 -> 6")
    g.run("call 4 -> 5; accept 5")
    assert g.last(Ev.CALL_CONNECTED).audience.seats == {4, 5}


@pytest.mark.rule("S14", "S11")
def test_lovers_know_each_other_from_the_deal_even_with_a_vagabond() -> None:
    g = Scenario(VAGABOND_TABLE, lovers=(4, 6), calls=CallSettings(enabled=False))
    assert [e.params["seats"] for e in g.events_for(4, Ev.PARTNER_REVEALED)] == [[4, 6]]
    assert g.view(4)["me"]["partners"] == [6]
    assert g.refused("call 4 -> 5") == Rej.CALLS_DISABLED
    g.run("call 4 -> 6; accept 6")
    assert g.last(Ev.CALL_CONNECTED).audience.seats == {4, 6}


@pytest.mark.rule("S14")
def test_the_steal_step_comes_only_in_night_one() -> None:
    g = Scenario(VAGABOND_TABLE, stalemate_rounds=9)
    g.run("steal 3 -> 6")
    next_night(g)
    assert g.state.night is not None and g.state.night.step is NightStep.MAIN
    assert g.last(Ev.PHASE_STARTED).params["step"] == "main"


# --- S17 creeper ---------------------------------------------------------------------------

CREEPER_TABLE = "evil evil evil creeper seer filler filler filler filler filler"


@pytest.mark.rule("S17")
def test_creeper_taken_at_night_drags_one_of_his_attackers() -> None:
    dragged = set()
    for seed in range(30):
        g = Scenario(CREEPER_TABLE, seed=seed)
        g.run("evil 1,2 -> 4; evil 3 -> 7; timeout")
        assert 4 in g.dead and 7 in g.alive
        others = g.dead - {4}
        assert len(others) == 1 and others <= {1, 2}
        dragged |= others
    assert dragged == {1, 2}


@pytest.mark.rule("S17", "D1")
def test_creepers_drag_is_announced_in_the_morning() -> None:
    g = Scenario("evil evil creeper filler filler filler filler filler")
    g.run("evil 1 -> 3; timeout")
    assert g.dead == {1, 3}
    report = g.last(Ev.MORNING_REPORT).params["dead"]
    assert report == [{"seat": 3, "role": "creeper"}, {"seat": 1, "role": "evil"}]
