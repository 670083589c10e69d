"""The ability interface with do-nothing defaults."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from vollmond.engine.core import Rejection, builder
from vollmond.engine.standard.codes import Rej
from vollmond.engine.standard.stages import StageSpec
from vollmond.engine.standard.state import GameState, Player, RoleState
from vollmond.engine.standard.tx import Tx
from vollmond.engine.standard.types import ActionKind, NightStep, Phase

# Members read on every probe, as module constants (types.py: `Phase.NIGHT` is slow on 3.11).
_NIGHT = Phase.NIGHT

_PLAIN: dict[Rej, Rejection] = {code: Rejection(code.value) for code in Rej}
_VALUES: dict[Rej, str] = {code: code.value for code in Rej}
_rejection = builder(Rejection)
# The refusals the bots' probing meets most, taken once (each is `reject(code)`).
_WRONG_PHASE = _PLAIN[Rej.WRONG_PHASE]
_ALREADY_ACTED = _PLAIN[Rej.ALREADY_ACTED]
_TARGET_SELF = _PLAIN[Rej.TARGET_SELF]


def reject(code: Rej, **params: int | str) -> Rejection:
    """A refusal. Those without parameters are made once: candidates are probed by the
    thousand (bots, menus) and most are refused, so a refusal should cost a lookup."""
    if not params:
        return _PLAIN[code]
    return _rejection(_VALUES[code], params)


class Ability:
    """One thing a role can do. Subclasses say when, on whom, and what happens.

    `check` must be side-effect free and is also what `legal_actions` uses to offer targets,
    so the menu a player hears and the rules the engine enforces can never disagree.
    """

    kind: ClassVar[ActionKind]
    phases: ClassVar[frozenset[Phase]] = frozenset({Phase.NIGHT})
    night_steps: ClassVar[frozenset[NightStep]] = frozenset({NightStep.MAIN})
    allows_nobody: ClassVar[bool] = False
    charge_name: ClassVar[str] = ""
    """The name of its charges in the view's `memory`, for abilities with limited uses."""
    stage: ClassVar[StageSpec | None] = None
    """A stage of the game that exists only for this ability (the steal step), if any."""

    def initial_state(self, state: RoleState, players: int) -> RoleState:
        """Add what a fresh holder starts with (charges) to the role's state."""
        return state

    def available(self, state: GameState, actor: Player) -> Rejection | None:
        """Whether the ability can be used now at all, whatever the target. Never outside
        `phases`: the seats' menus leave it out there without asking (legal.py)."""
        phase = state.phase
        if phase not in self.phases:
            return _WRONG_PHASE
        if phase is _NIGHT:
            night = state.night
            assert night is not None
            if night.step not in self.night_steps:
                return _WRONG_PHASE
            if night.acted(actor.seat, self.kind):
                return _ALREADY_ACTED  # a bot asks again at each turn until the night ends
        return None

    def check_target(self, state: GameState, actor: Player, target: int | None) -> Rejection | None:
        return None

    def check(self, state: GameState, actor: Player, target: int | None) -> Rejection | None:
        refused = self.available(state, actor)
        if refused is not None:
            return refused
        if target is None:
            return None if self.allows_nobody else reject(Rej.TARGET_REQUIRED)
        if not state.has_seat(target):
            return reject(Rej.TARGET_UNKNOWN, target=target)
        return self.check_target(state, actor, target)

    def candidates(self, state: GameState, actor: Player) -> Iterable[int | None]:
        if self.allows_nobody:
            yield None
        yield from range(1, len(state.players) + 1)

    def perform(self, tx: Tx, actor: Player, target: int | None) -> None:
        """Default: remember the choice for the night's resolution steps."""
        night = tx.state.night
        assert night is not None
        tx.change(night=night.with_action(actor.seat, self.kind, target))


def living_target(
    state: GameState, actor: Player, target: int, *, allow_self: bool
) -> Rejection | None:
    """The common rule: the target lives and, unless allowed, is someone else."""
    if not state.player(target).alive:
        return reject(Rej.TARGET_DEAD, target=target)
    if not allow_self and target == actor.seat:
        return _TARGET_SELF
    return None
