"""Karma for a finished game (P3) under the anti-farming rules (P4), without a database."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vollmond.community.karma import (
    Award,
    GameFacts,
    KarmaReason,
    award,
    earned_today,
    same_group_size,
)
from vollmond.engine.ruleset import SeatResult
from vollmond.settings.karma import KarmaSettings

RULES = KarmaSettings()
PUBLIC = GameFacts(humans=8, private=False, same_group_games=0, earned_today=0)
WINNER = SeatResult(won=True, survived=True, special_role=True, votes=3, left=False)
LOSER = SeatResult(won=False, survived=False, special_role=False, votes=0, left=False)


def amounts(given_award: Award) -> dict[KarmaReason, int]:
    return dict(given_award.lines)


@pytest.mark.rule("P3")
def test_each_deed_earns_its_points_with_its_reason() -> None:
    assert amounts(award(WINNER, PUBLIC, RULES)) == {
        KarmaReason.WIN: RULES.win,
        KarmaReason.SURVIVE: RULES.survive,
        KarmaReason.SPECIAL_ROLE: RULES.special_role,
        KarmaReason.VOTES: 3 * RULES.per_vote,
        KarmaReason.STAY: RULES.stay_to_end,
    }
    assert amounts(award(LOSER, PUBLIC, RULES)) == {KarmaReason.STAY: RULES.stay_to_end}


@pytest.mark.rule("P3")
def test_leaving_costs_karma_and_earns_nothing_else() -> None:
    leaver = SeatResult(won=True, survived=True, special_role=True, votes=5, left=True)
    assert award(leaver, PUBLIC, RULES).lines == ((KarmaReason.LEAVE, -RULES.leave),)
    capped = GameFacts(humans=8, private=False, same_group_games=0, earned_today=10_000)
    assert award(leaver, capped, RULES).total == -RULES.leave  # deductions are never capped


@pytest.mark.rule("P4")
def test_votes_count_up_to_a_limit() -> None:
    many = SeatResult(won=False, survived=False, special_role=False, votes=500, left=False)
    assert amounts(award(many, PUBLIC, RULES))[KarmaReason.VOTES] == RULES.max_votes_counted


@pytest.mark.rule("P4")
def test_too_few_humans_earn_nothing() -> None:
    few = GameFacts(humans=RULES.min_humans - 1, private=False, same_group_games=0, earned_today=0)
    assert award(WINNER, few, RULES).lines == ()
    enough = GameFacts(humans=RULES.min_humans, private=False, same_group_games=0, earned_today=0)
    assert award(WINNER, enough, RULES).total > 0


@pytest.mark.rule("P4")
def test_a_private_round_weighs_less() -> None:
    private = GameFacts(humans=8, private=True, same_group_games=0, earned_today=0)
    public_total = award(WINNER, PUBLIC, RULES).total
    assert award(WINNER, private, RULES).total < public_total
    assert award(WINNER, private, RULES).total >= public_total * RULES.private_percent // 100 - 5


@pytest.mark.rule("P4")
def test_the_daily_cap_cuts_the_last_reasons_first() -> None:
    near = GameFacts(humans=8, private=False, same_group_games=0, earned_today=RULES.daily_cap - 12)
    lines = award(WINNER, near, RULES).lines
    assert sum(a for _, a in lines) == 12
    assert lines[0] == (KarmaReason.WIN, RULES.win)  # the win first, then what fits
    full = GameFacts(humans=8, private=False, same_group_games=0, earned_today=RULES.daily_cap)
    assert award(WINNER, full, RULES).lines == ()


results = st.builds(
    SeatResult,
    won=st.booleans(),
    survived=st.booleans(),
    special_role=st.booleans(),
    votes=st.integers(0, 50),
    left=st.booleans(),
)
facts = st.builds(
    GameFacts,
    humans=st.integers(0, 30),
    private=st.booleans(),
    same_group_games=st.integers(0, 40),
    earned_today=st.integers(0, 200),
)


@pytest.mark.rule("P4")
@given(games=st.lists(st.tuples(results, facts), max_size=40))
def test_a_day_of_games_never_earns_more_than_the_cap(
    games: list[tuple[SeatResult, GameFacts]],
) -> None:
    """Whatever a player plays in one day, what they earn never passes the cap: each game
    is told what was earned before it, as the service does."""
    booked: list[int] = []
    for result, fact in games:
        today = GameFacts(
            humans=fact.humans,
            private=fact.private,
            same_group_games=fact.same_group_games,
            earned_today=earned_today(booked),
        )
        lines = award(result, today, RULES).lines
        assert all(amount != 0 for _, amount in lines)
        booked.extend(amount for _, amount in lines)
    assert earned_today(booked) <= RULES.daily_cap


@pytest.mark.rule("P4")
@given(result=results, fact=facts, more=st.integers(1, 10))
def test_the_same_group_again_never_earns_more(
    result: SeatResult, fact: GameFacts, more: int
) -> None:
    again = GameFacts(
        humans=fact.humans,
        private=fact.private,
        same_group_games=fact.same_group_games + more,
        earned_today=fact.earned_today,
    )
    assert award(result, again, RULES).total <= award(result, fact, RULES).total
    if not result.left and fact.humans >= RULES.min_humans and fact.same_group_games == 0:
        assert award(result, again, RULES).total < max(1, award(result, fact, RULES).total)


@pytest.mark.rule("P4")
def test_the_same_group_is_most_of_a_table_and_never_one_player() -> None:
    assert same_group_size(5, 80) == 4  # four of the five
    assert same_group_size(5, 100) == 5
    assert same_group_size(7, 80) == 6  # 5.6 rounded up
    assert same_group_size(1, 80) == 2  # one player is no group
    assert same_group_size(2, 10) == 2


def test_settings_refuse_nonsense() -> None:
    with pytest.raises(ValueError, match="daily_cap"):
        KarmaSettings(daily_cap=-1)
    with pytest.raises(ValueError, match="private_percent"):
        KarmaSettings(private_percent=150)
