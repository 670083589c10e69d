"""Replay and simulation: a game is (options, seed, command log). Each command gets its own
random stream derived from the seed and its index, so replaying reproduces every lot."""

from __future__ import annotations

import random
from collections.abc import Iterable
from functools import partial

from vollmond.engine.classic.bots import RandomBot
from vollmond.engine.classic.commands import Command, PhaseTimeout
from vollmond.engine.classic.options import ClassicOptions
from vollmond.engine.classic.rules import apply, new_game
from vollmond.engine.classic.state import GameState
from vollmond.engine.classic.types import Phase
from vollmond.engine.core import Rejection
from vollmond.engine.kit.replay import ReplayDivergedError, Replayed, replay_log
from vollmond.engine.kit.rng import DerivedRng

__all__ = [
    "MAX_COMMANDS",
    "Played",
    "ReplayDivergedError",
    "replay",
    "rng_for",
    "simulate",
    "win_rates",
]


def rng_for(seed: int, index: int) -> DerivedRng:
    """Index 0 deals; command i (from 1) gets stream i. Seeding with a string is stable."""
    return DerivedRng("classic", seed, index)


Played = Replayed[GameState, Command]


def replay(options: ClassicOptions, seed: int, commands: Iterable[Command]) -> Played:
    return replay_log(new_game(options, rng_for(seed, 0)), apply, commands, partial(rng_for, seed))


MAX_COMMANDS = 20_000


def simulate(options: ClassicOptions, seed: int) -> Played:
    """One bot game, deterministic per (options, seed): every seat a `RandomBot`; when no
    bot acts, the stage's timer fires. `vollmond simulate --rules classic` is built on this."""
    result = new_game(options, rng_for(seed, 0))
    state = result.state
    events = list(result.events)
    bots = [
        RandomBot(s, random.Random(f"classic-bot:{seed}:{s}"))
        for s in range(1, options.players + 1)
    ]
    order = random.Random(f"classic-order:{seed}")
    commands: list[Command] = []
    while state.phase is not Phase.OVER and len(commands) < MAX_COMMANDS:
        order.shuffle(bots)
        command: Command = PhaseTimeout(state.phase_seq)
        for bot in bots:
            chosen = bot.choose(state)
            if chosen is not None:
                command = chosen
                break
        outcome = apply(state, command, rng_for(seed, len(commands) + 1))
        assert not isinstance(outcome, Rejection), (command, outcome)
        commands.append(command)
        state = outcome.state
        events.extend(outcome.events)
    return Replayed(state, tuple(events), tuple(commands))


def win_rates(options: ClassicOptions, seeds: range) -> dict[str, float]:
    """The share of bot games each side wins over `seeds` (for docs/rulesets.md)."""
    counts: dict[str, int] = {}
    for seed in seeds:
        outcome = simulate(options, seed).state.outcome
        assert outcome is not None
        for side in outcome.sides:
            counts[side.value] = counts.get(side.value, 0) + 1
    return {side: n / len(seeds) for side, n in sorted(counts.items())}
