"""Who hears whom (DESIGN §2) in a mayor game, a pure function of the state.

The same table shape as the standard rule set (listener → routes of source and gain):

- by day the living speak in the market place; a timed floor (an introduction, a defence)
  leaves the speaker at full gain and ducks the others, like the standard interjection;
- at night the living Nazis hear each other in their room; everyone else sleeps;
- the out players (dead or in prison) hear the market place by day and each other at any
  time, and no living player ever hears them (B6);
- spectators hear the market place only; after the game everyone hears everyone.
"""

from __future__ import annotations

from vollmond.engine.kit.routing import (
    DUCKED,
    FULL,
    SPECTATORS,
    Listener,
    Route,
    RoutingTable,
    draft,
    freeze,
)
from vollmond.engine.mayor.state import MayorState
from vollmond.engine.mayor.types import Stage


def _market(state: MayorState) -> tuple[Route, ...]:
    floor = state.floor.speaker if state.floor is not None else None
    return tuple(
        Route(p.seat, FULL if floor is None or p.seat == floor else DUCKED)
        for p in state.players
        if p.alive
    )


def routing(state: MayorState) -> RoutingTable:
    table = draft(p.seat for p in state.players)
    if state.is_over:
        everyone = [p.seat for p in state.players]
        for seat in everyone:
            table[seat] = [Route(s, FULL) for s in everyone if s != seat]
        table[SPECTATORS] = [Route(s, FULL) for s in everyone]
        return freeze(table)
    out = sorted(state.out_seats())
    for seat in out:
        table[seat].extend(Route(s, FULL) for s in out if s != seat)
    if state.stage is Stage.NIGHT:
        room = sorted(state.night_room()) if state.bonds_known else []
        for seat in room:
            table[seat].extend(Route(s, FULL) for s in room if s != seat)
    else:
        market = _market(state)
        for player in state.players:
            table[player.seat].extend(r for r in market if r.source != player.seat)
        table[SPECTATORS].extend(market)
    return freeze(table)


__all__ = [
    "DUCKED",
    "FULL",
    "SPECTATORS",
    "Listener",
    "Route",
    "RoutingTable",
    "routing",
]
