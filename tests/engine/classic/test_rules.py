"""One rule test (at least) for each of RULES A1–A15, in the scenario language."""

from __future__ import annotations

import pytest

from tests.engine.classic.scenario import Game
from vollmond.engine.classic.codes import Ev
from vollmond.engine.classic.decks import build_deck
from vollmond.engine.classic.types import DeckId, Phase, Role, Side, Step
from vollmond.engine.classic.view import project
from vollmond.engine.core import Viewer

NINE = "werewolf werewolf seer villager villager villager villager villager villager"


def outcome(g: Game) -> tuple[tuple[Side, ...], frozenset[int]]:
    assert g.state.outcome is not None
    return g.state.outcome.sides, g.state.outcome.winners


@pytest.mark.rule("A1")
def test_wolves_win_when_the_village_is_no_larger() -> None:
    g = Game("werewolf villager villager seer villager", captain=False)
    g.until("day").run("vote 1,2,3 -> 4; vote 4,5 -> 2")  # seer 4 banished
    g.until("wolves", round=2).run("wolf 1 -> 2")
    # wolf 1 against villagers 3 and 5: not yet; the next banishment decides
    assert g.state.phase is not Phase.OVER
    g.until("day").run("vote 1,3 -> 5; vote 5 -> 1")
    assert outcome(g) == ((Side.WOLVES,), frozenset({1}))


@pytest.mark.rule("A1")
def test_village_wins_when_every_werewolf_card_is_gone() -> None:
    g = Game("werewolf villager villager seer pact_maker", captain=False)
    g.until("day").run("vote 2,3,4 -> 1; vote 1,5 -> 2")
    sides, winners = outcome(g)
    assert sides == (Side.VILLAGE,) and winners == {2, 3, 4}  # the pact maker loses


@pytest.mark.rule("A1", "A4")
def test_mixed_lovers_win_alone_as_the_last_two() -> None:
    g = Game("werewolf amor villager seer villager", captain=False)
    g.until("amor").run("link 2 -> 1,3")
    g.until("day").run("vote 1,2,3 -> 4; vote 4,5 -> 2")  # the seer leaves
    g.until("wolves", round=2).run("wolf 1 -> 5")
    g.until("day", round=2).run("vote 1,3 -> 2; vote 2 -> 0")
    # 1 (wolf) and 3 (villager) are the lovers and the last two
    assert outcome(g) == ((Side.LOVERS,), frozenset({1, 3}))


@pytest.mark.rule("A2")
@pytest.mark.parametrize("deck", [DeckId.BASIC, DeckId.CLASSIC, DeckId.FULL])
@pytest.mark.parametrize("players", [5, 9, 14, 40])
def test_one_villager_is_always_the_seer(deck: DeckId, players: int) -> None:
    assert build_deck(deck, players, ()).count(Role.SEER) == 1


@pytest.mark.rule("A2")
def test_a_custom_deck_without_seer_gets_one_instead_of_a_villager() -> None:
    cards = build_deck(DeckId.CUSTOM, 5, ((Role.WEREWOLF, 1), (Role.VILLAGER, 4)))
    assert sorted(cards) == sorted([Role.WEREWOLF, Role.SEER, *[Role.VILLAGER] * 3])


@pytest.mark.rule("A3")
def test_the_thief_adds_two_villager_cards() -> None:
    cards = build_deck(DeckId.CLASSIC, 8, ())
    assert Role.THIEF in cards and len(cards) == 10


@pytest.mark.rule("A3")
def test_the_thief_must_take_a_left_over_werewolf() -> None:
    g = Game("thief villager seer villager werewolf", leftover="villager werewolf", captain=False)
    assert g.state.stage == "thief"
    cards = g.of(Ev.THIEF_CARDS)[0]
    assert cards.audience.seats == {1} and cards.params["must_take_wolf"] is True
    assert g.refused("take 1 -> 1") == "must_take_wolf"
    g.run("take 1 -> 2")
    assert g.state.player(1).role is Role.WEREWOLF
    assert g.state.stage == "wolves"  # no Amor, no election: the night begins


@pytest.mark.rule("A3")
def test_the_thief_chooses_freely_between_two_village_cards_and_a_timeout_draws() -> None:
    g = Game("thief villager seer villager werewolf", leftover="villager sandman", captain=False)
    g.run("take 1 -> 2")
    assert g.state.player(1).role is Role.SANDMAN
    h = Game("thief villager seer villager werewolf", leftover="seer werewolf", captain=False)
    h.run("timeout")  # no choice in time: he takes the werewolf, as he must
    assert h.state.player(1).role is Role.WEREWOLF


@pytest.mark.rule("A4")
def test_amor_links_two_players_himself_included_and_they_die_together() -> None:
    g = Game(NINE.replace("seer villager", "seer amor", 1), captain=False)
    assert g.refused("link 4 -> 2,2") == "same_twice"
    g.run("link 4 -> 4,6")
    revealed = g.of(Ev.LOVERS_REVEALED)[0]
    assert revealed.audience.seats == {4, 6} and revealed.params["seats"] == [4, 6]
    g.until("wolves").run("wolf 1,2 -> 6")
    g.until("morning")
    assert g.dead == {4, 6}  # the lover dies of grief


@pytest.mark.rule("A5")
def test_the_captain_is_elected_breaks_ties_and_cannot_refuse() -> None:
    g = Game("werewolf villager villager seer villager villager")
    assert g.state.stage == "election"
    g.run("elect 1,2,3,4 -> 5; elect 5 -> 1; elect 6 -> 5")
    assert g.state.captain == 5
    g.until("day").run("vote 1,2 -> 3; vote 3,4 -> 1; vote 5,6 -> 0")
    assert g.state.stage == "tiebreak" and g.state.day is not None
    assert g.state.day.tied == (1, 3)
    assert g.refused("break 1 -> 3") == "not_captain"
    assert g.refused("break 5 -> 2") == "not_tied"
    g.run("break 5 -> 1")
    assert outcome(g)[0] == (Side.VILLAGE,)


@pytest.mark.rule("A5")
def test_a_dead_captain_names_his_successor_or_the_lot_does() -> None:
    g = Game(NINE)
    g.run("elect 1,2,3,4,5,6,7,8,9 -> 5")
    g.until("wolves").run("wolf 1,2 -> 5")
    g.until("succession_morning")
    assert g.state.successor_due == 5
    assert g.refused("successor 6 -> 7") == "not_captain"
    g.run("successor 5 -> 7")
    assert g.state.captain == 7 and g.state.stage == "day"
    g.run("vote 1,2,3,4,6,8,9 -> 7; vote 7 -> 1")
    g.until("succession_evening")
    g.run("timeout")
    assert g.state.captain is not None and g.state.captain != 7
    assert g.of(Ev.SUCCESSOR_NAMED)[-1].params["by_lot"] is True


@pytest.mark.rule("A6")
def test_the_night_order_is_wolves_seer_witch_sandman() -> None:
    g = Game(
        "werewolf seeing_wolf seer herb_witch sandman villager villager villager villager amor",
        leftover="",
        captain=False,
    )
    steps = []
    while g.state.phase is not Phase.MORNING:
        steps.append(g.state.step)
        g.run("timeout")
    assert steps == [Step.AMOR, Step.WOLVES, Step.SEEING_WOLF, Step.SEER, Step.WITCH, Step.SANDMAN]


@pytest.mark.rule("A6")
def test_the_seer_gets_thumb_up_or_down_only_for_herself() -> None:
    g = Game(NINE, captain=False)
    g.until("seer").run("check 3 -> 1")
    result = g.of(Ev.CHECK_RESULT)[0]
    assert result.audience.seats == {3} and result.params == {"target": 1, "wolf": True}
    assert g.state.stage == "morning"  # her one vision ends her step
    assert g.refused("check 3 -> 4") == "wrong_phase"


@pytest.mark.rule("A7")
def test_the_herb_witch_sees_the_victim_and_heals_it_once_in_the_game() -> None:
    g = Game(NINE.replace("villager", "herb_witch", 1), captain=False)
    g.until("wolves").run("wolf 1,2 -> 6")
    g.until("witch")
    shown = g.of(Ev.WITCH_VICTIM)[0]
    assert shown.audience.seats == {4} and shown.params["victim"] == 6
    assert g.refused("heal 4 -> 5") == "no_victim"
    g.run("heal 4 -> 6")
    g.until("morning")
    assert g.dead == set()
    g.until("witch", round=2)
    assert g.refused("poison 4 -> 1") == "action_spent"
    assert len(g.of(Ev.WITCH_VICTIM)) == 1  # she is no longer shown the victim


@pytest.mark.rule("A7")
def test_the_herb_witch_may_poison_another_instead_or_keep_her_action() -> None:
    g = Game(NINE.replace("villager", "herb_witch", 1), captain=False)
    g.until("wolves").run("wolf 1,2 -> 6")
    g.until("witch")
    assert g.refused("poison 4 -> 6") == "target_victim"
    g.run("pass 4")
    assert g.state.stage == "morning" and g.dead == {6}
    g.until("wolves", round=2).run("wolf 1,2 -> 7")
    g.until("witch", round=2).run("poison 4 -> 1")
    g.until("morning", round=2)
    assert g.dead == {6, 7, 1}


@pytest.mark.rule("A8")
def test_the_sandman_learns_who_was_active() -> None:
    g = Game(NINE.replace("villager", "herb_witch", 1).replace("villager", "sandman", 1))
    g.until("wolves").run("wolf 1,2 -> 7")
    g.until("seer").run("check 3 -> 6")
    g.until("witch").run("pass 4")
    g.run("sense 5 -> 1")
    assert g.of(Ev.SANDMAN_RESULT)[-1].params == {"target": 1, "active": True}
    g.until("sandman", round=2).run("sense 5 -> 4")  # she let her step time out
    assert g.of(Ev.SANDMAN_RESULT)[-1].params == {"target": 4, "active": False}


@pytest.mark.rule("A8")
def test_a_witch_who_passed_was_not_active() -> None:
    g = Game(NINE.replace("villager", "herb_witch", 1).replace("villager", "sandman", 1))
    g.until("witch").run("pass 4; sense 5 -> 4")
    assert g.of(Ev.SANDMAN_RESULT)[-1].params["active"] is False
    h = Game(NINE.replace("villager", "herb_witch", 1).replace("villager", "sandman", 1))
    h.until("wolves").run("wolf 1,2 -> 7")
    h.until("witch").run("poison 4 -> 8; sense 5 -> 4")
    assert h.of(Ev.SANDMAN_RESULT)[-1].params["active"] is True


@pytest.mark.rule("A9")
def test_victims_are_announced_and_the_most_hands_leave_while_the_dead_are_silent() -> None:
    g = Game(NINE, captain=False)
    g.until("wolves").run("wolf 1,2 -> 9")
    g.until("morning")
    report = g.of(Ev.MORNING_REPORT)[0]
    assert report.params["dead"] == [{"seat": 9, "role": "villager"}]
    g.until("day")
    assert g.refused("vote 9 -> 1") == "actor_dead"
    g.run("vote 3,4,5 -> 1; vote 1,2 -> 4; vote 6,7,8 -> 0")
    result = g.of(Ev.VOTE_RESULT)[0].params
    assert result["banished"] == 1 and result["decided_by"] == "votes"


@pytest.mark.rule("A9")
def test_a_tie_without_captain_is_decided_by_the_die() -> None:
    g = Game(NINE, captain=False)
    g.until("day").run("vote 3,4 -> 1; vote 1,2 -> 5; vote 5,6,7,8,9 -> 0")
    result = g.of(Ev.VOTE_RESULT)[0].params
    assert result["decided_by"] == "lot" and result["banished"] in (1, 5)


@pytest.mark.rule("A10")
def test_the_false_wolf_wakes_and_votes_with_the_wolves_but_is_a_villager() -> None:
    g = Game(NINE.replace("villager", "false_wolf", 1), captain=False)
    g.until("wolves")
    room = g.of(Ev.PACK_REVEALED)[0]
    assert room.audience.seats == {1, 2, 4} and room.params["members"] == [1, 2, 4]
    g.run("wolf 1 -> 5; wolf 2,4 -> 6")
    assert g.state.night is not None and g.state.night.victim == 6
    g.until("seer").run("check 3 -> 4")
    assert g.of(Ev.CHECK_RESULT)[0].params["wolf"] is False
    # wolves don't see the false wolf's card
    assert project(g.state, Viewer.player(1)).seats[3].role is None


@pytest.mark.rule("A11")
def test_the_seeing_werewolf_searches_for_the_seer() -> None:
    g = Game(NINE.replace("werewolf", "seeing_wolf", 1), captain=False)
    g.until("seeing_wolf").run("seek 1 -> 3")
    assert g.of(Ev.SEEK_RESULT)[0].params == {"target": 3, "seer": True}
    g.until("seeing_wolf", round=2).run("seek 1 -> 5")
    assert g.of(Ev.SEEK_RESULT)[1].params == {"target": 5, "seer": False}


@pytest.mark.rule("A12")
def test_the_pact_maker_learns_the_wolves_they_not_him_and_he_has_no_night_power() -> None:
    g = Game(NINE.replace("villager", "pact_maker", 1), captain=False)
    g.until("wolves")
    told = g.of(Ev.WOLVES_TOLD)[0]
    assert told.audience.seats == {4} and told.params["wolves"] == [1, 2]
    room = g.of(Ev.PACK_REVEALED)[0]
    assert 4 not in room.audience.seats and room.params["members"] == [1, 2]
    assert g.refused("wolf 4 -> 5") == "no_such_ability"
    assert project(g.state, Viewer.player(4)).me.wolves == (1, 2)  # type: ignore[union-attr]


@pytest.mark.rule("A12", "A1")
def test_the_pact_maker_counts_with_the_wolves_for_the_majority() -> None:
    g = Game("werewolf pact_maker seer villager villager", captain=False)
    g.until("day").run("vote 1,2,3 -> 4; vote 4,5 -> 3")
    assert outcome(g) == ((Side.WOLVES,), frozenset({1, 2}))


@pytest.mark.rule("A13")
def test_the_seer_sees_the_black_werewolf_as_a_villager() -> None:
    g = Game(NINE.replace("werewolf", "black_wolf", 1), captain=False)
    g.until("seer").run("check 3 -> 1")
    assert g.of(Ev.CHECK_RESULT)[0].params == {"target": 1, "wolf": False}


@pytest.mark.rule("A14")
def test_the_death_seeker_banished_by_the_village_wins_alone() -> None:
    g = Game(NINE.replace("villager", "death_seeker", 1), captain=False)
    g.until("day").run("vote 1,2,3,5 -> 4; vote 4,6,7,8,9 -> 0")
    assert outcome(g) == ((Side.DEATH_SEEKER,), frozenset({4}))


@pytest.mark.rule("A14")
def test_the_death_seeker_killed_at_night_wins_nothing() -> None:
    g = Game(NINE.replace("villager", "death_seeker", 1), captain=False)
    g.until("wolves").run("wolf 1,2 -> 4")
    g.until("day")
    assert g.dead == {4} and g.state.phase is Phase.DAY


@pytest.mark.rule("A15")
def test_below_nine_the_first_night_has_no_victim_and_only_the_wolves_wake() -> None:
    g = Game("werewolf werewolf seer herb_witch sandman villager villager villager", captain=False)
    assert g.state.stage == "wolves"
    assert g.of(Ev.PACK_REVEALED)[0].params["members"] == [1, 2]
    assert g.refused("wolf 1 -> 6") == "quiet_night"
    g.run("timeout")
    assert g.state.phase is Phase.MORNING and g.dead == set()
    g.until("wolves", round=2).run("wolf 1,2 -> 6")
    assert g.state.stage == "seer"  # from night 2 on everyone wakes


@pytest.mark.rule("A15")
def test_with_nine_the_first_night_has_a_victim() -> None:
    g = Game(NINE, captain=False)
    g.until("wolves").run("wolf 1,2 -> 6")
    g.until("morning")
    assert g.dead == {6}
