"""Morning, day and evening (D1-D6) and the day roles: hunter, vote-giver, princess,
Sofort-Mord and the interjection (S5, S15, S16, S18, S19)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.scenario import Scenario
from vollmond.engine.core import Audience, AudienceKind, Viewer
from vollmond.engine.standard import ActionKind, FloorTimeout
from vollmond.engine.standard.codes import Ev, Rej
from vollmond.engine.standard.types import Phase

# Seats: 1, 2 evil; 3 seer; 4 doctor; 5, 6 filler.
TABLE = "evil evil seer doctor filler filler"
INSTANT_TABLE_7 = "evil evil seer doctor filler filler filler"


def at(g: Scenario, phase: Phase) -> bool:
    """The scenario's phase now (a call, so the type checker does not pin it down)."""
    return g.phase is phase


def floor(g: Scenario) -> int | None:
    """Who holds the floor now (S19)."""
    assert g.state.day is not None
    return g.state.day.floor


def day_one(roles: str = TABLE, **options: Any) -> Scenario:
    """A table after a quiet first night, at the start of the day phase."""
    g = Scenario(roles, **options)
    g.run("timeout; timeout")
    assert at(g, Phase.DAY)
    return g


# --- D1: the morning report ----------------------------------------------------------------


@pytest.mark.rule("D1")
def test_morning_report_names_every_dead_with_role() -> None:
    g = Scenario("evil evil seer doctor witch filler filler")
    g.run("evil 1,2 -> 3; poison 5 -> 6; timeout")
    assert at(g, Phase.MORNING)
    report = g.last(Ev.MORNING_REPORT)
    assert report.audience.kind is AudienceKind.PUBLIC
    assert report.params["dead"] == [{"seat": 3, "role": "seer"}, {"seat": 6, "role": "filler"}]
    assert g.state.player(3).revealed and g.state.player(6).revealed
    # Every player hears it, the living and the dead.
    assert g.events_for(4, Ev.MORNING_REPORT) and g.events_for(3, Ev.MORNING_REPORT)
    assert g.view(5)["seats"][2]["role"] == "seer"


@pytest.mark.rule("D1")
def test_quiet_night_reports_nobody() -> None:
    g = Scenario(TABLE)
    g.run("timeout")
    assert g.last(Ev.MORNING_REPORT).params["dead"] == []
    assert g.dead == set()


# --- D2: nominations ---------------------------------------------------------------------


@pytest.mark.rule("D2")
def test_nominate_is_public_and_once_per_player() -> None:
    g = day_one()
    g.run("nominate 3 -> 1")
    nominated = g.last(Ev.NOMINATED)
    assert nominated.audience.kind is AudienceKind.PUBLIC
    assert nominated.params == {"by": 3, "nominee": 1}
    assert g.refused("nominate 3 -> 2") == Rej.ALREADY_ACTED
    g.run("nominate 4 -> 2")
    assert g.state.day is not None and g.state.day.nominees == (1, 2)


@pytest.mark.rule("D2")
def test_nominate_not_self_not_dead_not_twice_the_same_not_unknown() -> None:
    g = Scenario(TABLE)
    g.run("evil 1,2 -> 5; timeout; timeout")
    assert g.refused("nominate 3 -> 3") == Rej.TARGET_SELF
    assert g.refused("nominate 3 -> 5") == Rej.TARGET_DEAD
    assert g.refused("nominate 3 -> 9") == Rej.TARGET_UNKNOWN
    g.run("nominate 3 -> 1")
    # Someone already nominated cannot be nominated again; the nominator may choose again.
    assert g.refused("nominate 4 -> 1") == Rej.ALREADY_NOMINATED
    g.run("nominate 4 -> 2")


@pytest.mark.rule("D2")
def test_nominate_only_in_the_day_phase() -> None:
    g = Scenario(TABLE)
    assert g.refused("nominate 3 -> 1") == Rej.WRONG_PHASE  # night
    g.run("timeout")
    assert at(g, Phase.MORNING)
    assert g.refused("nominate 3 -> 1") == Rej.WRONG_PHASE
    g.run("timeout; nominate 3 -> 1; timeout")
    assert at(g, Phase.VOTE)
    assert g.refused("nominate 4 -> 2") == Rej.WRONG_PHASE


@pytest.mark.rule("D2", "D6", "S5")
def test_a_nominee_who_dies_by_day_is_off_the_ballot_and_the_nominator_used_his_turn() -> None:
    g = Scenario("evil evil evil hunter seer filler filler filler filler filler")
    g.run("timeout; timeout; nominate 5 -> 1; nominate 6 -> 7; shoot 4 -> 1")
    assert g.dead == {1}
    assert g.refused("nominate 5 -> 2") == Rej.ALREADY_ACTED
    g.run("timeout")
    assert g.last(Ev.VOTING_STARTED).params["nominees"] == [7]
    assert g.refused("vote 2 -> 1") == Rej.NOT_NOMINATED
    g.run("vote 2,3 -> 0; vote 4 -> 7; timeout")
    result = g.last(Ev.VOTE_RESULT)
    assert result.params["banished"] == 7 and result.params["tally"] == {"7": 1}
    assert g.state.last_banished == 7


@pytest.mark.rule("D2", "D4", "S18")
def test_when_every_nominee_died_by_day_there_is_no_vote() -> None:
    g = Scenario(INSTANT_TABLE_7, instant_kill=True)
    g.run("timeout; timeout; nominate 1 -> 4; instant 2 -> 4; timeout")
    assert g.last(Ev.NO_NOMINATIONS).params == {"round": 1}
    assert at(g, Phase.NIGHT) and g.state.last_banished is None


# --- D3: the evening vote ----------------------------------------------------------------


@pytest.mark.rule("D3")
def test_one_vote_that_cannot_be_changed() -> None:
    g = day_one()
    g.run("nominate 3 -> 1; nominate 4 -> 2")
    assert g.refused("vote 5 -> 1") == Rej.WRONG_PHASE  # not before the evening
    g.run("timeout")
    assert g.last(Ev.VOTING_STARTED).params["nominees"] == [1, 2]
    g.run("vote 5 -> 1")
    cast = g.last(Ev.VOTE_CAST)
    # Who voted is public at once; for whom is not (yet).
    assert cast.audience.kind is AudienceKind.PUBLIC and cast.params == {"voter": 5}
    assert g.refused("vote 5 -> 2") == Rej.ALREADY_VOTED
    assert g.refused("vote 5 -> 0") == Rej.ALREADY_VOTED
    g.run("vote 6 -> 0")
    assert g.refused("vote 6 -> 1") == Rej.ALREADY_VOTED


@pytest.mark.rule("D3")
def test_vote_only_for_a_nominee_or_abstain() -> None:
    g = day_one()
    g.run("nominate 3 -> 1; timeout")
    assert g.refused("vote 5 -> 2") == Rej.NOT_NOMINATED
    assert g.refused("vote 5 -> 6") == Rej.NOT_NOMINATED
    g.run("vote 5 -> 0; vote 1 -> 1")  # a nominee may vote too, even for themself
    assert g.state.day is not None and g.state.day.votes == {5: None, 1: 1}


# --- D4: plurality among the nominees -----------------------------------------------------


@pytest.mark.rule("D4", "D5")
def test_plurality_among_nominees_wins_and_abstentions_do_not_count() -> None:
    g = day_one("evil evil seer doctor filler filler filler")
    g.run("nominate 3 -> 1; nominate 4 -> 2; nominate 5 -> 6; timeout")
    # 1 gets two votes, 2 and 6 one each, three abstain: no absolute majority, yet 1 leaves.
    g.run("vote 3,4 -> 1; vote 5 -> 2; vote 1 -> 6; vote 2,6,7 -> 0")
    result = g.last(Ev.VOTE_RESULT)
    assert result.params["banished"] == 1
    assert result.params["tally"] == {"1": 2, "2": 1, "6": 1}
    assert result.params["votes"] == {
        "1": 6, "2": None, "3": 1, "4": 1, "5": 2, "6": None, "7": None
    }  # fmt: skip
    assert g.dead == {1}


@pytest.mark.rule("D4")
def test_tie_banishes_nobody() -> None:
    g = day_one()
    g.run("nominate 3 -> 1; nominate 4 -> 2; timeout")
    g.run("vote 3,4 -> 1; vote 5,6 -> 2; vote 1,2 -> 0")
    result = g.last(Ev.VOTE_RESULT)
    assert result.params["banished"] is None and result.params["role"] is None
    assert g.dead == set()
    assert at(g, Phase.NIGHT) and g.state.round == 2


@pytest.mark.rule("D4")
def test_no_votes_banishes_nobody() -> None:
    g = day_one()
    g.run("nominate 3 -> 1; timeout")
    g.run("vote 1,2,3,4,5,6 -> 0")
    assert g.last(Ev.VOTE_RESULT).params["banished"] is None
    assert g.dead == set()


@pytest.mark.rule("D4")
def test_vote_timeout_counts_missing_votes_as_abstentions() -> None:
    g = day_one()
    g.run("nominate 3 -> 1; nominate 4 -> 2; timeout; vote 3 -> 1; timeout")
    result = g.last(Ev.VOTE_RESULT)
    assert result.params["banished"] == 1 and result.params["votes"] == {"3": 1}
    assert at(g, Phase.NIGHT)


@pytest.mark.rule("D4")
def test_no_nominations_goes_straight_to_night() -> None:
    g = day_one()
    g.run("timeout")
    assert g.last(Ev.NO_NOMINATIONS).params == {"round": 1}
    assert at(g, Phase.NIGHT) and g.state.round == 2
    assert not any(e.code == Ev.VOTING_STARTED for e in g.events)


# --- D5: the banished is revealed, then night ---------------------------------------------


@pytest.mark.rule("D5")
def test_banished_is_revealed_with_role_then_next_night() -> None:
    g = day_one()
    g.run("nominate 1 -> 5; timeout; vote 1,2,3 -> 5; vote 4,5 -> 0")
    assert at(g, Phase.VOTE)  # 6 has not voted yet
    g.run("vote 6 -> 0")  # the last vote ends the evening at once
    result = g.last(Ev.VOTE_RESULT)
    assert result.audience.kind is AudienceKind.PUBLIC
    assert result.params["banished"] == 5 and result.params["role"] == "filler"
    assert result.params["dead"] == [{"seat": 5, "role": "filler"}]
    assert g.state.player(5).revealed and not g.state.player(5).alive
    assert at(g, Phase.NIGHT) and g.state.round == 2
    phase = g.last(Ev.PHASE_STARTED).params
    assert phase["phase"] == "night" and phase["round"] == 2


# --- D6: the dead are silent and inactive ---------------------------------------------------


@pytest.mark.rule("D6")
def test_the_dead_cannot_nominate_vote_act_or_chat_on_the_market() -> None:
    g = Scenario("evil evil hunter doctor filler filler filler")
    g.run("evil 1,2 -> 3; timeout")
    assert g.dead == {3}
    assert g.refused("shoot 3 -> 1") == Rej.ACTOR_DEAD
    assert g.refused("say 3: it was 1") == Rej.NOBODY_HEARS  # morning: the only one dead
    g.run("timeout")
    assert g.refused("say 3: it was 1") == Rej.NOBODY_HEARS
    assert g.refused("interject 3") == Rej.ACTOR_DEAD
    assert g.refused("nominate 3 -> 1") == Rej.ACTOR_DEAD
    assert g.refused("nominate 4 -> 3") == Rej.TARGET_DEAD
    g.run("say 4: I am alive; nominate 4 -> 1; timeout")
    assert g.refused("vote 3 -> 1") == Rej.ACTOR_DEAD
    # The dead are not waited for: the vote ends when the living have voted.
    g.run("vote 1,2,4,5,6 -> 0")
    assert at(g, Phase.VOTE)
    g.run("vote 7 -> 0")
    assert at(g, Phase.NIGHT)


@pytest.mark.rule("D6")
def test_the_dead_talk_among_themselves_and_never_reach_the_living() -> None:
    g = Scenario("evil evil hunter doctor filler filler filler")
    g.run("evil 1,2 -> 3; timeout; timeout")  # 3 dies in the night
    g.run("nominate 4 -> 5; timeout; vote 1,2,4,5,6,7 -> 5")  # 5 is banished: night 2
    assert g.dead == {3, 5}
    g.run("say 3: it was 1 and 2")
    line = g.last(Ev.CHAT)
    assert line.params["room"] == "out"
    assert line.audience == Audience.group({3, 5})
    for living in g.alive:
        assert [e for e in g.events_for(living, Ev.CHAT) if e.params["room"] == "out"] == []
    assert not line.audience.includes(Viewer.spectator())
    g.run("timeout; say 5: by day too")  # a quiet night; the morning: still among the dead
    assert g.last(Ev.CHAT).params["room"] == "out"
    assert g.last(Ev.CHAT).audience == Audience.group({3, 5})


# --- S5: the hunter -------------------------------------------------------------------------


@pytest.mark.rule("S5", "D1")
def test_hunter_shoots_in_the_morning_target_dies_revealed_shooter_unnamed() -> None:
    g = Scenario("evil evil hunter doctor filler filler filler")
    g.run("timeout")
    assert at(g, Phase.MORNING)
    g.run("shoot 3 -> 1")
    shot = g.last(Ev.SHOT_FIRED)
    assert shot.audience.kind is AudienceKind.PUBLIC
    assert shot.params == {"target": 1, "dead": [{"seat": 1, "role": "evil"}]}
    assert 3 not in shot.params.values()
    assert g.dead == {1} and g.state.player(1).revealed
    # Only the shot is public; nothing else of this command names the hunter to others.
    assert all(e.audience.kind is AudienceKind.PUBLIC for e in g.last_events)
    assert g.view(5)["seats"][2]["role"] is None


@pytest.mark.rule("S5")
def test_hunter_one_bullet_below_twelve_players() -> None:
    g = Scenario("evil evil hunter doctor filler filler filler filler")
    assert g.state.player(3).role_state.charges_of(ActionKind.SHOOT) == 1
    g.run("timeout; timeout; shoot 3 -> 5")
    assert g.dead == {5}
    assert g.refused("shoot 3 -> 6") == Rej.ALREADY_USED
    g.run("timeout")  # no nominations: night 2
    g.run("timeout")
    assert at(g, Phase.MORNING)
    assert g.refused("shoot 3 -> 6") == Rej.NO_CHARGES


@pytest.mark.rule("S5")
def test_hunter_two_bullets_from_twelve_players_once_per_day() -> None:
    g = Scenario("evil evil evil hunter doctor seer " + "filler " * 6)
    assert len(g.state.players) == 12
    assert g.state.player(4).role_state.charges_of(ActionKind.SHOOT) == 2
    g.run("timeout")
    g.run("shoot 4 -> 7")
    assert g.refused("shoot 4 -> 8") == Rej.ALREADY_USED  # morning and day are one day
    g.run("timeout")
    assert at(g, Phase.DAY)
    assert g.refused("shoot 4 -> 8") == Rej.ALREADY_USED
    g.run("timeout; timeout")  # no nominations → night 2 → morning 2
    assert at(g, Phase.MORNING) and g.state.round == 2
    g.run("timeout")
    g.run("shoot 4 -> 8")  # by day this time
    assert g.dead == {7, 8}
    g.run("timeout; timeout; timeout")
    assert g.refused("shoot 4 -> 9") == Rej.NO_CHARGES


@pytest.mark.rule("S5")
def test_hunter_cannot_shoot_at_night_or_during_the_vote() -> None:
    g = Scenario("evil evil hunter doctor filler filler filler")
    assert g.refused("shoot 3 -> 1") == Rej.WRONG_PHASE
    g.run("timeout; timeout; nominate 5 -> 6; timeout")
    assert at(g, Phase.VOTE)
    assert g.refused("shoot 3 -> 1") == Rej.WRONG_PHASE
    assert g.refused("shoot 3 -> 3") == Rej.WRONG_PHASE


@pytest.mark.rule("S5")
def test_hunter_not_himself_not_the_dead() -> None:
    g = Scenario("evil evil hunter doctor filler filler filler")
    g.run("evil 1,2 -> 5; timeout")
    assert g.refused("shoot 3 -> 3") == Rej.TARGET_SELF
    assert g.refused("shoot 3 -> 5") == Rej.TARGET_DEAD
    assert g.refused("shoot 4 -> 1") == Rej.NO_SUCH_ABILITY


@pytest.mark.rule("S5", "V1")
def test_hunter_shot_can_end_the_game() -> None:
    g = Scenario("evil hunter filler filler filler")
    g.run("timeout; shoot 2 -> 1")
    assert at(g, Phase.OVER)
    assert g.last(Ev.GAME_OVER).params["sides"] == ["village"]


# --- S15: the vote-giver --------------------------------------------------------------------

GIVER_TABLE = "evil evil vote_giver filler filler filler"


@pytest.mark.rule("S15")
def test_transferred_vote_counts_double_and_giver_cannot_vote() -> None:
    g = day_one(GIVER_TABLE)
    g.run("transfer 3 -> 4")
    g.run("nominate 4 -> 1; nominate 5 -> 2; timeout")
    assert g.refused("vote 3 -> 1") == Rej.VOTE_GIVEN_AWAY
    g.run("vote 4 -> 1; vote 5 -> 2; vote 1,2,6 -> 0")
    result = g.last(Ev.VOTE_RESULT)
    assert result.params["tally"] == {"1": 2, "2": 1}
    assert result.params["banished"] == 1
    assert g.dead == {1}


@pytest.mark.rule("S15")
def test_transfer_is_known_only_to_giver_and_receiver() -> None:
    g = day_one(GIVER_TABLE)
    g.run("transfer 3 -> 4")
    moved = g.last(Ev.VOTE_TRANSFERRED)
    assert moved.audience.kind is AudienceKind.SEATS and moved.audience.seats == {3, 4}
    assert moved.params == {"giver": 3, "to": 4}
    for outsider in (1, 2, 5, 6):
        assert g.events_for(outsider, Ev.VOTE_TRANSFERRED) == []
        assert g.view(outsider)["day"]["my_transfers"] == {}
    assert g.view(3)["day"]["my_transfers"] == {"3": 4}
    assert g.view(4)["day"]["my_transfers"] == {"3": 4}
    g.run("nominate 4 -> 1; timeout")
    # During the vote, the others cannot tell the giver from someone still to vote.
    assert 3 in g.view(5)["day"]["waiting_for"]
    assert 3 not in g.view(3)["day"]["waiting_for"]


@pytest.mark.rule("S15")
def test_transfer_once_per_day_not_to_self_not_after_voting() -> None:
    g = day_one(GIVER_TABLE)
    assert g.refused("transfer 3 -> 3") == Rej.TARGET_SELF
    assert g.refused("transfer 4 -> 5") == Rej.NO_SUCH_ABILITY
    g.run("transfer 3 -> 4")
    assert g.refused("transfer 3 -> 5") == Rej.ALREADY_USED
    g.run("nominate 4 -> 1; timeout; vote 1,2,4,5,6 -> 0")
    # Day 2: the giver votes himself first; then he can no longer transfer.
    g.run("timeout; timeout; nominate 4 -> 1; timeout; vote 3 -> 1")
    assert g.refused("transfer 3 -> 4") == Rej.ALREADY_VOTED


@pytest.mark.rule("S15")
def test_transfer_during_the_vote_ends_it_when_everyone_else_voted() -> None:
    g = day_one(GIVER_TABLE)
    g.run("nominate 4 -> 1; timeout; vote 1,2,4,5,6 -> 0")
    assert at(g, Phase.VOTE)  # waiting for the giver
    g.run("transfer 3 -> 4")
    assert at(g, Phase.NIGHT)
    assert g.last(Ev.VOTE_RESULT).params["banished"] is None


@pytest.mark.rule("S15", "S5")
def test_transfer_lapses_when_the_giver_dies_before_the_count() -> None:
    g = day_one("evil evil vote_giver hunter filler filler filler")
    g.run("transfer 3 -> 5; shoot 4 -> 3")
    assert g.dead == {3}
    g.run("nominate 5 -> 1; nominate 6 -> 2; timeout")
    g.run("vote 5 -> 1; vote 6 -> 2; vote 1,2,4,7 -> 0")
    result = g.last(Ev.VOTE_RESULT)
    assert result.params["tally"] == {"1": 1, "2": 1}
    assert result.params["banished"] is None


# --- S16: the princess ----------------------------------------------------------------------


@pytest.mark.rule("S16", "D5")
def test_princess_survives_first_banishment_revealed_second_kills() -> None:
    g = day_one("evil evil princess filler filler filler filler")
    g.run("nominate 1 -> 3; timeout; vote 1,2,4,5 -> 3; vote 3,6,7 -> 0")
    result = g.last(Ev.VOTE_RESULT)
    assert result.params["banished"] == 3 and result.params["role"] == "princess"
    assert result.params["spared"] is True and result.params["dead"] == []
    assert g.state.player(3).alive and g.state.player(3).revealed
    assert g.view(5)["seats"][2]["role"] == "princess"
    assert at(g, Phase.NIGHT)
    g.run("timeout; timeout; nominate 2 -> 3; timeout; vote 1,2,4,5 -> 3; vote 3,6,7 -> 0")
    result = g.last(Ev.VOTE_RESULT)
    assert result.params["spared"] is False
    assert result.params["dead"] == [{"seat": 3, "role": "princess"}]
    assert g.dead == {3}


@pytest.mark.rule("S16")
def test_princess_dies_at_night_like_anyone() -> None:
    g = Scenario("evil evil princess filler filler filler filler")
    g.run("evil 1,2 -> 3; timeout")
    assert g.dead == {3}


# --- S18: Sofort-Mord -----------------------------------------------------------------------

INSTANT_TABLE = "evil evil defector seer filler filler filler filler"


@pytest.mark.rule("S18", "W7")
def test_instant_kill_only_with_the_option() -> None:
    g = Scenario(INSTANT_TABLE)
    g.run("timeout")
    assert g.refused("instant 1 -> 5") == Rej.OPTION_OFF
    assert g.dead == set()


@pytest.mark.rule("S18")
def test_instant_kill_in_the_morning_once_per_game_killer_unnamed() -> None:
    g = Scenario(INSTANT_TABLE, instant_kill=True)
    assert g.refused("instant 1 -> 5") == Rej.WRONG_PHASE  # not at night
    g.run("timeout")
    g.run("instant 1 -> 4")
    kill = g.last(Ev.INSTANT_KILL)
    assert kill.audience.kind is AudienceKind.PUBLIC
    assert kill.params == {"target": 4, "dead": [{"seat": 4, "role": "seer"}]}
    assert g.dead == {4} and g.state.instant_kill_used
    assert all(e.audience.kind is AudienceKind.PUBLIC for e in g.last_events)
    # Once per game for the whole team: not by the other evil player, not on a later day.
    assert g.refused("instant 2 -> 5") == Rej.ALREADY_USED
    g.run("timeout; timeout; timeout; timeout")
    assert at(g, Phase.DAY) and g.state.round == 2
    assert g.refused("instant 2 -> 5") == Rej.ALREADY_USED


@pytest.mark.rule("S18")
def test_instant_kill_by_day_not_during_the_vote() -> None:
    g = Scenario(INSTANT_TABLE, instant_kill=True)
    g.run("timeout; timeout; nominate 5 -> 6; timeout")
    assert at(g, Phase.VOTE)
    assert g.refused("instant 1 -> 5") == Rej.WRONG_PHASE
    g.run("vote 1,2,3,4,5,6,7,8 -> 0; timeout; timeout")
    assert at(g, Phase.DAY)
    g.run("instant 2 -> 7")
    assert g.dead == {7}


@pytest.mark.rule("S18")
def test_instant_kill_only_by_evil_and_not_on_a_teammate() -> None:
    g = Scenario(INSTANT_TABLE, instant_kill=True)
    g.run("timeout")
    assert g.refused("instant 1 -> 2") == Rej.TARGET_TEAMMATE
    assert g.refused("instant 1 -> 1") == Rej.TARGET_SELF
    assert g.refused("instant 5 -> 1") == Rej.NO_SUCH_ABILITY
    assert g.refused("instant 3 -> 5") == Rej.NO_SUCH_ABILITY  # the defector is not in the room
    g.run("instant 1 -> 3")  # the defector is not a teammate the room knows
    assert g.dead == {3}


# --- S19: the interjection ------------------------------------------------------------------


@pytest.mark.rule("S19")
def test_interjection_gives_the_floor_once_per_day() -> None:
    g = day_one()
    g.run("interject 5")
    event = g.last(Ev.INTERJECTION)
    assert event.audience.kind is AudienceKind.PUBLIC and event.params["seat"] == 5
    assert event.params["seconds"] == g.options.durations.floor_s
    assert floor(g) == 5
    assert g.view(1)["day"]["floor"] == 5
    assert g.refused("interject 6") == Rej.FLOOR_TAKEN
    g.run("floor-timeout")
    assert g.last(Ev.FLOOR_RELEASED).params == {"seat": 5}
    assert floor(g) is None
    assert g.refused("interject 5") == Rej.ALREADY_USED
    g.run("interject 6")
    assert floor(g) == 6


@pytest.mark.rule("S19")
def test_interjection_in_morning_and_vote_not_at_night_and_again_next_day() -> None:
    g = Scenario(TABLE)
    assert g.refused("interject 5") == Rej.WRONG_PHASE
    g.run("timeout; interject 5")
    assert floor(g) == 5
    g.run("timeout")  # a new phase releases the floor
    assert floor(g) is None
    assert g.refused("interject 5") == Rej.ALREADY_USED
    g.run("nominate 3 -> 1; timeout; interject 6")
    assert at(g, Phase.VOTE) and floor(g) == 6
    g.run("vote 1,2,3,4,5,6 -> 0; timeout")
    assert at(g, Phase.MORNING) and g.state.round == 2
    g.run("interject 5")
    assert floor(g) == 5


@pytest.mark.rule("S19")
def test_stale_floor_timer_is_refused_after_the_phase_changed() -> None:
    g = day_one()
    g.run("interject 5")
    seq = g.state.phase_seq
    g.run("nominate 3 -> 1; timeout")
    refused = g.send(FloorTimeout(5, seq))
    assert refused is not None and refused.code == Rej.STALE_TIMER
