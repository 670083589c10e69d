"""The night of the evil team (N1-N7): the night room, the votes, the victim, the witch's
knowledge. Seats are numbered from 1 in the order of the role string."""

from __future__ import annotations

import pytest

from tests.scenario import Scenario, banish, next_night
from vollmond.engine.core import AudienceKind, Viewer
from vollmond.engine.standard import Phase
from vollmond.engine.standard.codes import Ev, Rej
from vollmond.engine.standard.routing import SPECTATORS, routing
from vollmond.engine.standard.view import view

TABLE = "evil evil seer doctor filler filler"
WITCH_TABLE = "evil evil witch seer filler filler filler"
THREE_EVIL = "evil evil evil seer doctor filler filler filler filler filler"


# --- N1: the night room ---------------------------------------------------------------------


@pytest.mark.rule("N1", "S12")
def test_the_night_room_is_revealed_to_the_evil_team_only() -> None:
    g = Scenario("evil evil defector seer filler filler filler filler")
    revealed = g.last(Ev.TEAM_REVEALED)
    assert revealed.params["members"] == [1, 2]
    assert revealed.audience.kind is AudienceKind.SEATS
    assert revealed.audience.seats == {1, 2}
    for outsider in (3, 4, 5):
        assert g.events_for(outsider, Ev.TEAM_REVEALED) == []
    assert not revealed.audience.includes(Viewer.spectator())
    assert not revealed.audience.includes(Viewer.operator())


@pytest.mark.rule("N1")
def test_evil_votes_reach_only_the_night_room() -> None:
    g = Scenario(TABLE)
    before = len(g.events)
    g.run("evil 1 -> 5; evil 2 -> 5")
    night_events = g.events[before:]
    codes = {e.code for e in night_events}
    assert Ev.EVIL_VOTE_CAST in codes and Ev.EVIL_VOTES_COMPLETE in codes
    for event in night_events:
        assert event.audience.kind is AudienceKind.SEATS
        assert event.audience.seats <= {1, 2}
    # Each member sees both votes with the running tally; nobody else sees any.
    assert [e.params["voter"] for e in g.events_for(2, Ev.EVIL_VOTE_CAST)] == [1, 2]
    assert g.last(Ev.EVIL_VOTE_CAST).params["tally"] == {"5": 2}
    for outsider in (3, 4, 5, 6):
        assert g.events_for(outsider, Ev.EVIL_VOTE_CAST) == []
        assert g.events_for(outsider, Ev.EVIL_VOTES_COMPLETE) == []


@pytest.mark.rule("N1")
def test_night_room_chat_reaches_the_team_and_others_have_no_room_at_night() -> None:
    g = Scenario(TABLE)
    g.run("say 1: take the baker")
    chat = g.last(Ev.CHAT)
    assert chat.params["room"] == "night_room"
    assert chat.audience.seats == {1, 2}
    assert [e.params["text"] for e in g.events_for(2, Ev.CHAT)] == ["take the baker"]
    assert g.events_for(3, Ev.CHAT) == []
    assert g.refused("say 3: hello?") == Rej.NOBODY_HEARS


@pytest.mark.rule("N1", "X6")
def test_at_night_only_the_evil_team_hears_each_other() -> None:
    g = Scenario(TABLE)
    table = routing(g.state)
    assert [r.source for r in table[1]] == [2]
    assert [r.source for r in table[2]] == [1]
    for outsider in (3, 4, 5, 6):
        assert table[outsider] == ()
    assert table[SPECTATORS] == ()


@pytest.mark.rule("N1")
def test_only_the_team_sees_the_night_room_in_its_view() -> None:
    g = Scenario(TABLE)
    g.run("evil 1 -> 4")
    room = g.view(2)["night_room"]
    assert room == {"members": [1, 2], "votes": {"1": 4}, "victim_locked": False, "victim": None}
    assert g.view(3)["night_room"] is None
    assert view(g.state, Viewer.spectator())["night_room"] is None
    assert view(g.state, Viewer.operator())["night_room"] is None


@pytest.mark.rule("N1")
def test_there_is_no_fixed_voting_round_votes_come_in_any_order_while_the_night_lasts() -> None:
    g = Scenario(TABLE)
    g.run("say 2: I vote first; evil 2 -> 6; say 1: fine; say 2: go on; evil 1 -> 6")
    # All votes are in, yet the night goes on until its time is up.
    assert g.phase is Phase.NIGHT
    g.run("say 1: still talking")
    g.run("timeout")
    assert g.dead == {6}


@pytest.mark.rule("N1", "D6")
def test_a_dead_evil_player_leaves_the_night_room() -> None:
    g = Scenario(THREE_EVIL, stalemate_rounds=9)
    banish(g, 1)
    assert 1 in g.dead
    assert routing(g.state)[1] == ()
    assert [r.source for r in routing(g.state)[2]] == [3]
    g.run("evil 2 -> 6; evil 3 -> 6")
    complete = g.last(Ev.EVIL_VOTES_COMPLETE)
    assert complete.audience.seats == {2, 3}
    assert complete.params["victim"] == 6
    assert g.refused("evil 1 -> 7") == Rej.ACTOR_DEAD


# --- N2: one vote each, unchangeable ---------------------------------------------------------


@pytest.mark.rule("N2")
def test_each_evil_player_votes_once_and_cannot_change_the_vote() -> None:
    g = Scenario(TABLE)
    g.run("evil 1 -> 5")
    assert g.refused("evil 1 -> 6") == Rej.ALREADY_ACTED
    assert g.refused("evil 1 -> 5") == Rej.ALREADY_ACTED
    assert g.state.night is not None
    assert g.state.night.evil_votes == {1: 5}
    g.run("evil 2 -> 6; timeout")
    # The tie 5:6 was drawn by lot; 1 could not move it by changing the vote.
    assert len(g.dead) == 1 and g.dead <= {5, 6}


@pytest.mark.rule("N2")
def test_the_voter_gets_a_private_confirmation() -> None:
    g = Scenario(TABLE)
    g.run("evil 1 -> 5")
    confirmed = g.last(Ev.ACTION_CONFIRMED)
    assert confirmed.audience.seats == {1}
    assert confirmed.params == {"kind": "evil_vote", "target": 5}


@pytest.mark.rule("N2", "S12")
def test_players_outside_the_evil_team_have_no_night_vote() -> None:
    g = Scenario("evil evil defector seer filler filler filler filler")
    assert g.refused("evil 3 -> 5") == Rej.NO_SUCH_ABILITY
    assert g.refused("evil 4 -> 5") == Rej.NO_SUCH_ABILITY


@pytest.mark.rule("N2", "D6")
def test_evil_cannot_vote_for_a_dead_player() -> None:
    g = Scenario(TABLE)
    g.run("evil 1,2 -> 5")
    next_night(g)
    assert g.refused("evil 1 -> 5") == Rej.TARGET_DEAD
    assert g.refused("evil 1 -> 9") == Rej.TARGET_UNKNOWN


# --- N3: most votes dies, a tie by lot -------------------------------------------------------


@pytest.mark.rule("N3", "D1")
def test_the_most_votes_dies() -> None:
    g = Scenario(THREE_EVIL)
    g.run("evil 1 -> 7; evil 2 -> 6; evil 3 -> 6")
    assert g.last(Ev.EVIL_VOTES_COMPLETE).params["victim"] == 6
    g.run("timeout")
    assert g.dead == {6}
    assert g.last(Ev.MORNING_REPORT).params["dead"] == [{"seat": 6, "role": "filler"}]


@pytest.mark.rule("N3")
def test_the_most_votes_dies_even_when_not_everyone_voted() -> None:
    g = Scenario(THREE_EVIL)
    g.run("evil 2 -> 8; evil 3 -> 8; timeout")
    assert g.dead == {8}


def _tie_victim(seed: int) -> int:
    g = Scenario(TABLE, seed=seed)
    g.run("evil 1 -> 5; evil 2 -> 6")
    victim = g.last(Ev.EVIL_VOTES_COMPLETE).params["victim"]
    g.run("timeout")
    assert g.dead == {victim}
    assert isinstance(victim, int)
    return victim


@pytest.mark.rule("N3")
def test_a_tie_is_decided_by_lot_and_both_outcomes_occur() -> None:
    outcomes = {_tie_victim(seed) for seed in range(40)}
    assert outcomes == {5, 6}


@pytest.mark.rule("N3")
def test_the_lot_is_reproducible_for_the_same_seed() -> None:
    for seed in range(10):
        assert _tie_victim(seed) == _tie_victim(seed)


@pytest.mark.rule("N3")
def test_a_tie_among_partial_votes_is_drawn_at_night_end() -> None:
    g = Scenario(THREE_EVIL, seed=3)
    g.run("evil 1 -> 7; evil 2 -> 8")
    assert g.state.night is not None and not g.state.night.victim_locked
    g.run("timeout")
    assert len(g.dead) == 1 and g.dead <= {7, 8}


# --- N4: own people cannot be chosen --------------------------------------------------------


@pytest.mark.rule("N4")
def test_evil_players_cannot_choose_a_teammate_or_themselves() -> None:
    g = Scenario(TABLE)
    assert g.refused("evil 1 -> 2") == Rej.TARGET_TEAMMATE
    assert g.refused("evil 2 -> 1") == Rej.TARGET_TEAMMATE
    assert g.refused("evil 1 -> 1") == Rej.TARGET_TEAMMATE
    assert g.state.night is not None and g.state.night.evil_votes == {}


@pytest.mark.rule("N4", "S12")
def test_the_defector_is_unknown_to_the_team_and_can_be_chosen() -> None:
    g = Scenario("evil evil defector seer filler filler filler filler")
    g.run("evil 1,2 -> 3; timeout")
    assert g.dead == {3}
    assert g.last(Ev.MORNING_REPORT).params["dead"] == [{"seat": 3, "role": "defector"}]


# --- N5: nobody votes, nobody dies ----------------------------------------------------------


@pytest.mark.rule("N5", "D1")
def test_if_nobody_votes_nobody_dies() -> None:
    g = Scenario(TABLE)
    g.run("say 1: let us wait; timeout")
    assert g.dead == set()
    assert g.phase is Phase.MORNING
    assert g.last(Ev.MORNING_REPORT).params["dead"] == []


# --- N6: einstimmig ------------------------------------------------------------------------


@pytest.mark.rule("N6", "W6")
def test_einstimmig_agreeing_votes_kill() -> None:
    g = Scenario(TABLE, unanimous=True)
    g.run("evil 1,2 -> 4")
    assert g.last(Ev.EVIL_VOTES_COMPLETE).params["victim"] == 4
    g.run("timeout")
    assert g.dead == {4}


@pytest.mark.rule("N6", "W6")
def test_einstimmig_disagreeing_votes_kill_nobody() -> None:
    for seed in range(10):
        g = Scenario(TABLE, unanimous=True, seed=seed)
        g.run("evil 1 -> 4; evil 2 -> 5")
        assert g.last(Ev.EVIL_VOTES_COMPLETE).params["victim"] is None
        g.run("timeout")
        assert g.dead == set()


@pytest.mark.rule("N6", "W6")
def test_einstimmig_three_evil_two_against_one_kill_nobody() -> None:
    g = Scenario(THREE_EVIL, unanimous=True)
    g.run("evil 1,2 -> 6; evil 3 -> 7; timeout")
    assert g.dead == set()


@pytest.mark.rule("N6", "W6")
def test_without_einstimmig_the_same_disagreement_still_kills_by_lot() -> None:
    g = Scenario(TABLE, unanimous=False)
    g.run("evil 1 -> 4; evil 2 -> 5; timeout")
    assert len(g.dead) == 1 and g.dead <= {4, 5}


@pytest.mark.rule("N6", "W6")
def test_einstimmig_a_player_who_does_not_vote_does_not_break_unanimity() -> None:
    # decision (docs/decisions.md): all votes *cast* must agree.
    g = Scenario(TABLE, unanimous=True)
    g.run("evil 1 -> 5; timeout")
    assert g.dead == {5}


@pytest.mark.rule("N6", "W6")
def test_einstimmig_is_announced_at_the_start() -> None:
    g = Scenario(TABLE, unanimous=True)
    assert g.last(Ev.GAME_STARTED).params["unanimous"] is True


# --- N7: the witch learns the victim when all evil have voted -------------------------------


@pytest.mark.rule("N7", "S3")
def test_the_witch_learns_the_victim_only_after_the_last_evil_vote() -> None:
    g = Scenario(WITCH_TABLE)
    g.run("evil 1 -> 5")
    assert g.events_for(3, Ev.WITCH_VICTIM) == []
    assert g.view(3)["witch_victim"] is None
    assert g.refused("heal 3 -> 5") == Rej.VICTIM_UNKNOWN
    g.run("evil 2 -> 5")
    told = g.events_for(3, Ev.WITCH_VICTIM)
    assert [e.params["victim"] for e in told] == [5]
    assert told[0].audience.seats == {3}
    assert g.view(3)["witch_victim"] == 5
    g.run("heal 3 -> 5; timeout")
    assert g.dead == set()


@pytest.mark.rule("N7")
def test_nobody_but_the_witch_learns_the_victim_from_the_witch_message() -> None:
    g = Scenario(WITCH_TABLE)
    g.run("evil 1,2 -> 6")
    for seat in (1, 2, 4, 5, 6, 7):
        assert g.events_for(seat, Ev.WITCH_VICTIM) == []
        assert g.view(seat)["witch_victim"] is None
    assert view(g.state, Viewer.spectator())["witch_victim"] is None


@pytest.mark.rule("N7")
def test_the_witch_learns_nothing_when_an_evil_player_never_votes() -> None:
    g = Scenario(WITCH_TABLE)
    g.run("evil 1 -> 5")
    assert g.refused("heal 3 -> 5") == Rej.VICTIM_UNKNOWN
    g.run("timeout")
    assert g.events_for(3, Ev.WITCH_VICTIM) == []
    assert g.dead == {5}


@pytest.mark.rule("N7", "N3")
def test_the_witch_learns_the_victim_drawn_by_lot() -> None:
    for seed in range(6):
        g = Scenario(WITCH_TABLE, seed=seed)
        g.run("evil 1 -> 5; evil 2 -> 6")
        victim = g.last(Ev.WITCH_VICTIM).params["victim"]
        assert victim in (5, 6)
        assert g.last(Ev.EVIL_VOTES_COMPLETE).params["victim"] == victim
        g.run("timeout")
        assert g.dead == {victim}


@pytest.mark.rule("N7", "N6")
def test_with_einstimmig_disagreement_the_witch_learns_there_is_no_victim() -> None:
    g = Scenario(WITCH_TABLE, unanimous=True)
    g.run("evil 1 -> 5; evil 2 -> 6")
    assert g.last(Ev.WITCH_VICTIM).params["victim"] is None
    assert g.refused("heal 3 -> 5") == Rej.VICTIM_UNKNOWN


@pytest.mark.rule("N7")
def test_the_witch_learns_when_all_living_evil_voted() -> None:
    g = Scenario("evil evil evil witch seer filler filler filler filler filler", stalemate_rounds=9)
    banish(g, 1)
    assert 1 in g.dead
    g.run("evil 2 -> 6")
    assert g.events_for(4, Ev.WITCH_VICTIM) == []
    g.run("evil 3 -> 6")
    assert [e.params["victim"] for e in g.events_for(4, Ev.WITCH_VICTIM)] == [6]
