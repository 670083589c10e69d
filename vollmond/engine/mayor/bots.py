"""The mayor rule set's bot: it plays only legal moves and decides only from its own view.

`choose` projects the state for its own seat (`view.project`) and picks among the legal
commands listed there, so it can know nothing its seat may not know. A little sense keeps
games short and lifelike: a Nazi follows a teammate's choice of victim (so the team agrees),
spares teammates when accusing and voting, and lets its candidacy and floors be brief.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass

from vollmond.engine.core import Viewer
from vollmond.engine.mayor.commands import (
    Accuse,
    ChooseVictim,
    Command,
    Stand,
    Vote,
    YieldFloor,
)
from vollmond.engine.mayor.state import MayorState
from vollmond.engine.mayor.view import MayorView, project


@dataclass(frozen=True, slots=True)
class Temperament:
    """Probabilities per opportunity."""

    stand: float = 0.35
    accuse: float = 0.4
    yield_floor: float = 0.5


class MayorBot:
    def __init__(
        self, seat: int, rng: random.Random, temperament: Temperament | None = None
    ) -> None:
        self.seat = seat
        self.rng = rng
        self.temperament = temperament or Temperament()

    def choose(self, state: MayorState) -> Command | None:
        """One command to give now, or None to wait for something to change."""
        return self.decide(project(state, Viewer.player(self.seat)))

    def decide(self, view: MayorView) -> Command | None:
        me = view.me
        if me is None or not me.legal:
            return None
        legal = list(me.legal)
        team = set(me.team) - {self.seat}
        if any(isinstance(c, YieldFloor) for c in legal):
            return (
                YieldFloor(self.seat) if self.rng.random() < self.temperament.yield_floor else None
            )
        stands = [c for c in legal if isinstance(c, Stand)]
        if stands:
            keen = self.rng.random() < self.temperament.stand
            return next(c for c in stands if c.stand is keen)
        votes = [c for c in legal if isinstance(c, Vote)]
        if votes:
            return self._pick(votes, avoid=team | {self.seat})
        accusations = [c for c in legal if isinstance(c, Accuse)]
        if accusations:
            if self.rng.random() >= self.temperament.accuse:
                return None
            return self._pick(accusations, avoid=team)
        victims = [c for c in legal if isinstance(c, ChooseVictim)]
        if victims and view.night_room is not None:
            return self._follow_the_first(view.night_room.choices, victims)
        return None

    def _follow_the_first(
        self, choices: Mapping[int, int], victims: list[ChooseVictim]
    ) -> Command | None:
        """Point where the lowest-numbered Nazi who has chosen points (so the team agrees
        and nobody chases anybody); the first to choose picks at random."""
        if not choices:
            return self.rng.choice(victims)
        target = choices[min(choices)]
        if choices.get(self.seat) == target:
            return None
        follow = ChooseVictim(self.seat, target)
        return follow if follow in victims else None

    def _pick(self, options: list[Vote] | list[Accuse], avoid: set[int]) -> Command:
        preferred = [c for c in options if c.target not in avoid]
        return self.rng.choice(preferred or options)
