"""A transaction: one command's work in progress.

Handlers replace `tx.state` with new immutable values and collect events and timers; the
original state handed to `apply` is never touched, so a rejection changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from vollmond.engine.core import Audience, Event, Json, Rng, Timer
from vollmond.engine.standard.commands import TimerCommand
from vollmond.engine.standard.state import GameState


@dataclass(slots=True)
class Tx:
    state: GameState
    rng: Rng
    events: list[Event] = field(default_factory=list)
    timers: list[Timer[TimerCommand]] = field(default_factory=list)

    def emit(self, code: str, audience: Audience, **params: Json) -> None:
        self.events.append(Event(code, audience, params))

    def after(self, delay_s: float, command: TimerCommand) -> None:
        self.timers.append(Timer(delay_s, command))
