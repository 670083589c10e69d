"""One command's work in progress: new immutable states, events and timers collected.

The state handed to `apply` is never touched, so a rejection changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from vollmond.engine.core import Audience, Event, Json, Rng, Timer
from vollmond.engine.mayor.commands import TimerCommand
from vollmond.engine.mayor.state import MayorState


@dataclass(slots=True)
class Tx:
    state: MayorState
    rng: Rng
    events: list[Event] = field(default_factory=list)
    timers: list[Timer[TimerCommand]] = field(default_factory=list)

    def emit(self, code: str, audience: Audience, **params: Json) -> None:
        self.events.append(Event(code, audience, params))

    def after(self, delay_s: float, command: TimerCommand) -> None:
        self.timers.append(Timer(delay_s, command))
