"""A transaction: one command's work in progress.

Handlers replace `tx.state` with new immutable values and collect events and timers; the
original state handed to `apply` is never touched, so a rejection changes nothing. Each rule
set subclasses it with its own state and timer-command types.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

from vollmond.engine.core import Audience, Event, Json, Result, Rng, Timer

S = TypeVar("S")
C = TypeVar("C")


@dataclass(slots=True)
class Tx(Generic[S, C]):
    state: S
    rng: Rng
    events: list[Event] = field(default_factory=list)
    timers: list[Timer[C]] = field(default_factory=list)

    def emit(self, code: str, audience: Audience, **params: Json) -> None:
        self.events.append(Event(code, audience, params))

    def after(self, delay_s: float, command: C) -> None:
        self.timers.append(Timer(delay_s, command))

    def result(self) -> Result[S, C]:
        """What the command did: the new state, its events and timers."""
        return Result(self.state, tuple(self.events), tuple(self.timers))
