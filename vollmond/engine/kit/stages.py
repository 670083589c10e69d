"""Phases as data, the rule-set independent part: the default hooks of a stage, the walk
from one stage of a round to the next available one, and counting quiet rounds.

Each rule set has its own `StageSpec` (its stages, its state, its announcement) and its own
table; what a stage does is its rules. Walking the table is the same everywhere: skip what is
not available now, wrap into a new round at the end, and stop when the game ended on the way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar

from vollmond.engine.core import Audience, Json, builder
from vollmond.engine.kit.commands import PhaseTimeout
from vollmond.engine.kit.tx import Tx


def always(state: object) -> bool:
    return True


def never(state: object) -> bool:
    return False


def nothing(tx: object) -> None:
    return None


X = TypeVar("X", bound=Tx[Any, Any])

_phase_timeout: Callable[[int], PhaseTimeout] = builder(PhaseTimeout)
"""`PhaseTimeout` without its frozen `__init__` (core.builder): one for every stage."""


def walk(
    tx: X,
    position: int,
    length: int,
    *,
    is_available: Callable[[X, int], bool],
    enter: Callable[[X, int], None],
    skip: Callable[[X, int], bool],
    new_round: Callable[[X], bool],
) -> None:
    """Enter the first stage available at or after `position` in a round of `length` stages.

    At the end of the table `new_round` starts the next round (True: the game ended there);
    a stage not available runs `skip` (True: the game ended there) and the walk goes on.
    """
    while True:
        if position == length:
            if new_round(tx):
                return
            position = 0
        if is_available(tx, position):
            enter(tx, position)
            return
        if skip(tx, position):
            return
        position += 1


class _StalemateOptions(Protocol):
    @property
    def stalemate_rounds(self) -> int: ...


class RoundState(Protocol):
    """What counting rounds asks of a state."""

    @property
    def options(self) -> _StalemateOptions: ...

    @property
    def round(self) -> int: ...

    @property
    def quiet_rounds(self) -> int: ...

    @property
    def deaths_this_round(self) -> int: ...


R = TypeVar("R", bound=RoundState)


def next_round(tx: Tx[R, Any]) -> bool:
    """Count the round that ends: a round in which nobody left the game is quiet. Returns
    whether the quiet rounds reached the options' `stalemate_rounds` (the table has stalled;
    what that means is the rule set's)."""
    state = tx.state
    quiet = state.quiet_rounds + 1 if state.deaths_this_round == 0 else 0
    tx.change(round=state.round + 1, quiet_rounds=quiet, deaths_this_round=0)
    return quiet >= state.options.stalemate_rounds


def announce(
    tx: Tx[R, Any],
    code: str,
    seq: int,
    seconds: float,
    params: Mapping[str, Json],
    *,
    timed: bool = True,
) -> None:
    """Tell everyone a stage has begun (its round, sequence number and length, plus the rule
    set's own `params`) and, for a timed stage, ask the runtime for its timer."""
    tx.emit(code, Audience.public(), round=tx.state.round, seq=seq, seconds=seconds, **params)
    if timed:
        tx.after(seconds, _phase_timeout(seq))
