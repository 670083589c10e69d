"""The shape of a voice routing table (DESIGN §2), the same in every rule set: for each
listener (a seat, or all spectators) the sources they hear and at what gain. The mixer only
multiplies; who hears whom is each rule set's own pure function of its state."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

FULL = 1.0
DUCKED = 0.3
"""The others while someone holds the floor (an interjection, an introduction, a defence)."""
SPECTATORS = "spectators"

Listener = int | str


@dataclass(frozen=True, slots=True)
class Route:
    source: int
    gain: float


RoutingTable = Mapping[Listener, tuple[Route, ...]]
Draft = dict[Listener, list[Route]]


def draft(seats: Iterable[int]) -> Draft:
    """An empty table: every seat and the spectators hear nobody yet."""
    table: Draft = {seat: [] for seat in seats}
    table[SPECTATORS] = []
    return table


def freeze(table: Draft) -> RoutingTable:
    return {listener: tuple(routes) for listener, routes in table.items()}
