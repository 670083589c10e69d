"""The shape of a voice routing table (DESIGN §2), the same in every rule set: for each
listener (a seat, or all spectators) the sources they hear and at what gain. The mixer only
multiplies; who hears whom is each rule set's own pure function of its state."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum

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


class RoomKind(StrEnum):
    """Where a listener's voice is, as a page names it ("Marktplatz", "Wolfsraum", ...)."""

    MARKET = "market"
    NIGHT_ROOM = "night_room"
    CALL = "call"
    HALB = "halb"
    SILENT = "silent"


@dataclass(frozen=True, slots=True)
class WhereAmI:
    """The room a listener is in; ``other`` is the house at the other end of a call."""

    kind: RoomKind
    other: int | None = None


def place_by_routes(table: RoutingTable, listener: Listener, *, night: bool) -> WhereAmI:
    """A listener's room read from their own routes only, for a rule set that names no rooms
    of its own: nobody heard is silence; anybody heard is the market by day and the night
    room at night. It can tell a listener nothing the routes they hear do not already say."""
    others = [r for r in table.get(listener, ()) if r.source != listener and r.gain > 0]
    if not others:
        return WhereAmI(RoomKind.SILENT)
    return WhereAmI(RoomKind.NIGHT_ROOM if night else RoomKind.MARKET)
