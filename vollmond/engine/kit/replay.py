"""Replay: a game is (options, seed, command log). The loop that re-applies a log, shared by
every rule set; each rule set supplies its own `new_game`, `apply` and random streams."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from vollmond.engine.core import Event, Rejection, Result, Rng

S = TypeVar("S")
C = TypeVar("C")

Apply = Callable[[S, C, Rng], "Result[S, Any] | Rejection"]


class ReplayDivergedError(RuntimeError):
    """A logged command was refused on replay: the log or the rules changed."""


@dataclass(frozen=True, slots=True)
class Replayed(Generic[S, C]):
    """The state a log leads to, every event on the way, and the commands applied."""

    state: S
    events: tuple[Event, ...]
    commands: tuple[C, ...] = ()


def replay_log(
    opened: Result[S, Any],
    apply: Apply[S, C],
    commands: Iterable[C],
    stream: Callable[[int], Rng],
) -> Replayed[S, C]:
    """Apply `commands` to the game `opened` (the result of the deal, drawn from stream 0);
    command i (from 1) draws from `stream(i)`. A refused command means the log diverged."""
    state = opened.state
    events = list(opened.events)
    log: list[C] = []
    for index, command in enumerate(commands, start=1):
        outcome = apply(state, command, stream(index))
        if isinstance(outcome, Rejection):
            raise ReplayDivergedError(f"command {index} {command!r} refused: {outcome.code}")
        state = outcome.state
        events.extend(outcome.events)
        log.append(command)
    return Replayed(state, tuple(events), tuple(log))
