"""Bot-only games of the standard rules, for balance figures, golden transcripts and load:
`vollmond simulate --rules standard` runs this through `RuleSet.simulate`."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from vollmond.engine.core import AudienceKind, Rejection, Timer
from vollmond.engine.kit.draws import permutation
from vollmond.engine.standard.bots import RandomBot, Temperament
from vollmond.engine.standard.commands import Command, PhaseTimeout, TimerCommand
from vollmond.engine.standard.options import GameOptions
from vollmond.engine.standard.replay import rng_for
from vollmond.engine.standard.rules import apply, new_game
from vollmond.engine.standard.smart_bot import SmartBot
from vollmond.engine.standard.state import GameState
from vollmond.engine.standard.types import Phase

MAX_ROUNDS_PER_PHASE = 6

# Read after every command, as a module constant (types.py: `Phase.OVER` is slow on 3.11).
_OVER = Phase.OVER


@dataclass(slots=True)
class PlayedGame:
    """A finished bot game: enough to replay it and to count who won."""

    options: GameOptions
    seed: int
    commands: list[Command] = field(default_factory=list)
    state: GameState | None = None


def play_game(
    options: GameOptions,
    seed: int,
    *,
    temperament: Temperament | None = None,
    max_commands: int | None = None,
    smart_seats: frozenset[int] = frozenset(),
) -> PlayedGame:
    """Play one game with a random bot in every seat, until it ends.

    Bots act in a random order; a bot that wants nothing sleeps until an event addressed to
    its seat arrives (a call, the witch's victim) or the phase changes. When every bot sleeps,
    pending call and floor timers fire, then the phase timer, as the runtime's clock would.
    Every bot gets `temperament` (the default one when None). With `max_commands`, play stops
    at the first phase boundary after that many accepted commands, ended or not (tests use it
    to bound a game that would never end). Seats in `smart_seats` are played by the smart
    bot (vollmond.engine.standard.smart_bot), the others by the random bot.
    """
    game = PlayedGame(options, seed)
    result = new_game(options, rng_for(seed, 0))
    state = result.state
    pending: list[Timer[TimerCommand]] = list(result.timers)
    bot_rng = random.Random(f"bots:{seed}")
    bots: list[RandomBot | SmartBot] = [
        SmartBot(seat, bot_rng, temperament)
        if seat in smart_seats
        else RandomBot(seat, bot_rng, temperament)
        for seat in range(1, options.players + 1)
    ]

    awake: set[int] = set()
    commands = game.commands
    to_seats = AudienceKind.SEATS

    def send(command: Command) -> bool:
        nonlocal state
        outcome = apply(state, command, rng_for(seed, len(commands) + 1))
        if isinstance(outcome, Rejection):
            return False
        commands.append(command)
        state = outcome.state
        if outcome.timers:
            pending.extend(outcome.timers)
        for event in outcome.events:
            audience = event.audience
            if audience.kind is to_seats:
                awake.update(audience.seats)
        return True

    while not _is_over(state) and (max_commands is None or len(game.commands) < max_commands):
        phase_seq = state.phase_seq
        awake.clear()
        awake.update(range(1, options.players + 1))
        for _ in range(MAX_ROUNDS_PER_PHASE):
            if not awake:
                break
            for seat in permutation(bot_rng, sorted(awake)):
                if not state.players[seat - 1].alive and not state.calls:
                    # Out of the game and in no call: nothing on its menu (legal.py), so
                    # either bot would say None without drawing; not asked.
                    awake.discard(seat)
                    continue
                command = bots[seat - 1].choose(state)
                if command is None or not send(command):
                    awake.discard(seat)
                if state.phase_seq != phase_seq:  # the phase moved on
                    break
            if state.phase_seq != phase_seq:
                break
        if state.phase_seq == phase_seq:
            _fire_timers(pending, send, state.phase_seq)
    game.state = state
    return game


def _is_over(state: GameState) -> bool:
    return state.phase is _OVER


def _fire_timers(
    pending: list[Timer[TimerCommand]], send: Callable[[Command], bool], phase_seq: int
) -> None:
    """Fire the shorter timers first (calls, floor), then this phase's timeout."""
    others = sorted(
        (t for t in pending if not isinstance(t.command, PhaseTimeout)), key=lambda t: t.delay_s
    )
    pending.clear()
    for timer in others:
        send(timer.command)
    send(PhaseTimeout(phase_seq))
