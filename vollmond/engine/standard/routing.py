"""Who hears whom (DESIGN §2), a pure function of the state.

For each listener: the sources (house numbers) they hear and at what gain. The mixer only
multiplies; all secrecy lives here and is tested without audio.
"""

from __future__ import annotations

from vollmond.engine.kit.routing import (
    DUCKED,
    FULL,
    SPECTATORS,
    Listener,
    RoomKind,
    Route,
    RoutingTable,
    WhereAmI,
    draft,
    freeze,
)
from vollmond.engine.standard.chat import is_on_market
from vollmond.engine.standard.properties import bonds_known, night_room
from vollmond.engine.standard.state import GameState
from vollmond.engine.standard.types import CallMode, CallStatus, Phase

HALB_GAIN = 0.25


def _market(state: GameState) -> tuple[Route, ...]:
    """Speakers in the market place; while someone has the floor, the rest are ducked."""
    floor = state.day.floor if state.day is not None else None
    speakers = [p.seat for p in state.players if is_on_market(state, p.seat)]
    return tuple(Route(s, FULL if floor is None or s == floor else DUCKED) for s in speakers)


def routing(state: GameState) -> RoutingTable:
    table = draft(p.seat for p in state.players)
    by_day = state.phase is not Phase.NIGHT
    market = _market(state) if by_day else ()
    in_call: set[int] = set()
    for call in state.calls:
        if call.status is not CallStatus.ACTIVE:
            continue
        for seat in (call.caller, call.callee):
            in_call.add(seat)
            table[seat].append(Route(call.other(seat), FULL))
            if by_day and call.mode_of(seat) is CallMode.HALB:
                table[seat].extend(
                    Route(r.source, r.gain * HALB_GAIN) for r in market if r.source != seat
                )
    if by_day:
        for player in state.players:
            if player.seat not in in_call:
                # Everyone not away in a call hears the market; the dead listen only (D6).
                table[player.seat].extend(r for r in market if r.source != player.seat)
        table[SPECTATORS].extend(market)
    else:
        room = night_room(state) if bonds_known(state) else frozenset()
        for seat in room - in_call:
            table[seat].extend(
                Route(other, FULL) for other in sorted(room - in_call) if other != seat
            )
    return freeze(table)


__all__ = [
    "DUCKED",
    "FULL",
    "HALB_GAIN",
    "SPECTATORS",
    "Listener",
    "Route",
    "RoutingTable",
    "routing",
]


def place(state: GameState, listener: Listener) -> WhereAmI:
    """The room of a listener, read from the state the routing table is made of.

    Says only what the listener's own view says: a villager at night is "silent", never told
    that a night room exists; a wolf is told he is in the night room.
    """
    by_day = state.phase is not Phase.NIGHT
    if listener == SPECTATORS or not isinstance(listener, int):
        return WhereAmI(RoomKind.MARKET if by_day else RoomKind.SILENT)
    for call in state.calls:
        if call.status is CallStatus.ACTIVE and listener in (call.caller, call.callee):
            halb = by_day and call.mode_of(listener) is CallMode.HALB
            return WhereAmI(RoomKind.HALB if halb else RoomKind.CALL, call.other(listener))
    if by_day:
        return WhereAmI(RoomKind.MARKET)
    if bonds_known(state) and listener in night_room(state):
        return WhereAmI(RoomKind.NIGHT_ROOM)
    return WhereAmI(RoomKind.SILENT)
