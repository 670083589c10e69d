"""The driver under every rule set's scenario language: a game played command by command
from a script of steps (`"vote 1,2 -> 3; timeout"`). Each rule set's scenario only says how
a step reads (`parse`) and what to ask of its state; sending, running a script and expecting
a refusal that changes nothing are the same everywhere."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Generic, Self, TypeVar

from vollmond.engine.core import Event, Rejection, Result, Rng, Timer

S = TypeVar("S")
C = TypeVar("C")


def states_along(
    opened: Result[S, Any],
    apply: Callable[[S, C, Rng], Result[S, Any] | Rejection],
    commands: Iterable[C],
    stream: Callable[[int], Rng],
) -> list[S]:
    """Every state of a logged game from the deal on (command i draws from `stream(i)`);
    each logged command must be accepted."""
    states = [opened.state]
    for index, command in enumerate(commands, start=1):
        outcome = apply(states[-1], command, stream(index))
        assert not isinstance(outcome, Rejection), (command, outcome)
        states.append(outcome.state)
    return states


class ScenarioError(AssertionError):
    """A step was refused or could not be parsed."""


class ScriptedGame(Generic[S, C]):
    """`state` is the game now; `events` all events so far, `timers` every timer asked for."""

    def __init__(
        self,
        opened: Result[S, Any],
        apply: Callable[[S, C, Rng], Result[S, Any] | Rejection],
        rng: Rng,
    ) -> None:
        self._apply = apply
        self.rng = rng
        self.state: S = opened.state
        self.events: list[Event] = list(opened.events)
        self.timers: list[Timer[Any]] = list(opened.timers)

    def send(self, command: C) -> Rejection | None:
        outcome = self._apply(self.state, command, self.rng)
        if isinstance(outcome, Rejection):
            return outcome
        self.state = outcome.state
        self.events.extend(outcome.events)
        self.timers.extend(outcome.timers)
        return None

    def run(self, script: str) -> Self:
        """Play the steps in order; a refused step fails the test."""
        for step in filter(None, (s.strip() for s in script.split(";"))):
            for command in self.parse(step):
                refused = self.send(command)
                if refused is not None:
                    raise ScenarioError(f"{step!r} refused: {refused.code} {dict(refused.params)}")
        return self

    def refused(self, step: str) -> str:
        """Expect `step` to be refused: checks that it changed nothing, returns the code."""
        before = self.state
        for command in self.parse(step):
            refused = self.send(command)
            if refused is not None:
                assert self.state is before, "a rejection must not change the state"
                return refused.code
        raise ScenarioError(f"{step!r} was accepted")

    def parse(self, step: str) -> list[C]:
        raise NotImplementedError

    def codes(self, events: list[Event] | None = None) -> list[str]:
        return [e.code for e in (self.events if events is None else events)]

    def of(self, code: str) -> list[Event]:
        return [e for e in self.events if e.code == code]
