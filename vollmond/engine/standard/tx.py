"""A transaction: one command's work in progress (the standard rule set's state and timers on the
kit's `Tx`). Handlers replace `tx.state` with new immutable values and collect events and
timers; the state handed to `apply` is never touched, so a rejection changes nothing."""

from __future__ import annotations

from vollmond.engine.kit import tx
from vollmond.engine.standard.commands import TimerCommand
from vollmond.engine.standard.state import GameState


class Tx(tx.Tx[GameState, TimerCommand]):
    __slots__ = ()
