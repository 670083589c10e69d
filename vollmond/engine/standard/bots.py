"""The standard rule set's bot: random legal actions, usable for every role and phase.

A rule set brings its own bots (`RuleSet.bots`); channels and the simulator reach this one only
through the protocol.

It decides from the legal commands of its own seat only, so it never learns more than its
seat may know. It picks the kinds of action it wants first, and only then asks for their
legal commands (legal.py), so it does not have to validate every possible command at every
step.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from vollmond.engine.kit.draws import below
from vollmond.engine.standard.commands import Command
from vollmond.engine.standard.legal import GroupKind, MenuKey, menu_key, seat_menu
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


DEFAULT_TEMPERAMENT = Temperament()

Keen = tuple[tuple[float, GroupKind], ...]
"""A menu's kinds, each with how keen a temperament is on it."""

KEEN_TEMPERAMENTS = 64
_KEEN: dict[int, tuple[Temperament, dict[MenuKey, Keen]]] = {}


def _keen_on(temperament: Temperament) -> dict[MenuKey, Keen]:
    """The menus (legal.py `seat_menu`, kept there) with this temperament's keenness, by
    the menu's key, shared by every bot of the temperament (by identity: held here, so an id
    stays its own)."""
    hit = _KEEN.get(id(temperament))
    if hit is None:
        if len(_KEEN) >= KEEN_TEMPERAMENTS:
            # Tests make many; bots made already keep their tables. One step, so a bot game
            # in another thread (balance preview) never sees it half done.
            _KEEN.clear()
        hit = _KEEN[id(temperament)] = (temperament, {})
    return hit[1]


class RandomBot:
    __slots__ = ("_keen", "rng", "seat", "temperament")

    def __init__(
        self, seat: int, rng: random.Random, temperament: Temperament | None = None
    ) -> None:
        self.seat = seat
        self.rng = rng
        self.temperament = temperament or DEFAULT_TEMPERAMENT
        self._keen = _keen_on(self.temperament)

    def choose(self, state: GameState) -> Command | None:
        """One command to give now, or None to wait for the phase to move on.

        Each kind of action on the seat's menu is wanted with the temperament's keenness
        (one draw per kind, none for a keenness of 0 or 1); of the kinds wanted, one is taken
        at random, and of its legal commands one at random; a kind with none is dropped and
        another wanted kind taken. That is the choice of shuffling the kinds, wanting each in
        turn and taking the first with a legal command (each wanted kind with something to
        do is equally likely to come first), but only the wanted kinds are looked at, and
        without making their groups: a kind draws its command straight from the state or,
        for an ability, tries random targets until one is allowed (legal.py `GroupKind`)."""
        # The keenness is kept by the menu's key, so a turn costs one lookup (most turns want
        # nothing).
        seat = self.seat
        key = menu_key(state, seat)
        if key is None:
            return None  # an empty menu: nothing to want, no draws
        kinds = self._keen.get(key)
        if kinds is None:
            keenness = self.temperament.for_kind
            menu = seat_menu(state, seat)  # made (and its spec held) before the key is kept
            kinds = self._keen[key] = tuple((keenness(k.kind), k) for k in menu.kinds)
        rng = self.rng
        draw = rng.random
        wanted: list[GroupKind] | None = None
        for p, kind in kinds:  # a plain loop: most turns want nothing, and make no list
            if p >= 1.0 or (p > 0.0 and draw() < p):
                if wanted is None:
                    wanted = [kind]
                else:
                    wanted.append(kind)
        if wanted is None:
            return None
        player = state.players[seat - 1]
        while wanted:
            chosen = wanted.pop(below(rng, len(wanted))) if len(wanted) > 1 else wanted.pop()
            command = chosen.draw(state, player, rng)
            if command is not None:
                return command
        return None
