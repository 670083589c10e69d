"""Text chat, the rule-set independent part: a message goes to exactly the room its speaker
is in now. Which room that is (market place, night room, the out players, a call) is each
rule set's `room_of`; checking the text and emitting the chat event are the same everywhere.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from vollmond.engine.core import Audience, Rejection
from vollmond.engine.kit.commands import Say
from vollmond.engine.kit.tx import Tx

CHAT = "chat"
TEXT_EMPTY = "text_empty"
TEXT_TOO_LONG = "text_too_long"
NOBODY_HEARS = "nobody_hears"

S = TypeVar("S")

Room = tuple[str, Audience]
"""A room's name and the seats (or everyone) who hear it."""
RoomOf = Callable[[S, int], Room | None]


def check_say(state: S, cmd: Say, room_of: RoomOf[S], limit: int) -> Rejection | None:
    """Refuse empty or over-long text, and text that nobody would hear."""
    text = cmd.text.strip()
    if not text:
        return Rejection(TEXT_EMPTY)
    if len(text) > limit:
        return Rejection(TEXT_TOO_LONG, {"limit": limit})
    if room_of(state, cmd.actor) is None:
        return Rejection(NOBODY_HEARS)
    return None


def say(tx: Tx[S, Any], cmd: Say, room_of: RoomOf[S]) -> None:
    found = room_of(tx.state, cmd.actor)
    assert found is not None
    room, audience = found
    tx.emit(CHAT, audience, room=room, seat=cmd.actor, text=cmd.text.strip())
