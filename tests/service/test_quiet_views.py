"""A command that shows only to the seats its events reach leaves the others' views as they
were, and the actor tells those subscribers so (`view_unchanged`): the browser socket then
does not rebuild a view it already sent (issue 16, "no recomputation for seats a command
cannot change"). Driven through a real hub and actor on SQLite."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vollmond.engine.core import Event, Viewer
from vollmond.engine.standard import GameOptions, GameState
from vollmond.engine.standard.commands import UseAbility
from vollmond.engine.standard.options import Durations
from vollmond.engine.standard.types import Phase
from vollmond.service.actor import Accepted
from vollmond.service.hub import Hub
from vollmond.service.policy import DurationBounds, Policy
from vollmond.service.web.connection import Connection
from vollmond.store import open_store


class _Seat:
    """A subscriber that keeps what it was told after each command."""

    def __init__(self, seat: int) -> None:
        self.viewer = Viewer.player(seat)
        self.told: list[tuple[bool, bool]] = []  # (an event reached it, view_unchanged)
        self._reached = False

    def deliver(self, seq: int, event: Event) -> None:
        self._reached = True

    def state_changed(
        self, state: GameState, phase_changed: bool, *, view_unchanged: bool = False
    ) -> None:
        self.told.append((self._reached, view_unchanged))
        self._reached = False


async def test_a_night_action_leaves_the_views_of_those_it_does_not_reach_alone(
    tmp_path: Path,
) -> None:
    policy = Policy(durations=DurationBounds(min_s=0.05), login_attempts_per_minute=100)
    async with open_store(f"sqlite+aiosqlite:///{tmp_path / 'db'}") as sessions:
        hub = Hub(sessions, policy)
        options = GameOptions(players=8, durations=Durations(night_s=60.0))
        founded = await hub.found(options, private=False, host_account_id=None, host_name="h")
        for i in range(7):
            await hub.join(founded.game.id, account_id=None, name=f"p{i}")
        actor = hub.actors[founded.game.id]
        try:
            state = actor.state
            assert isinstance(state, GameState) and state.phase is Phase.NIGHT
            seats = {p.seat: _Seat(p.seat) for p in state.players}
            for subscriber in seats.values():
                actor.subscribe(subscriber)
            actor_seat, action = next(
                (seat, c)
                for seat in seats
                for c in actor.ruleset.legal(state, seat)
                if isinstance(c, UseAbility) and c.target is not None
            )
            views = {s: actor.view_for(Viewer.player(s)) for s in seats}
            assert isinstance(await actor.submit(action), Accepted)
            unchanged = {s for s, sub in seats.items() if sub.told[-1][1]}
            reached = {s for s, sub in seats.items() if sub.told[-1][0]}
            assert actor_seat in reached and actor_seat not in unchanged
            assert unchanged == set(seats) - reached  # told nothing, they kept their views
            assert unchanged
            for s in unchanged:
                assert actor.view_for(Viewer.player(s)) == views[s]
        finally:
            await hub.close()


class _Socket:
    """Only what a Connection touches when it is told of a change."""

    async def send_text(self, text: str) -> None:  # pragma: no cover - never awaited here
        raise AssertionError("nothing is sent in this test")


def test_a_socket_told_its_view_is_unchanged_does_not_rebuild_it() -> None:
    connection = Connection(_Socket(), hub=Any, metrics=Any)  # type: ignore[arg-type]
    connection.state_changed(object(), False, view_unchanged=True)
    assert not connection._view_dirty  # the one flag the writer reads
    connection.state_changed(object(), False)
    assert connection._view_dirty
