"""Balance preview for a deck at founding (issue 12): how often each side won in a small,
bounded number of bot games of exactly these options, computed on the server and cached.

Cheap by construction: at most `MAX_GAMES` games, and fewer for bigger tables (a bot game's
cost grows about with the square of its seats: `SQUARE_BUDGET` / seats², at least
`MIN_GAMES`), one computation at a time, in a worker thread so the event
loop keeps serving, and the answer kept per deck (LRU of `CACHE_SIZE`). The seeds are fixed,
so the same deck always shows the same figures. World, durations and call settings do not
change who wins between bots, so they are not part of the cache key.
"""

from __future__ import annotations

import asyncio
import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from vollmond.engine.ruleset import AnyRuleSet
from vollmond.sim import summarise

MAX_GAMES = 40
MIN_GAMES = 4
SQUARE_BUDGET = 96 * 96  # up to 15 players: 40 games; 24 players: 16; 60 players: 4
CACHE_SIZE = 256
FIRST_SEED = 1
IGNORED = ("world", "durations", "calls")


@dataclass(frozen=True, slots=True)
class BalanceReport:
    games: int
    win_rates: dict[str, float]
    rounds: float

    def to_json(self) -> dict[str, Any]:
        return {"games": self.games, "win_rates": self.win_rates, "rounds": self.rounds}


def games_for(players: int) -> int:
    return max(MIN_GAMES, min(MAX_GAMES, SQUARE_BUDGET // max(1, players) ** 2))


def deck_key(ruleset: AnyRuleSet, options: Any) -> str:
    encoded = {k: v for k, v in ruleset.encode_options(options).items() if k not in IGNORED}
    return ruleset.id + ":" + json.dumps(encoded, sort_keys=True)


def simulate_deck(ruleset: AnyRuleSet, options: Any, players: int) -> BalanceReport:
    """Plays the bot games (blocking; call it off the event loop)."""
    count = games_for(players)
    report = summarise(ruleset.simulate(options, FIRST_SEED + i) for i in range(count))
    rates = {side: round(rate, 3) for side, rate in report.win_rates().items()}
    return BalanceReport(report.games, rates, round(report.rounds, 1))


class BalancePreview:
    """The cache and the one-at-a-time gate; `simulations` counts what was really played."""

    def __init__(self, cache_size: int = CACHE_SIZE) -> None:
        self.cache_size = cache_size
        self._cache: OrderedDict[str, BalanceReport] = OrderedDict()
        self._lock = asyncio.Lock()
        self.simulations = 0

    async def preview(self, ruleset: AnyRuleSet, options: Any, players: int) -> BalanceReport:
        key = deck_key(ruleset, options)
        async with self._lock:  # a second request for the same deck waits and hits the cache
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                return hit
            report = await asyncio.to_thread(simulate_deck, ruleset, options, players)
            self.simulations += 1
            self._cache[key] = report
            if len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
            return report
