"""Text chat: it reaches exactly the room the speaker is in (B6 for the out players)."""

from __future__ import annotations

from vollmond.engine.core import Audience, Rejection
from vollmond.engine.kit import chat
from vollmond.engine.mayor.commands import Say
from vollmond.engine.mayor.options import MAX_CHAT_CHARS
from vollmond.engine.mayor.state import MayorState
from vollmond.engine.mayor.tx import Tx
from vollmond.engine.mayor.types import Stage


def room_of(state: MayorState, seat: int) -> tuple[str, Audience] | None:
    """Where the seat's words go now.

    - after the game: everyone (the market place, the out players included);
    - out of the game (dead or in prison): only the others who are out (B6: never the living);
    - at night: a living Nazi speaks in the night room; everyone else sleeps;
    - by day: the living speak in the market place.
    """
    if state.is_over:
        return "market", Audience.public()
    player = state.player(seat)
    if not player.alive:
        return "out", Audience.group(state.out_seats())
    if state.stage is Stage.NIGHT:
        if player.role.night_room and state.bonds_known:
            return "night_room", Audience.group(state.night_room())
        return None
    return "market", Audience.public()


def check_say(state: MayorState, cmd: Say) -> Rejection | None:
    return chat.check_say(state, cmd, room_of, MAX_CHAT_CHARS)


def say(tx: Tx, cmd: Say) -> None:
    chat.say(tx, cmd, room_of)
