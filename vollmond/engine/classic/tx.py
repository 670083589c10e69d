"""A transaction: one command's work in progress. Handlers replace `tx.state` with new
values and collect events and timers; the state handed to `apply` is never touched."""

from __future__ import annotations

from dataclasses import dataclass, field

from vollmond.engine.classic.commands import TimerCommand
from vollmond.engine.classic.state import GameState
from vollmond.engine.core import Audience, Event, Json, Rng, Timer


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
