"""The vagabond's steal (S14): the ability and the night step it brings with it.

The steal step exists only when a vagabond plays, so it is declared here, by the ability, and
the phase table (phases.py) takes it from the roles; nothing outside this module knows what
the step does. It opens night 1 before anyone else wakes, ends when every vagabond chose or
on its timer (a vagabond who did not choose takes nothing), and hides the teams and twins
from each other while it runs.
"""

from __future__ import annotations

from vollmond.engine.core import Audience, Rejection, evolve
from vollmond.engine.standard.abilities.base import Ability, living_target
from vollmond.engine.standard.codes import Ev
from vollmond.engine.standard.properties import spec_of
from vollmond.engine.standard.roles.base import RoleSpec
from vollmond.engine.standard.stages import StageSpec
from vollmond.engine.standard.state import GameState, NightState, Player
from vollmond.engine.standard.tx import Tx
from vollmond.engine.standard.types import ActionKind, NightStep, Phase


def _stealers(state: GameState) -> list[Player]:
    steal = ActionKind.STEAL
    return [p for p in state.players if p.alive and p.spec.ability(steal) is not None]


def _first_night_with_a_stealer(state: GameState) -> bool:
    return state.round == 1 and bool(_stealers(state))


def _everyone_chose(state: GameState) -> bool:
    night = state.night
    assert night is not None
    return all(night.acted(p.seat, ActionKind.STEAL) for p in _stealers(state))


def _open(tx: Tx) -> None:
    tx.change(night=NightState(tx.state.round, NightStep.STEAL), day=None)


def _the_rest_take_nothing(tx: Tx) -> None:
    """Timeout = "# alone": a vagabond who did not choose becomes the plain role."""
    night = tx.state.night
    assert night is not None
    for player in _stealers(tx.state):
        ability = spec_of(player).ability(ActionKind.STEAL)
        if ability is not None and not night.acted(player.seat, ActionKind.STEAL):
            ability.perform(tx, player, None)


STEAL_STEP = StageSpec(
    name="steal",
    phase=Phase.NIGHT,
    step=NightStep.STEAL,
    seconds=lambda durations: durations.steal_s,
    is_available=_first_night_with_a_stealer,
    is_over=_everyone_chose,
    prepare=_open,
    on_end=_the_rest_take_nothing,
    hides_bonds=True,
)


class Steal(Ability):
    """The vagabond, first in night 1, takes a role; the robbed becomes `plain` (S14), and so
    does a vagabond who steals nothing."""

    kind = ActionKind.STEAL
    night_steps = frozenset({NightStep.STEAL})
    allows_nobody = True
    stage = STEAL_STEP

    def __init__(self, *, plain: RoleSpec) -> None:
        self.plain = plain

    def check_target(self, state: GameState, actor: Player, target: int | None) -> Rejection | None:
        assert target is not None
        return living_target(state, actor, target, allow_self=False)

    def perform(self, tx: Tx, actor: Player, target: int | None) -> None:
        super().perform(tx, actor, target)
        players = len(tx.state.players)
        plain = self.plain
        if target is None:
            new_self = evolve(
                tx.state.player(actor.seat), spec=plain, role_state=plain.initial_state(players)
            )
            tx.put_player(new_self)
            tx.emit(Ev.ROLE_TAKEN, Audience.to(actor.seat), role=plain.id.value, source=None)
            return
        robbed = tx.state.player(target)
        taken = robbed.spec
        tx.put_player(evolve(robbed, spec=plain, role_state=plain.initial_state(players)))
        tx.put_player(evolve(tx.state.player(actor.seat), spec=taken, role_state=robbed.role_state))
        tx.emit(Ev.ROLE_TAKEN, Audience.to(actor.seat), role=taken.id.value, source=target)
        tx.emit(Ev.ROLE_STOLEN, Audience.to(target), role=plain.id.value)
        # The night room and the twins learn each other when the steal step is over
        # (`STEAL_STEP.hides_bonds`).
