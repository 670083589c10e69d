"""The standard rule set's bot: random legal actions, usable for every role and phase.

A rule set brings its own bots (`RuleSet.bots`); channels and the simulator reach this one only
through the protocol.

It decides from the legal candidates of its own seat only, so it never learns more than its
seat may know. It picks a kind of action first, then a valid target through the group's cheap
filter (legal.py), so it does not have to validate every possible command at every step.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from vollmond.engine.kit.draws import shuffle
from vollmond.engine.standard.commands import Command
from vollmond.engine.standard.legal import command_groups
from vollmond.engine.standard.state import GameState

_DEFAULT_KEENNESS: Mapping[str, float] = MappingProxyType(
    {
        "nominate": 0.35,
        "vote": 1.0,
        "interject": 0.03,
        "call": 0.05,
        "answer": 1.0,
        "hang_up": 0.4,
        "toggle": 0.1,
    }
)


@dataclass(frozen=True, slots=True)
class Temperament:
    """How keen the bot is on each kind of action (probability per opportunity); role
    abilities use `ability`."""

    ability: float = 0.9
    keenness: Mapping[str, float] = field(default_factory=lambda: _DEFAULT_KEENNESS)

    def for_kind(self, kind: str) -> float:
        return self.keenness.get(kind, self.ability)


class RandomBot:
    __slots__ = ("keenness", "rng", "seat", "temperament")

    def __init__(
        self, seat: int, rng: random.Random, temperament: Temperament | None = None
    ) -> None:
        self.seat = seat
        self.rng = rng
        self.temperament = temperament or Temperament()
        self.keenness = self.temperament.for_kind

    def choose(self, state: GameState) -> Command | None:
        """One command to give now, or None to wait for the phase to move on.

        The draws are the same in number and order whatever the speed-ups (golden games and
        replays hold them fixed): a list of one or none is not shuffled, which draws nothing
        anyway, and `shuffle` is `random.Random.shuffle`'s draws, inlined."""
        rng = self.rng
        groups = command_groups(state, self.seat)
        if len(groups) > 1:
            shuffle(rng, groups)
        draw, keenness = rng.random, self.keenness
        for group in groups:
            if draw() >= keenness(group.kind):
                continue
            candidates = group.candidates()
            if len(candidates) > 1:
                shuffle(rng, candidates)
            allowed = group.allowed
            for command in candidates:
                if allowed(command):
                    return command
        return None
