"""One projection for every channel: what a viewer may know of the game, and nothing more.

Channels never filter secrets themselves; if it is not in `view`, they cannot leak it.
"""

from __future__ import annotations

from collections.abc import Iterable

from vollmond.engine.core import Event, Json, Viewer, ViewerKind
from vollmond.engine.standard.chat import hears_market_quietly, is_on_market
from vollmond.engine.standard.legal import legal_actions
from vollmond.engine.standard.queries import (
    bonded_partners,
    bonds_known,
    in_night_room,
    night_room,
    spec_of,
)
from vollmond.engine.standard.state import DayState, GameState, Player
from vollmond.engine.standard.types import ActionKind, Phase, Trait


def known_roles(state: GameState, viewer: Viewer) -> dict[int, str]:
    """Roles the viewer may see: revealed ones, their own, their team's, their twin's."""
    over = state.phase is Phase.OVER
    known = {p.seat: p.role.value for p in state.players if p.revealed or over}
    if viewer.kind is not ViewerKind.PLAYER or viewer.seat is None:
        return known
    me = state.player(viewer.seat)
    known[me.seat] = me.role.value
    if not bonds_known(state):
        return known
    if in_night_room(me):
        for seat in night_room(state, living_only=False):
            known[seat] = state.player(seat).role.value
    if Trait.BONDED_PAIR in spec_of(me).traits:
        for p in state.players:
            if p.role is me.role:
                known[p.seat] = p.role.value
    return known


def _known_lovers(state: GameState, viewer: Viewer) -> set[int]:
    if state.phase is Phase.OVER:
        return {p.seat for p in state.players if p.lover}
    if viewer.seat is not None and viewer.kind is ViewerKind.PLAYER:
        me = state.player(viewer.seat)
        if me.lover:
            return {p.seat for p in state.players if p.lover}
    return set()


def _seats(state: GameState, viewer: Viewer) -> list[Json]:
    roles = known_roles(state, viewer)
    lovers = _known_lovers(state, viewer)
    by_day = state.phase is not Phase.NIGHT
    return [
        {
            "seat": p.seat,
            "alive": p.alive,
            "role": roles.get(p.seat),
            "lover": p.seat in lovers,
            "present": by_day and is_on_market(state, p.seat),
        }
        for p in state.players
    ]


def _me(state: GameState, player: Player) -> dict[str, Json]:
    partners = bonded_partners(state, player)
    if not bonds_known(state):
        partners = frozenset(s for s in partners if player.lover and state.player(s).lover)
    call = state.call_of(player.seat)
    me: dict[str, Json] = {
        "seat": player.seat,
        "role": player.role.value,
        "alive": player.alive,
        "memory": dict(player.memory),
        "facts": [
            {"kind": f.kind.value, "round": f.round, "subject": f.subject, "evil": f.evil}
            for f in player.facts
        ],
        "partners": sorted(partners),
        "call": None,
        "hears_market_quietly": hears_market_quietly(state, player.seat),
        "legal": [_describe(cmd) for cmd in legal_actions(state, player.seat)],
    }
    if call is not None:
        me["call"] = {
            "id": call.id,
            "kind": call.kind.value,
            "with": call.other(player.seat),
            "incoming": call.callee == player.seat,
            "status": call.status.value,
            "mode": call.mode_of(player.seat).value,
        }
    return me


def _describe(cmd: object) -> Json:
    fields = getattr(cmd, "__slots__", ())
    out: dict[str, Json] = {"type": type(cmd).__name__}
    for name in fields:
        value = getattr(cmd, name)
        out[name] = value.value if hasattr(value, "value") else value
    return out


def _night_room(state: GameState, player: Player) -> Json:
    night = state.night
    if night is None or not in_night_room(player) or not player.alive or not bonds_known(state):
        return None
    return {
        "members": sorted(night_room(state)),
        "votes": {str(v): t for v, t in sorted(night.evil_votes.items())},
        "victim_locked": night.victim_locked,
        "victim": night.victim if night.victim_locked else None,
    }


def _witch_victim(state: GameState, player: Player) -> int | None:
    night = state.night
    holds_heal = spec_of(player).ability(ActionKind.HEAL) is not None
    if night is None or not holds_heal or not night.victim_locked or not player.alive:
        return None
    return night.victim


def _waiting_for(state: GameState, day: DayState, my_seat: int | None) -> list[int]:
    """Who has not voted yet. A vote-giver looks like anyone still to vote, except to the
    two who know of the transfer (S15)."""
    known = {g for g, to in day.transfers.items() if my_seat in (g, to)}
    waiting = {p.seat for p in state.living() if p.seat not in known} - day.votes.keys()
    return sorted(waiting)


def _day(state: GameState, viewer: Viewer) -> Json:
    day = state.day
    if day is None:
        return None
    my_seat = viewer.seat if viewer.kind is ViewerKind.PLAYER else None
    transfers = {str(giver): to for giver, to in day.transfers.items() if my_seat in (giver, to)}
    return {
        "nominations": {str(by): n for by, n in sorted(day.nominations.items())},
        "nominees": list(day.nominees),
        "voted": sorted(day.votes),
        "waiting_for": _waiting_for(state, day, my_seat) if state.phase is Phase.VOTE else [],
        "floor": day.floor,
        "my_transfers": transfers,
    }


def view(state: GameState, viewer: Viewer) -> dict[str, Json]:
    """Everything `viewer` may know right now, as JSON-ready data."""
    out: dict[str, Json] = {
        "phase": state.phase.value,
        "round": state.round,
        "phase_seq": state.phase_seq,
        "step": state.night.step.value if state.night is not None else None,
        "world": state.options.world,
        "options": state.options.to_json(),
        "seats": _seats(state, viewer),
        "day": _day(state, viewer),
        "instant_kill_used": state.instant_kill_used,
        "outcome": None,
        "me": None,
        "night_room": None,
        "witch_victim": None,
    }
    if state.outcome is not None:
        out["outcome"] = {
            "sides": [s.value for s in state.outcome.sides],
            "winners": sorted(state.outcome.winners),
        }
    if viewer.kind is ViewerKind.PLAYER and viewer.seat is not None:
        player = state.player(viewer.seat)
        out["me"] = _me(state, player)
        out["night_room"] = _night_room(state, player)
        out["witch_victim"] = _witch_victim(state, player)
    return out


def visible_events(events: Iterable[Event], viewer: Viewer) -> list[Event]:
    """The part of an event stream that `viewer` may receive."""
    return [e for e in events if e.audience.includes(viewer)]
