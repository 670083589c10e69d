"""Seat helpers every rule set's state has: seats are numbered from 1 in `players` order."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Generic, Protocol, Self, TypeVar

from vollmond.engine.core import evolve


class Seated(Protocol):
    """A player at a seat, in the game or out of it."""

    @property
    def seat(self) -> int: ...

    @property
    def alive(self) -> bool: ...


P = TypeVar("P", bound=Seated)


class SeatedState(Protocol):
    """What the shared command skeleton asks of a state."""

    def player(self, seat: int) -> Seated: ...

    def has_seat(self, seat: int) -> bool: ...


class Seats(Generic[P]):
    """Mixed into a rule set's frozen, slotted state dataclass that has `players`."""

    __slots__ = ()
    players: tuple[P, ...]

    def player(self, seat: int) -> P:
        return self.players[seat - 1]

    def has_seat(self, seat: int) -> bool:
        return 1 <= seat <= len(self.players)

    def living(self) -> Iterator[P]:
        return (p for p in self.players if p.alive)

    def with_player(self, player: P) -> Self:
        players = list(self.players)
        players[player.seat - 1] = player
        return evolve(self, players=tuple(players))
