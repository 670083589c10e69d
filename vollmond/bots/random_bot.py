"""A bot that takes random legal actions, usable for every role and phase.

It decides from `legal_actions` only, so it never learns more than its seat may know.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from vollmond.engine.standard.commands import (
    AnswerCall,
    Command,
    HangUp,
    Interject,
    Nominate,
    PlaceCall,
    ToggleCallMode,
    UseAbility,
    Vote,
)
from vollmond.engine.standard.legal import legal_actions
from vollmond.engine.standard.state import GameState


@dataclass(frozen=True, slots=True)
class Temperament:
    """How keen the bot is on each kind of action (probability per opportunity)."""

    ability: float = 0.9
    nominate: float = 0.35
    vote: float = 1.0
    interject: float = 0.03
    call: float = 0.05
    answer: float = 1.0
    hang_up: float = 0.4
    toggle: float = 0.1


def _keenness(cmd: Command, t: Temperament) -> float:
    match cmd:
        case UseAbility():
            return t.ability
        case Nominate():
            return t.nominate
        case Vote():
            return t.vote
        case Interject():
            return t.interject
        case PlaceCall():
            return t.call
        case AnswerCall():
            return t.answer
        case HangUp():
            return t.hang_up
        case ToggleCallMode():
            return t.toggle
        case _:
            return 0.0


class RandomBot:
    def __init__(self, seat: int, rng: random.Random, temperament: Temperament | None = None):
        self.seat = seat
        self.rng = rng
        self.temperament = temperament or Temperament()

    def choose(self, state: GameState) -> Command | None:
        """One command to give now, or None to wait for the phase to move on."""
        options = legal_actions(state, self.seat)
        if not options:
            return None
        kinds: dict[type, list[Command]] = {}
        for cmd in options:
            kinds.setdefault(type(cmd), []).append(cmd)
        for kind in self.rng.sample(list(kinds), len(kinds)):
            group = kinds[kind]
            if self.rng.random() < _keenness(group[0], self.temperament):
                return self.rng.choice(group)
        return None
