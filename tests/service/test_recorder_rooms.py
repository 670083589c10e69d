"""Which seats and rooms a recording after an alarm concerns, for any rule set (issue 14): the
recorder reads seats from the routing table and rooms with `place_of`, never a rule set's own
chat rooms, so a classic or mayor table is recorded as a standard one is."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from vollmond.engine.ruleset import AnyRuleSet, RoomKind, get_ruleset, place_of
from vollmond.moderation import Caller
from vollmond.moderation.alarms import Alarm, AlarmStatus
from vollmond.service.recorder import concerned_seats, room_name


def alarm(house: int | None, accused: int | None) -> Alarm:
    return Alarm(
        id=1,
        game_id="g",
        round=1,
        phase="night",
        caller=Caller(account_id=5, house=house),
        reason=1 if accused is not None else None,
        accused_house=accused,
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        status=AlarmStatus.OPEN,
        taken_by=None,
        taken_at=None,
        outcome=None,
        note=None,
        resolved_by=None,
        resolved_at=None,
    )


def dealt(ruleset_id: str) -> tuple[AnyRuleSet, Any]:
    rules = get_ruleset(ruleset_id)
    options = rules.decode_options({"players": rules.min_players})
    return rules, rules.new_game(options, rules.rng_for(7, 0)).state


@pytest.mark.parametrize("ruleset_id", ["standard", "classic", "mayor"])
def test_only_houses_of_the_table_are_concerned(ruleset_id: str) -> None:
    rules, state = dealt(ruleset_id)
    assert concerned_seats(alarm(2, 99), rules, state) == {2}
    assert concerned_seats(alarm(None, None), rules, state) == frozenset()


@pytest.mark.parametrize("ruleset_id", ["standard", "classic", "mayor"])
def test_the_rooms_are_named_as_the_voice_page_names_them(ruleset_id: str) -> None:
    rules, state = dealt(ruleset_id)
    one = place_of(rules, state, 1).kind
    two = place_of(rules, state, 2).kind
    assert room_name(rules, state, frozenset({1})) == one.value
    assert room_name(rules, state, frozenset({1, 2})) == "+".join(sorted({one, two}))
    assert room_name(rules, state, frozenset()) == RoomKind.MARKET.value
