"""The areas a ban can cover (O5): one world, private rounds, listen-only, conference rooms,
mailbox, friends, the web, or everything.

An area is written as text in the database and on the command line: ``world:werwolf``,
``private``, ..., ``all``.

>>> Area.parse("world:vampir").covers(Area.in_world("vampir"))
True
>>> Area.parse("all").covers(MAILBOX)
True
>>> Area.parse("private").covers(Area.in_world("vampir"))
False
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from vollmond.moderation.errors import InvalidAreaError

_WORLD_ID = re.compile(r"[a-z0-9_-]{1,64}")


class AreaKind(enum.StrEnum):
    WORLD = "world"
    PRIVATE = "private"
    SPECTATE = "spectate"
    CONFERENCE = "conference"
    MAILBOX = "mailbox"
    FRIENDS = "friends"
    WEB = "web"
    ALL = "all"


@dataclass(frozen=True, slots=True)
class Area:
    """One area; `world` is set exactly for :attr:`AreaKind.WORLD`."""

    kind: AreaKind
    world: str | None = None

    def __post_init__(self) -> None:
        if (self.kind is AreaKind.WORLD) != (self.world is not None):
            raise InvalidAreaError("a world area names its world, no other area does")
        if self.world is not None and not _WORLD_ID.fullmatch(self.world):
            raise InvalidAreaError(f"not a world id: {self.world!r}")

    @staticmethod
    def in_world(world_id: str) -> Area:
        """The area of one world's games (a ban "nur Vampir")."""
        return Area(AreaKind.WORLD, world_id)

    @staticmethod
    def parse(text: str) -> Area:
        """``world:<id>`` or one of the plain area names; raises InvalidAreaError."""
        cleaned = text.strip().lower()
        name, _, world = cleaned.partition(":")
        try:
            kind = AreaKind(name)
        except ValueError:
            known = ", ".join(
                ["world:<id>", *(k.value for k in AreaKind if k is not AreaKind.WORLD)]
            )
            raise InvalidAreaError(f"unknown area {text!r}; known: {known}") from None
        return Area(kind, world or None)

    def covers(self, asked: Area) -> bool:
        """Whether a ban on this area refuses `asked`: `all` covers every area."""
        return self.kind is AreaKind.ALL or self == asked

    def __str__(self) -> str:
        return f"world:{self.world}" if self.world is not None else self.kind.value


# Shorthands for the entry paths: ``access(sessions, subject, WEB, now=now)``.
PRIVATE = Area(AreaKind.PRIVATE)
SPECTATE = Area(AreaKind.SPECTATE)
CONFERENCE = Area(AreaKind.CONFERENCE)
MAILBOX = Area(AreaKind.MAILBOX)
FRIENDS = Area(AreaKind.FRIENDS)
WEB = Area(AreaKind.WEB)
ALL = Area(AreaKind.ALL)
