"""Who hears whom (DESIGN §2), following `standard.routing`'s shape: for each listener the
sources they hear and at what gain. By day the market place (the living speak, the dead and
spectators listen only); at night only the wolves' room during the wolves' step (A6)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from vollmond.engine.classic.properties import wolves_room
from vollmond.engine.classic.state import GameState
from vollmond.engine.classic.types import Phase, Step

FULL = 1.0
SPECTATORS = "spectators"

Listener = int | str


@dataclass(frozen=True, slots=True)
class Route:
    source: int
    gain: float


RoutingTable = Mapping[Listener, tuple[Route, ...]]


def routing(state: GameState) -> RoutingTable:
    table: dict[Listener, list[Route]] = {p.seat: [] for p in state.players}
    table[SPECTATORS] = []
    if state.phase is Phase.NIGHT:
        if state.step is Step.WOLVES:
            room = wolves_room(state)
            for seat in room:
                table[seat].extend(Route(o, FULL) for o in sorted(room) if o != seat)
    else:
        speakers = [p.seat for p in state.players if p.alive]
        for player in state.players:
            table[player.seat].extend(Route(s, FULL) for s in speakers if s != player.seat)
        table[SPECTATORS].extend(Route(s, FULL) for s in speakers)
    return {listener: tuple(routes) for listener, routes in table.items()}
