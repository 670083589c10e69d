"""Text chat for players without voice: it reaches exactly the room the speaker is in."""

from __future__ import annotations

from vollmond.engine.core import Audience, Rejection
from vollmond.engine.kit import chat
from vollmond.engine.standard.commands import Say
from vollmond.engine.standard.options import MAX_CHAT_CHARS
from vollmond.engine.standard.properties import bonds_known, in_night_room, night_room
from vollmond.engine.standard.state import GameState
from vollmond.engine.standard.tx import Tx
from vollmond.engine.standard.types import CallMode, CallStatus, Phase


def room_of(state: GameState, seat: int) -> tuple[str, Audience] | None:
    """Where the seat's words go now: a call, the night room, the market place, the room of
    the dead ("out"), or nowhere.

    The dead talk among themselves, day and night, and never reach the living (D6; issue 12,
    docs/decisions.md "Chat of the dead"): the room's audience is the dead seats at that
    moment. A player who is the only one dead has nobody to talk to.
    """
    call = state.call_of(seat)
    if call is not None and call.status is CallStatus.ACTIVE:
        return "call", Audience.to(call.caller, call.callee)
    player = state.player(seat)
    if state.phase is Phase.OVER:
        return "market", Audience.public()
    if not player.alive:
        dead = frozenset(p.seat for p in state.players if not p.alive)
        return ("out", Audience.group(dead)) if len(dead) > 1 else None
    if state.phase is Phase.NIGHT:
        if in_night_room(player) and bonds_known(state):
            return "night_room", Audience.group(night_room(state))
        return None
    return "market", Audience.public()


def check_say(state: GameState, cmd: Say) -> Rejection | None:
    return chat.check_say(state, cmd, room_of, MAX_CHAT_CHARS)


def say(tx: Tx, cmd: Say) -> None:
    chat.say(tx, cmd, room_of)


def is_on_market(state: GameState, seat: int) -> bool:
    """Present in the market place: alive, by day, not away in a stumm/halb call."""
    call = state.call_of(seat)
    return (
        state.phase in (Phase.MORNING, Phase.DAY, Phase.VOTE, Phase.OVER)
        and state.player(seat).alive
        and (call is None or call.status is not CallStatus.ACTIVE)
    )


def hears_market_quietly(state: GameState, seat: int) -> bool:
    call = state.call_of(seat)
    return (
        call is not None
        and call.status is CallStatus.ACTIVE
        and call.mode_of(seat) is CallMode.HALB
    )
