"""Bot-only games for balance figures and load: `vollmond simulate --rules NAME`.

Speaks only to the `RuleSet` protocol: each rule set plays its own bot games
(`RuleSet.simulate`, deterministic per seed); this module only counts who won.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from vollmond.engine.ruleset import Simulated


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
