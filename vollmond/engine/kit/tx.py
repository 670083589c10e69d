"""A transaction: one command's work in progress.

Handlers change `tx.state` and collect events and timers; the original state handed to
`apply` is never touched, so a rejection changes nothing. Each rule set subclasses it with its
own state and timer-command types.

One draft per command: the first `change` (or `put_player`) copies the state handed in; every
later one writes into that copy, which nobody else has seen yet, instead of copying the whole
state again. `result()` freezes it: from then on it is an ordinary immutable value, and a
further change would copy it first. Only the top-level state is a draft; the values inside it
(players, night, day) stay immutable and are replaced, never mutated. Assigning `tx.state`
directly is still allowed and ends the draft (the assigned value may be shared).
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from vollmond.engine.core import (
    Audience,
    Event,
    Json,
    Result,
    Rng,
    Timer,
    builder,
    evolve_with,
    overwrite,
)

S = TypeVar("S")
C = TypeVar("C")

# Made on every command: built field by field, without `__init__` (core.builder).
_event = builder(Event)
_timer = builder(Timer)
_result = builder(Result)


class Tx(Generic[S, C]):
    __slots__ = ("_draft", "events", "rng", "state", "timers")

    def __init__(self, state: S, rng: Rng) -> None:
        self.state = state
        # This transaction's own, unseen copy: a draft while `state` is still this object.
        # A plain attribute (read by the rules at every step), not a property; assigning
        # another value to `state` ends the draft without further bookkeeping.
        self._draft: S | None = None
        self.rng = rng
        self.events: list[Event] = []
        self.timers: list[Timer[C]] = []

    def change(self, **fields: Any) -> None:
        """Set fields of the state: copies it once per command, then writes in place.

        Reads of `tx.state` after a change see it; a local name bound to `tx.state` before
        the first change keeps the old value (the state handed in), after it the draft."""
        state = self.state
        if state is self._draft:
            overwrite(state, fields)
        else:
            self.state = self._draft = evolve_with(state, fields)

    def put_player(self, player: Any) -> None:
        """Replace the player at `player.seat` (seats count from 1 in `players` order)."""
        players = list(self.state.players)  # type: ignore[attr-defined]
        players[player.seat - 1] = player
        self.change(players=tuple(players))

    def emit(self, code: str, audience: Audience, **params: Json) -> None:
        self.events.append(_event(code, audience, params))

    def after(self, delay_s: float, command: C) -> None:
        self.timers.append(_timer(delay_s, command))

    def result(self) -> Result[S, C]:
        """What the command did: the new state (frozen from here on), its events and timers."""
        self._draft = None
        return _result(self.state, tuple(self.events), tuple(self.timers))
