"""The classic rule set's bot: it picks among its own seat's legal commands only, so it
never knows more than its seat may (the legal list is built from what the seat may do)."""

from __future__ import annotations

import random

from vollmond.engine.classic.commands import Command, Vote
from vollmond.engine.classic.legal import legal_actions
from vollmond.engine.classic.state import GameState


class RandomBot:
    """Acts at once with a random legal command; by day it raises its hand (keeps it down
    only one time in five), so the village does banish someone."""

    def __init__(self, seat: int, rng: random.Random) -> None:
        self.seat = seat
        self.rng = rng

    def choose(self, state: GameState) -> Command | None:
        options = legal_actions(state, self.seat)
        if not options:
            return None
        hands = [c for c in options if isinstance(c, Vote) and c.target is not None]
        if hands and self.rng.random() < 0.8:
            return self.rng.choice(hands)
        return self.rng.choice(options)
