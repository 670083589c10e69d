"""A stage of the game as data: a phase, or one step of the night.

The phase table (phases.py) is a tuple of these; a role's ability may declare a stage of its
own (the vagabond's steal step, S14), so a step that exists only for one role lives with that
role's ability, not in the phase machinery. Hooks only change state and emit events; the flow
in phases.py decides when they run and checks victory between stages.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from vollmond.engine.kit.stages import always, never, nothing
from vollmond.engine.standard.options import Durations
from vollmond.engine.standard.state import GameState
from vollmond.engine.standard.tx import Tx
from vollmond.engine.standard.types import NightStep, Phase


@dataclass(frozen=True, slots=True)
class StageSpec:
    """What one stage is: how long it lasts and what happens around it.

    - `is_available`: whether the stage happens at all this round (else `on_skip` runs);
    - `is_over`: whether everyone it waits for has acted, so it ends before its timer;
    - `prepare`: sets the stage's state up, before it is announced (`phase_started`);
    - `on_enter`: after the announcement (results that belong to the new stage);
    - `after_command`: after every accepted command while the stage runs;
    - `on_end`: when it ends (timer or `is_over`): missing actions take their defaults and
      the stage resolves;
    - `hides_bonds`: teams and twins do not know each other yet while it runs (S14).
    """

    name: str
    phase: Phase
    seconds: Callable[[Durations], float]
    step: NightStep | None = None
    is_available: Callable[[GameState], bool] = always
    is_over: Callable[[GameState], bool] = never
    prepare: Callable[[Tx], None] = nothing
    on_enter: Callable[[Tx], None] = nothing
    after_command: Callable[[Tx], None] = nothing
    on_end: Callable[[Tx], None] = nothing
    on_skip: Callable[[Tx], None] = nothing
    hides_bonds: bool = False

    @property
    def key(self) -> tuple[Phase, NightStep | None]:
        return self.phase, self.step
