"""Whether a seat is out of the game is asked after every command by every caller's line
(issue 14: the phone lines read it through the protocol, no longer from the standard state):
the actor answers from one public view per state, however many lines ask."""

from __future__ import annotations

from typing import Any

from vollmond.engine.core import Rejection, Viewer
from vollmond.engine.ruleset import AnyRuleSet, get_ruleset
from vollmond.service.actor import GameActor


class CountingViews:
    """The rule set, counting the views built."""

    def __init__(self, inner: AnyRuleSet) -> None:
        self.inner = inner
        self.views = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def view(self, state: Any, viewer: Viewer) -> Any:
        self.views += 1
        return self.inner.view(state, viewer)


def test_one_public_view_per_state_answers_every_line() -> None:
    inner = get_ruleset("standard")
    rules = CountingViews(inner)
    options = inner.decode_options({"players": 8})
    actor = GameActor("g", rules, options, 3, None)  # type: ignore[arg-type]
    actor.state = inner.new_game(options, inner.rng_for(3, 0)).state
    assert not any(actor.seat_out(seat) for _ in range(8) for seat in range(1, 9))
    assert rules.views == 1

    left = inner.apply(actor.state, inner.leave(5), inner.rng_for(3, 1))
    assert not isinstance(left, Rejection)
    actor.state = left.state
    assert [seat for seat in range(1, 9) if actor.seat_out(seat)] == [5]
    assert rules.views == 2
