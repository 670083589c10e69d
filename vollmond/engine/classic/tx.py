"""A transaction: one command's work in progress (the classic rule set's state and timers on the
kit's `Tx`). Handlers replace `tx.state` with new immutable values and collect events and
timers; the state handed to `apply` is never touched, so a rejection changes nothing."""

from __future__ import annotations

from vollmond.engine.classic.commands import TimerCommand
from vollmond.engine.classic.state import GameState
from vollmond.engine.kit import tx


class Tx(tx.Tx[GameState, TimerCommand]):
    __slots__ = ()
