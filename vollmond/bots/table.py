"""Bots at a real table: seats of a running game played by the smart bot at a person's pace.

A founder may fill the free seats of a lobby with bots (``Hub.fill_with_bots``); the seats on
the channel "bot" are their record, and a game resumed from its log (a restart, a takeover) is
played on by a bot on each of them again (``Hub._seat_bots``). Each bot seat
is a subscriber of the game's actor with its own player viewer — so presence counts it as
present, and it is woken by exactly the events its seat may receive (a call, the witch's
victim) — and decides with the rule set's own bot (`RuleSet.bots`: its "smart" bot, else its
first) from its seat's view; this module knows no rule set.

Bots act *within* the phase, never at once: a first decision at a random point between
``patience`` of the phase's length (by default between 15 % and 60 %; the length is the
time left until the phase's timeout when the phase begins, as the actor scheduled it), then
again a little
later while it still has something to do, as a person would. Bot seats have no account, so
they earn no karma; they are named "Bot N" and sit on the channel "bot", which every client
shows.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from vollmond.engine.core import AudienceKind, Event, Rejection, Viewer
from vollmond.engine.ruleset import AnyRuleSet, Bot
from vollmond.service.actor import GameActor, GameClosedError

if TYPE_CHECKING:
    from vollmond.service.hub import Hub

log = logging.getLogger(__name__)

BOT_CHANNEL: Final = "bot"
PATIENCE: Final = (0.15, 0.6)
"""When a bot first acts in a phase, as fractions of the phase's length."""
MAX_ACTIONS_PER_PHASE: Final = 4


def bot_name(n: int) -> str:
    """The name every client shows for a bot seat (a platform word, not player-facing prose)."""
    return f"Bot {n}"


DEFAULT_PHASE_S: Final = 60.0
"""The phase length assumed when the phase has no timeout scheduled."""

PREFERRED_BOT: Final = "smart"


def table_bot(ruleset: AnyRuleSet, seat: int, rng: random.Random) -> Bot[Any, Any]:
    """The rule set's bot for a seat at a real table: its "smart" one if it has one, else the
    first it names (every rule set brings at least one)."""
    bots = ruleset.bots
    factory = bots.get(PREFERRED_BOT) or next(iter(bots.values()))
    return factory(seat, rng)


class BotSeat:
    """One bot's seat at one running game (an actor subscriber)."""

    def __init__(
        self,
        hub: Hub,
        actor: GameActor,
        seat: int,
        rng: random.Random,
        patience: tuple[float, float] = PATIENCE,
    ) -> None:
        self.hub = hub
        self.actor = actor
        self.seat = seat
        self.viewer = Viewer.player(seat)
        self.rng = rng
        self.patience = patience
        self.bot = table_bot(actor.ruleset, seat, rng)
        self._phase_length = DEFAULT_PHASE_S
        self.acted_in_phase = 0
        self._phase_seq = -1
        self._timer: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.commands: list[tuple[float, int]] = []  # (seconds into the phase, phase_seq)
        self._phase_started = 0.0

    # -- Subscriber ------------------------------------------------------------------------
    def deliver(self, seq: int, event: Event) -> None:
        """An event only for this seat (a call ringing, the witch's victim): look again soon."""
        seats = event.audience.seats
        if event.audience.kind is AudienceKind.SEATS and self.seat in seats and self.actor.state:
            self._schedule(self._delay(soon=True))

    def state_changed(
        self, state: Any, phase_changed: bool, *, view_unchanged: bool = False
    ) -> None:
        rules = self.actor.ruleset
        if rules.is_over(state):
            self.stop()
            return
        if rules.phase_seq(state) != self._phase_seq:
            self._new_phase(state)

    def game_moved(self) -> None:
        """The game runs on another node now (service/shards, `FollowsTheGameElsewhere`): the
        bot its new owner seated plays this seat; this one stops rather than follow it."""
        self.stop()

    # -- pacing ----------------------------------------------------------------------------
    def start(self) -> None:
        self.actor.subscribe(self)
        state = self.actor.state
        if state is not None:
            self._new_phase(state)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.actor.unsubscribe(self)

    def _new_phase(self, state: Any) -> None:
        loop = asyncio.get_running_loop()
        self._phase_seq = self.actor.ruleset.phase_seq(state)
        self._phase_started = loop.time()
        self.acted_in_phase = 0
        due = self.actor.phase_deadline(self._phase_seq)
        self._phase_length = DEFAULT_PHASE_S if due is None else max(0.0, due - self.actor.clock())
        self._schedule(self._delay(soon=False))

    def _delay(self, *, soon: bool) -> float:
        length = self._phase_length
        low, high = self.patience
        if soon:
            low, high = low / 3, high / 3
        return length * self.rng.uniform(low, high)

    def _schedule(self, delay: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(delay, self._wake)

    def _wake(self) -> None:
        self._timer = None
        task = asyncio.create_task(self._act(), name=f"bot:{self.actor.game_id}:{self.seat}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _act(self) -> None:
        rules = self.actor.ruleset
        state = self.actor.state
        if state is None or rules.is_over(state):
            return
        command = self.bot.choose(state)
        if command is None:
            return
        phase_seq = rules.phase_seq(state)
        # The phase may end while the command waits for the actor: its time counts from the
        # start of the phase it was chosen in, not of the next one.
        started = self._phase_started
        try:
            # To its own actor, never through the hub: once this actor stopped (the hub closed,
            # or the game moved to another node) the bot stops too, and the bot seated where
            # the game runs now plays the seat — one bot per seat, not one per node it visited.
            outcome = await self.actor.submit(command)
        except GameClosedError:
            self.stop()
            return
        if isinstance(outcome, Rejection):
            return
        loop = asyncio.get_running_loop()
        self.commands.append((loop.time() - started, phase_seq))
        self.acted_in_phase += 1
        now = self.actor.state
        if (
            now is not None
            and rules.phase_seq(now) == phase_seq
            and self.acted_in_phase < MAX_ACTIONS_PER_PHASE
        ):
            self._schedule(self._delay(soon=True))


def seat_bots(
    hub: Hub,
    actor: GameActor,
    seats: Sequence[int],
    *,
    rng: random.Random | None = None,
    patience: tuple[float, float] = PATIENCE,
) -> list[BotSeat]:
    """Start a bot on each of `seats` of a running game."""
    rng = rng or random.Random()
    bots = [BotSeat(hub, actor, seat, rng, patience) for seat in seats]
    for bot in bots:
        bot.start()
    return bots
