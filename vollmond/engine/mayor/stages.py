"""A stage of the round as data (the same shape as the standard rule set's StageSpec, typed
to this rule set's state): the table in phases.py is a tuple of these, walked by one flow."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from vollmond.engine.kit.stages import always, never, nothing
from vollmond.engine.mayor.options import Durations
from vollmond.engine.mayor.state import MayorState
from vollmond.engine.mayor.tx import Tx
from vollmond.engine.mayor.types import Phase, Stage


@dataclass(frozen=True, slots=True)
class StageSpec:
    """What one stage is.

    - `seconds`: its length; a stage of timed floors (`timed` False: introductions,
      defences) gets no stage timer, the floors' own timers drive it, and `seconds` is
      only the announced estimate;
    - `is_available`: whether it happens now (else `on_skip` runs);
    - `is_over`: whether everyone it waits for has acted, so it ends before its timer;
    - `prepare` before the announcement, `on_enter` after it, `after_command` after each
      accepted command, `on_end` when it ends (missing actions take their defaults).
    """

    stage: Stage
    phase: Phase
    seconds: Callable[[Durations, MayorState], float]
    timed: bool = True
    is_available: Callable[[MayorState], bool] = always
    is_over: Callable[[MayorState], bool] = never
    prepare: Callable[[Tx], None] = nothing
    on_enter: Callable[[Tx], None] = nothing
    after_command: Callable[[Tx], None] = nothing
    on_end: Callable[[Tx], None] = nothing
    on_skip: Callable[[Tx], None] = nothing
