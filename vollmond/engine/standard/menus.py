"""The long parts of the seats' menus, built once per state and shared by the seats.

A nomination or a call may go to almost anyone: a table of N seats gives each seat a menu of
about N of each, and a fan-out asks for every seat's menu of the same state. What the
targets have in common (alive, not yet nominated) is worked out here once per state; a seat
then only drops itself. The commands and their JSON (`describe`) are interned per seat and
target, so a seat's menu is a selection of existing objects, not N new ones per view.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any

from vollmond.engine.core import Json
from vollmond.engine.kit.kept import MISSING, Kept
from vollmond.engine.standard.commands import Command
from vollmond.engine.standard.state import GameState


def describe(cmd: object) -> Json:
    """A command as the view's `legal` list shows it: its type name and its fields."""
    fields = getattr(cmd, "__slots__", ())
    out: dict[str, Json] = {"type": type(cmd).__name__}
    for name in fields:
        value = getattr(cmd, name)
        out[name] = value.value if hasattr(value, "value") else value
    return out


class Targets:
    """Seats (in seat order) that pass a check that does not depend on the actor, with a
    C-speed picker of one seat's interned rows for them."""

    __slots__ = ("_pick", "_position", "seats")

    def __init__(self, seats: tuple[int, ...]) -> None:
        self.seats = seats
        self._position = {seat: index for index, seat in enumerate(seats)}
        self._pick: Callable[[Sequence[Any]], Any] | None = itemgetter(*seats) if seats else None

    def pick(self, rows: Sequence[Any], without: int = -1) -> tuple[Any, ...]:
        """`rows[t]` for every seat t here except `without` (the actor), in order."""
        if self._pick is None:
            return ()
        picked = self._pick(rows)
        if len(self.seats) == 1:
            picked = (picked,)
        index = self._position.get(without)
        if index is None:
            return tuple(picked)
        return tuple(picked[:index]) + tuple(picked[index + 1 :])


class SharedTargets:
    """Per state: the living seats (calls), the living seats nobody has nominated yet, and
    the ballot (0 for abstaining, then the nominees). Each is worked out when first asked:
    a state shows only some of them (nominations by day, the ballot at the vote), and a bot
    game asks them of a new state after nearly every command."""

    __slots__ = ("_ballot", "_living", "_nominable", "_state")

    def __init__(self, state: GameState) -> None:
        self._state = state
        self._living: Targets | None = None
        self._nominable: Targets | None = None
        self._ballot: Targets | None = None

    @property
    def living(self) -> Targets:
        if self._living is None:
            self._living = Targets(tuple(p.seat for p in self._state.players if p.alive))
        return self._living

    @property
    def nominable(self) -> Targets:
        if self._nominable is None:
            day = self._state.day
            nominees = day.nominees if day is not None else ()
            seats = tuple(seat for seat in self.living.seats if seat not in nominees)
            self._nominable = Targets(seats)
        return self._nominable

    @property
    def ballot(self) -> Targets:
        if self._ballot is None:
            day = self._state.day
            self._ballot = Targets((0, *day.nominees) if day is not None else (0,))
        return self._ballot


SHARED_STATES = 64
_by_state: Kept[GameState, SharedTargets] = Kept(SHARED_STATES)


def shared_targets(state: GameState) -> SharedTargets:
    """Kept by the state's identity, like the view's shared part (view.py, `_shared`)."""
    hit = _by_state.get(state)
    if hit is not MISSING:
        return hit
    return _by_state.put(state, SharedTargets(state))


class Interned:
    """One command type's commands of one actor to every target, and their JSON, made once
    and shared by every game (index = target seat; 0 unused). Commands are immutable; the
    JSON rows are shared by every view that lists them, so no reader may change them."""

    __slots__ = ("_make", "_rows")

    def __init__(self, make: Callable[[int, int], Command]) -> None:
        self._make = make
        self._rows: dict[int, tuple[list[Command], list[Json]]] = {}

    def rows(self, actor: int, seats: int) -> tuple[list[Command], list[Json]]:
        """The actor's commands and their JSON for targets 0..`seats` (at least)."""
        rows = self._rows.get(actor)
        if rows is None or len(rows[0]) <= seats:
            # Made whole, then stored at once: another thread sees the old rows or the new.
            commands = [self._make(actor, target) for target in range(seats + 1)]
            rows = (commands, [describe(cmd) for cmd in commands])
            self._rows[actor] = rows
        return rows
