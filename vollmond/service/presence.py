"""Presence: which seats have a live connection, and which absent players the table drops.

DESIGN §3 reserves a seat for a grace period when a player drops. Every channel (browser
socket, phone line, bot) follows a seat by subscribing to the game's actor with that player's
viewer; the actor reports each subscribe and unsubscribe here, so a seat no channel follows is
*away* without any channel having to report presence itself. Nothing is taken from an away
player: the engine's phase timers already give missed actions their documented defaults (a
night action passes, a vote abstains). But an empty chair that never comes back would hold up
the table, so:

- When a seat's last connection drops, its grace period (`Policy.grace_s`) starts. Phase changes
  during the grace period do not count against the player; reconnecting at any time before the
  removal keeps everything and clears the count.
- Every phase change while the seat is away beyond its grace period counts as one idle phase.
  After `Policy.idle_phases_before_removal` consecutive idle phases the service removes the
  player with the engine's `Leave` command (role revealed, announced by `player_left`, as in
  docs/decisions.md "Leaving"), and an account loses `Policy.idle_karma_penalty` karma once.
- A seat nobody ever connected to counts as away from the moment its game started (or the
  server restarted), so a crash of the server costs nobody anything while they reconnect.

Presence is node-local state, never persisted: after a restart everyone starts away, with a
fresh grace period.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import structlog

from vollmond.engine.core import Event, Rejection, Viewer
from vollmond.service.actor import GameActor, GameClosedError
from vollmond.service.policy import Policy
from vollmond.store import Sessions, karma_change, karma_history
from vollmond.store.karma import seat_owner
from vollmond.store.seats import list_seats

log = structlog.get_logger(__name__)

Clock = Callable[[], float]

IDLE_KARMA_REASON = "idle_removal"
"""The karma ledger's reason code for a removal; a code, rendered by whoever shows the ledger."""


@dataclass(slots=True)
class SeatPresence:
    """One seat: open connections, since when it is away (clock seconds), idle phases counted."""

    connections: int = 0
    away_since: float | None = None
    idle_phases: int = 0


class GamePresence:
    """Presence of one game's seats; follows the actor as a subscriber to see phase changes.

    It subscribes as a spectator: it needs only `state_changed`, and a spectator's events are
    public, so this object never holds a secret.
    """

    def __init__(self, actor: GameActor, sessions: Sessions, policy: Policy, clock: Clock) -> None:
        self.viewer = Viewer.spectator()
        self.actor = actor
        self.sessions = sessions
        self.policy = policy
        self.clock = clock
        now = clock()
        players = actor.state.players if actor.state is not None else ()
        self.seats = {p.seat: SeatPresence(away_since=now) for p in players if p.alive}
        self._removals: dict[int, asyncio.Task[None]] = {}

    # -- connections -----------------------------------------------------------------------
    def follow(self, seat: int, change: int) -> None:
        """The actor's hook: a channel started (+1) or stopped (-1) following `seat`."""
        if change > 0:
            self.attach(seat)
        else:
            self.detach(seat)

    def attach(self, seat: int) -> None:
        presence = self.seats.get(seat)
        if presence is None:
            return
        presence.connections += 1
        presence.away_since = None
        presence.idle_phases = 0

    def detach(self, seat: int) -> None:
        presence = self.seats.get(seat)
        if presence is None or presence.connections == 0:
            return
        presence.connections -= 1
        if presence.connections == 0:
            presence.away_since = self.clock()
            log.info("seat_away", game=self.actor.game_id, seat=seat, grace_s=self.policy.grace_s)

    def connected(self, seat: int) -> bool:
        presence = self.seats.get(seat)
        return presence is not None and presence.connections > 0

    # -- Subscriber ------------------------------------------------------------------------
    def deliver(self, seq: int, event: Event) -> None:
        """Events are not needed here; phase changes arrive through `state_changed`."""

    def state_changed(
        self, state: Any, phase_changed: bool, *, view_unchanged: bool = False
    ) -> None:
        if not phase_changed:
            return
        now = self.clock()
        for seat, presence in self.seats.items():
            if presence.away_since is None or not self._may_leave(state, seat):
                continue
            if now - presence.away_since < self.policy.grace_s:
                continue
            presence.idle_phases += 1
            limit = self.policy.idle_phases_before_removal
            if presence.idle_phases >= limit and seat not in self._removals:
                self._removals[seat] = asyncio.get_running_loop().create_task(
                    self._remove(seat), name=f"remove:{self.actor.game_id}:{seat}"
                )

    # -- removal ---------------------------------------------------------------------------
    async def _remove(self, seat: int) -> None:
        try:
            await self.remove(seat)
        except Exception:  # a failed removal must be logged, not lost in a task
            log.exception("idle_removal_failed", game=self.actor.game_id, seat=seat)

    def _may_leave(self, state: Any, seat: int) -> bool:
        """Whether `seat` still plays (any rule set lets exactly its living players leave)."""
        rules = self.actor.ruleset
        return rules.validate(state, rules.leave(seat)) is None

    async def remove(self, seat: int) -> bool:
        """Remove an idle player with `Leave`, then take karma once; False if nothing was done
        (the player came back, died, or the game ended meanwhile)."""
        state = self.actor.state
        if state is None or self.connected(seat) or not self._may_leave(state, seat):
            return False
        try:
            outcome = await self.actor.submit(self.actor.ruleset.leave(seat))
        except GameClosedError:
            return False
        if isinstance(outcome, Rejection):
            return False
        log.info("idle_player_removed", game=self.actor.game_id, seat=seat)
        await self._penalise(seat)
        return True

    async def _penalise(self, seat: int) -> None:
        amount = self.policy.idle_karma_penalty
        if amount <= 0:
            return
        # The seat's account, else the phone identity it was taken with (issue 10).
        owner = next(
            (
                seat_owner(s.account_id, s.phone_identity_id)
                for s in await list_seats(self.sessions, self.actor.game_id)
                if s.house == seat
            ),
            None,
        )
        if owner is None:
            return
        history = await karma_history(self.sessions, owner)
        game_id = self.actor.game_id
        if any(e.game_id == game_id and e.reason == IDLE_KARMA_REASON for e in history):
            return  # once per game, also if a removal is retried after a restart
        await karma_change(self.sessions, owner, -amount, IDLE_KARMA_REASON, game_id=game_id)

    async def close(self) -> None:
        for task in self._removals.values():
            task.cancel()
        for task in self._removals.values():
            if not task.done():
                await asyncio.gather(task, return_exceptions=True)


class Presence:
    """Presence of every game on this node; channels report connections here by game id."""

    def __init__(self, policy: Policy, clock: Clock = time.monotonic) -> None:
        self.policy = policy
        self.clock = clock
        self.games: dict[str, GamePresence] = {}

    def watch(self, actor: GameActor, sessions: Sessions) -> GamePresence:
        """Start following a running game (at its start, or when the server resumes it)."""
        game = GamePresence(actor, sessions, self.policy, self.clock)
        self.games[actor.game_id] = game
        actor.subscribe(game)
        actor.on_seat_followers = game.follow
        for subscriber in actor.subscribers:  # channels that followed before (none, usually)
            if subscriber.viewer.seat is not None and subscriber is not game:
                game.attach(subscriber.viewer.seat)
        return game

    async def forget(self, game_id: str) -> None:
        game = self.games.pop(game_id, None)
        if game is not None:
            game.actor.on_seat_followers = None
            game.actor.unsubscribe(game)
            await game.close()

    def attach(self, game_id: str, seat: int) -> None:
        game = self.games.get(game_id)
        if game is not None:
            game.attach(seat)

    def detach(self, game_id: str, seat: int) -> None:
        game = self.games.get(game_id)
        if game is not None:
            game.detach(seat)

    def connected(self, game_id: str, seat: int) -> bool:
        game = self.games.get(game_id)
        return game is not None and game.connected(seat)

    async def close(self) -> None:
        for game_id in list(self.games):
            await self.forget(game_id)
