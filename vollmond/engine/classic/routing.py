"""Who hears whom (DESIGN §2), following `standard.routing`'s shape: for each listener the
sources they hear and at what gain. By day the market place (the living speak, the dead and
spectators listen only); at night only the wolves' room during the wolves' step (A6)."""

from __future__ import annotations

from vollmond.engine.classic.properties import wolves_room
from vollmond.engine.classic.state import GameState
from vollmond.engine.classic.types import Phase, Step
from vollmond.engine.kit.routing import (
    FULL,
    SPECTATORS,
    Listener,
    Route,
    RoutingTable,
    draft,
    freeze,
)


def routing(state: GameState) -> RoutingTable:
    table = draft(p.seat for p in state.players)
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
    return freeze(table)


__all__ = [
    "FULL",
    "SPECTATORS",
    "Listener",
    "Route",
    "RoutingTable",
    "routing",
]
