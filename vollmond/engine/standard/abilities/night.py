"""Night abilities. Most only record a choice; the night resolves them in named steps
(see resolution.py). Checks answer at once: roles cannot change after the steal step."""

from __future__ import annotations

from vollmond.engine.core import Audience, Rejection, evolve
from vollmond.engine.standard.abilities.base import Ability, living_target, reject
from vollmond.engine.standard.codes import Ev, Rej
from vollmond.engine.standard.properties import (
    in_night_room,
    night_room,
    seen_as_evil,
)
from vollmond.engine.standard.state import Call, Fact, FactKind, GameState, Player, RoleState
from vollmond.engine.standard.tx import Tx
from vollmond.engine.standard.types import (
    ActionKind,
    CallKind,
    CallStatus,
)

# Read whenever a witch's bot is asked, as module constants (types.py: slow on 3.11).
_HEAL = ActionKind.HEAL
_POISON = ActionKind.POISON


def confirm(tx: Tx, actor: Player, kind: ActionKind, target: int | None) -> None:
    tx.emit(Ev.ACTION_CONFIRMED, Audience.to(actor.seat), kind=kind.value, target=target)


def choose_victim(votes: dict[int, int], unanimous: bool, tx: Tx) -> int | None:
    """Most votes dies, a tie by lot (N3); no votes, nobody (N5); einstimmig (N6)."""
    if not votes:
        return None
    counts = _count(votes)
    if unanimous and len(counts) > 1:
        return None
    top = max(counts.values())
    tied = sorted(t for t, n in counts.items() if n == top)
    return tied[0] if len(tied) == 1 else tx.rng.choice(tied)


def _count(votes: dict[int, int]) -> dict[int, int]:
    """How many votes each target has (`Counter(votes.values())`, without its checks: asked
    on every evil vote)."""
    counts: dict[int, int] = {}
    for target in votes.values():
        counts[target] = counts.get(target, 0) + 1
    return counts


def lock_victim(tx: Tx) -> None:
    """All evil votes are in: fix the victim, tell the room and the witches (N7)."""
    night = tx.state.night
    assert night is not None
    victim = choose_victim(night.evil_votes, tx.state.options.unanimous, tx)
    tx.change(night=evolve(night, victim_locked=True, victim=victim))
    tx.emit(Ev.EVIL_VOTES_COMPLETE, Audience.group(night_room(tx.state)), victim=victim)
    heal = ActionKind.HEAL
    witches = [p.seat for p in tx.state.players if p.alive and p.spec.ability(heal) is not None]
    if witches:
        tx.emit(Ev.WITCH_VICTIM, Audience.group(tuple(witches)), victim=victim)


class EvilVote(Ability):
    """Each evil player votes once, unchangeably (N2); not for their own people (N4)."""

    kind = ActionKind.EVIL_VOTE

    def check_target(self, state: GameState, actor: Player, target: int | None) -> Rejection | None:
        assert target is not None
        refused = living_target(state, actor, target, allow_self=True)
        if refused is not None:
            return refused
        if in_night_room(state.player(target)):
            return reject(Rej.TARGET_TEAMMATE, target=target)
        return None

    def perform(self, tx: Tx, actor: Player, target: int | None) -> None:
        assert target is not None
        night = tx.state.night
        assert night is not None
        votes = {**night.evil_votes, actor.seat: target}
        night = evolve(night, evil_votes=votes).with_action(actor.seat, self.kind, target)
        tx.change(night=night)
        room = night_room(tx.state)
        tally = _count(votes)
        tx.emit(
            Ev.EVIL_VOTE_CAST,
            Audience.group(room),
            voter=actor.seat,
            target=target,
            tally={str(t): n for t, n in sorted(tally.items())},
        )
        # The last vote of the room fixes the victim: the flow does it after the command.


class Check(Ability):
    """The seer learns at once whether another living person is evil (S1, S12)."""

    kind = ActionKind.CHECK

    def check_target(self, state: GameState, actor: Player, target: int | None) -> Rejection | None:
        assert target is not None
        return living_target(state, actor, target, allow_self=False)

    def perform(self, tx: Tx, actor: Player, target: int | None) -> None:
        assert target is not None
        super().perform(tx, actor, target)
        evil = seen_as_evil(tx.state.player(target))
        night = tx.state.night
        assert night is not None
        me = tx.state.player(actor.seat)
        fact = Fact(FactKind.CHECK, night.number, target, evil)
        tx.put_player(evolve(me, facts=(*me.facts, fact)))
        tx.emit(Ev.CHECK_RESULT, Audience.to(actor.seat), target=target, evil=evil)


class Protect(Ability):
    """Doctor (S2) and knight (S6): guard a house from the evil attack, never the same
    house two nights running; the knight not himself."""

    kind = ActionKind.PROTECT

    def __init__(self, *, allow_self: bool) -> None:
        self.allow_self = allow_self

    def check_target(self, state: GameState, actor: Player, target: int | None) -> Rejection | None:
        assert target is not None
        refused = living_target(state, actor, target, allow_self=self.allow_self)
        if refused is not None:
            return refused
        if actor.role_state.last_target(self.kind) == target:
            return reject(Rej.REPEAT_TARGET, target=target)
        return None


class Trap(Ability):
    """The trapper's trap (S9); any living house, his own included."""

    kind = ActionKind.TRAP

    def check_target(self, state: GameState, actor: Player, target: int | None) -> Rejection | None:
        assert target is not None
        return living_target(state, actor, target, allow_self=True)


class _Potion(Ability):
    """Witch potions (S3): each once per game, at most one per night."""

    def initial_state(self, state: RoleState, players: int) -> RoleState:
        return state.with_charges(self.kind, 1)

    def available(self, state: GameState, actor: Player) -> Rejection | None:
        refused = super().available(state, actor)
        if refused is not None:
            return refused
        if actor.role_state.charges_of(self.kind) <= 0:
            return reject(Rej.NO_CHARGES)
        night = state.night
        assert night is not None
        if night.acted(actor.seat, _HEAL) or night.acted(actor.seat, _POISON):
            return reject(Rej.ONE_POTION_PER_NIGHT)
        return None

    def perform(self, tx: Tx, actor: Player, target: int | None) -> None:
        super().perform(tx, actor, target)
        me = tx.state.player(actor.seat)
        tx.put_player(me.spend(self.kind))


class Heal(_Potion):
    """Saves the night's victim; usable only once the victim is known (N7)."""

    kind = ActionKind.HEAL
    charge_name = "heal"

    def available(self, state: GameState, actor: Player) -> Rejection | None:
        refused = super().available(state, actor)
        if refused is not None:
            return refused
        night = state.night
        assert night is not None
        if not night.victim_locked or night.victim is None:
            return reject(Rej.VICTIM_UNKNOWN)
        if not state.player(night.victim).alive:
            # The victim left the game after the vote: there is nobody left to save.
            return reject(Rej.TARGET_DEAD, target=night.victim)
        return None

    def check_target(self, state: GameState, actor: Player, target: int | None) -> Rejection | None:
        night = state.night
        assert night is not None
        if target != night.victim:
            return reject(Rej.VICTIM_UNKNOWN, target=target if target is not None else 0)
        return None


class Poison(_Potion):
    kind = ActionKind.POISON
    charge_name = "poison"

    def check_target(self, state: GameState, actor: Player, target: int | None) -> Rejection | None:
        assert target is not None
        return living_target(state, actor, target, allow_self=False)


class Visit(Ability):
    """The night-owl is away from home at someone else's (S4)."""

    kind = ActionKind.VISIT

    def check_target(self, state: GameState, actor: Player, target: int | None) -> Rejection | None:
        assert target is not None
        return living_target(state, actor, target, allow_self=False)


class Seance(Ability):
    """The necromancer talks with one dead player, connected at once; # alone = nobody (S8)."""

    kind = ActionKind.SEANCE
    allows_nobody = True

    def available(self, state: GameState, actor: Player) -> Rejection | None:
        refused = super().available(state, actor)
        if refused is not None:
            return refused
        if state.call_of(actor.seat) is not None:
            return reject(Rej.IN_CALL)
        return None

    def check_target(self, state: GameState, actor: Player, target: int | None) -> Rejection | None:
        assert target is not None
        if state.player(target).alive:
            return reject(Rej.TARGET_ALIVE, target=target)
        if state.call_of(target) is not None:
            return reject(Rej.TARGET_BUSY, target=target)
        return None

    def perform(self, tx: Tx, actor: Player, target: int | None) -> None:
        super().perform(tx, actor, target)
        if target is None:
            return
        call = Call(tx.state.next_call_id, CallKind.SEANCE, actor.seat, target, CallStatus.ACTIVE)
        tx.change(calls=(*tx.state.calls, call), next_call_id=tx.state.next_call_id + 1)
        tx.emit(Ev.SEANCE_OPENED, Audience.to(actor.seat, target), call=call.id, dead=target)
