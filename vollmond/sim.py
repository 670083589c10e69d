"""Bot-only games for balance figures and load: `vollmond simulate --rules NAME`.

Speaks only to the `RuleSet` protocol: each rule set plays its own bot games
(`RuleSet.simulate`, deterministic per seed); this module only counts who won.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from vollmond.engine.ruleset import SeatsBots, Simulated


@dataclass(frozen=True, slots=True)
class SimulationReport:
    games: int
    wins: dict[str, int]
    rounds: float
    commands: int

    def win_rates(self) -> dict[str, float]:
        return {side: n / max(1, self.games) for side, n in self.wins.items()}


def summarise(games: Iterable[Simulated]) -> SimulationReport:
    """Wins per side (a game won by two sides counts for both), mean rounds, all commands."""
    wins: Counter[str] = Counter()
    rounds = commands = count = 0
    for game in games:
        wins.update(game.winners)
        rounds += game.rounds
        commands += game.commands
        count += 1
    return SimulationReport(count, dict(sorted(wins.items())), rounds / max(1, count), commands)


@dataclass(frozen=True, slots=True)
class PitReport:
    """Smart against random bots at the same tables: how often a seat of each kind won."""

    games: int
    smart_seats: int
    smart_wins: int
    random_seats: int
    random_wins: int

    @property
    def smart_rate(self) -> float:
        return self.smart_wins / max(1, self.smart_seats)

    @property
    def random_rate(self) -> float:
        return self.random_wins / max(1, self.random_seats)


def pit(ruleset: SeatsBots, options: Any, players: int, games: int, seed: int) -> PitReport:
    """Play `games` games in which a random half of the seats (drawn per game, so both kinds
    play every role equally often) are the rule set's "smart" bots and the rest its "random"
    bots; count each seat's win (its side won)."""
    smart_seats = smart_wins = random_seats = random_wins = 0
    for i in range(games):
        draw = random.Random(f"pit:{seed + i}")
        seats = range(1, players + 1)
        smart = frozenset(draw.sample(list(seats), players // 2))
        bots = {seat: "smart" if seat in smart else "random" for seat in seats}
        game = ruleset.simulate_seated(options, seed + i, bots)
        for seat in seats:
            won = seat in game.winners
            if seat in smart:
                smart_seats += 1
                smart_wins += won
            else:
                random_seats += 1
                random_wins += won
    return PitReport(games, smart_seats, smart_wins, random_seats, random_wins)
