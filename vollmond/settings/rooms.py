"""What the operators decide about conference rooms (X2, docs/community.md "Conference rooms").

The ``[rooms]`` table of the operator's settings file: how many people a room holds, how long a
chat line may be and how many lines a room keeps for whoever comes in later.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The mixer's matrix grows with the square of the members; beyond this a room is a stage.
MAX_ROOM_SIZE = 64


@dataclass(frozen=True, slots=True)
class RoomSettings:
    """Conference room limits."""

    # People in one room at once, talking and listening alike (a further one hears "full").
    max_members: int = 10
    # Private rooms one person may have open at once (each has its own code).
    private_per_person: int = 2
    # Characters of one chat line in the browser.
    chat_max_chars: int = 300
    # Chat lines a room keeps (shown to whoever comes in); older ones are forgotten.
    chat_kept: int = 50

    def __post_init__(self) -> None:
        if not 2 <= self.max_members <= MAX_ROOM_SIZE:
            raise ValueError(f"max_members must be 2 to {MAX_ROOM_SIZE}")
        for name in ("private_per_person", "chat_max_chars", "chat_kept"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
