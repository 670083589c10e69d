"""Bot-only mayor games, deterministic per seed: balance figures and property tests.

`play_game(options, seed)` seats a `MayorBot` everywhere and plays until the game ends; the
same options and seed always give the same command log, so `vollmond simulate --rules mayor`
can be wired to it and any game replays from (options, seed, commands).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from vollmond.engine.core import Json, Rejection, Timer
from vollmond.engine.mayor.bots import MayorBot, Temperament
from vollmond.engine.mayor.commands import Command, PhaseTimeout, TimerCommand
from vollmond.engine.mayor.options import MayorOptions
from vollmond.engine.mayor.replay import rng_for
from vollmond.engine.mayor.rules import apply, new_game
from vollmond.engine.mayor.state import MayorState

MAX_PASSES_PER_STAGE = 6
"""How often every bot is asked per stage before the stage's timers fire."""


@dataclass(slots=True)
class PlayedGame:
    options: MayorOptions
    seed: int
    commands: list[Command] = field(default_factory=list)
    state: MayorState | None = None


def play_game(
    options: MayorOptions,
    seed: int,
    *,
    temperament: Temperament | None = None,
    bot: type[MayorBot] = MayorBot,
) -> PlayedGame:
    """Play one game with a `bot` in every seat. Bots act in a seeded random order; when no
    bot wants anything, the floor timers fire, then the stage timer, as the runtime's clock
    would."""
    game = PlayedGame(options, seed)
    result = new_game(options, rng_for(seed, 0))
    state = result.state
    pending: list[Timer[TimerCommand]] = list(result.timers)
    bot_rng = random.Random(f"mayor-bots:{seed}")
    bots = [bot(seat, bot_rng, temperament) for seat in range(1, options.players + 1)]

    def send(command: Command) -> bool:
        nonlocal state
        outcome = apply(state, command, rng_for(seed, len(game.commands) + 1))
        if isinstance(outcome, Rejection):
            return False
        game.commands.append(command)
        state = outcome.state
        pending.extend(outcome.timers)
        return True

    while not state.is_over:
        seq = state.phase_seq
        for _ in range(MAX_PASSES_PER_STAGE):
            acted = False
            for player in bot_rng.sample(bots, len(bots)):
                command = player.choose(state)
                if command is not None and send(command):
                    acted = True
                if state.phase_seq != seq or state.is_over:
                    break
            if not acted or state.phase_seq != seq or state.is_over:
                break
        if state.phase_seq == seq and not state.is_over:
            _fire_timers(pending, send, seq)
    game.state = state
    return game


def _fire_timers(
    pending: list[Timer[TimerCommand]], send: Callable[[Command], bool], seq: int
) -> None:
    """The earliest floor timer first (one floor at a time), else the stage's timeout."""
    floors = sorted(
        (t for t in pending if not isinstance(t.command, PhaseTimeout)), key=lambda t: t.delay_s
    )
    pending.clear()
    for timer in floors:
        if send(timer.command):
            return
    send(PhaseTimeout(seq))


@dataclass(frozen=True, slots=True)
class WinRates:
    """Wins per side over a run of seeded games (what `vollmond simulate --rules mayor
    --json` will print)."""

    games: int
    wins: dict[str, int]
    rounds: float

    def to_json(self) -> dict[str, Json]:
        return {"games": self.games, "wins": dict(self.wins), "rounds": self.rounds}


def win_rates(options: MayorOptions, seeds: range) -> WinRates:
    """Play one game per seed and count the winning sides."""
    wins: Counter[str] = Counter()
    rounds = 0
    for seed in seeds:
        state = play_game(options, seed).state
        assert state is not None and state.outcome is not None
        wins[state.outcome.side.value] += 1
        rounds += state.round
    return WinRates(len(seeds), dict(sorted(wins.items())), rounds / max(1, len(seeds)))
