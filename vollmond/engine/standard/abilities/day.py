"""Day abilities: they act at once, in the morning or during the day.

Like every ability they only change the state and emit events; whether someone's death ended
the game, or a vote is complete, the flow decides after the command (rules.apply)."""

from __future__ import annotations

from vollmond.engine.core import Audience, Rejection, evolve
from vollmond.engine.standard.abilities.base import Ability, living_target, reject
from vollmond.engine.standard.codes import Ev, Rej
from vollmond.engine.standard.deaths import death_list, kill
from vollmond.engine.standard.properties import in_night_room
from vollmond.engine.standard.state import GameState, Player, RoleState
from vollmond.engine.standard.tx import Tx
from vollmond.engine.standard.types import ActionKind, Phase

HUNTER_TWO_BULLETS_FROM = 12

# Refusals a bot meets at every turn by day (`available`), taken once: `reject(code)` each.
_WRONG_PHASE = reject(Rej.WRONG_PHASE)
_ALREADY_USED = reject(Rej.ALREADY_USED)
_OPTION_OFF = reject(Rej.OPTION_OFF)


def _mark_used(tx: Tx, seat: int, what: str) -> None:
    day = tx.state.today()
    tx.change(day=evolve(day, used=day.used | {(seat, what)}))


class _DayAbility(Ability):
    phases = frozenset({Phase.MORNING, Phase.DAY})
    once_per_day = True

    def available(self, state: GameState, actor: Player) -> Rejection | None:
        if state.phase not in self.phases:
            return _WRONG_PHASE
        # `kind` is a StrEnum: it equals and hashes as its value, which `used` holds.
        if self.once_per_day and (actor.seat, self.kind) in state.today().used:
            return _ALREADY_USED
        return None


class Shoot(_DayAbility):
    """The hunter: once per day while bullets last, two from 12 players (S5)."""

    kind = ActionKind.SHOOT

    charge_name = "bullets"

    def initial_state(self, state: RoleState, players: int) -> RoleState:
        return state.with_charges(self.kind, 2 if players >= HUNTER_TWO_BULLETS_FROM else 1)

    def available(self, state: GameState, actor: Player) -> Rejection | None:
        refused = super().available(state, actor)
        if refused is None and actor.role_state.charges_of(self.kind) <= 0:
            return reject(Rej.NO_CHARGES)
        return refused

    def check_target(self, state: GameState, actor: Player, target: int | None) -> Rejection | None:
        assert target is not None
        return living_target(state, actor, target, allow_self=False)

    def perform(self, tx: Tx, actor: Player, target: int | None) -> None:
        assert target is not None
        me = tx.state.player(actor.seat)
        tx.put_player(me.spend(self.kind))
        _mark_used(tx, actor.seat, self.kind.value)
        dead = kill(tx, [target])
        tx.emit(Ev.SHOT_FIRED, Audience.public(), target=target, dead=death_list(tx, dead))


class InstantKill(_DayAbility):
    """Sofort-Mord (W7, S18): once per game the evil team kills at once."""

    kind = ActionKind.INSTANT_KILL
    once_per_day = False

    def available(self, state: GameState, actor: Player) -> Rejection | None:
        refused = super().available(state, actor)
        if refused is not None:
            return refused
        if not state.options.instant_kill:
            return _OPTION_OFF
        if state.instant_kill_used:
            return _ALREADY_USED
        return None

    def check_target(self, state: GameState, actor: Player, target: int | None) -> Rejection | None:
        assert target is not None
        refused = living_target(state, actor, target, allow_self=False)
        if refused is None and in_night_room(state.player(target)):
            return reject(Rej.TARGET_TEAMMATE, target=target)
        return refused

    def perform(self, tx: Tx, actor: Player, target: int | None) -> None:
        assert target is not None
        tx.change(instant_kill_used=True)
        dead = kill(tx, [target])
        tx.emit(Ev.INSTANT_KILL, Audience.public(), target=target, dead=death_list(tx, dead))


class TransferVote(_DayAbility):
    """The vote-giver hands today's vote to someone who then votes double (S15)."""

    kind = ActionKind.TRANSFER_VOTE
    phases = frozenset({Phase.MORNING, Phase.DAY, Phase.VOTE})

    def available(self, state: GameState, actor: Player) -> Rejection | None:
        refused = super().available(state, actor)
        if refused is None and actor.seat in state.today().votes:
            return reject(Rej.ALREADY_VOTED)
        return refused

    def check_target(self, state: GameState, actor: Player, target: int | None) -> Rejection | None:
        assert target is not None
        return living_target(state, actor, target, allow_self=False)

    def perform(self, tx: Tx, actor: Player, target: int | None) -> None:
        assert target is not None
        _mark_used(tx, actor.seat, self.kind.value)
        day = tx.state.today()
        tx.change(day=evolve(day, transfers={**day.transfers, actor.seat: target}))
        tx.emit(Ev.VOTE_TRANSFERRED, Audience.to(actor.seat, target), giver=actor.seat, to=target)
        # A giver who hands his vote over during the vote may be the last one it waited for:
        # the flow (rules.apply) ends the vote then.
