"""Night abilities of the classic cards. Each says in which night step it is used, on whom,
and what it changes; `check` never changes anything and is also what `legal` offers, so a
menu can never offer what the rules refuse. The night's outcome (who dies) is resolved by
kind in `night.py`, never by role."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import ClassVar

from vollmond.engine.classic.codes import Ev, Rej
from vollmond.engine.classic.properties import wolves_room
from vollmond.engine.classic.state import Fact, FactKind, GameState, NightState, Player
from vollmond.engine.classic.tx import Tx
from vollmond.engine.classic.types import Kind, Phase, Step
from vollmond.engine.core import Audience, Rejection, evolve

Choice = tuple[int | None, int | None]
"""(target, second) of a night command."""


def reject(code: Rej, **params: int | str) -> Rejection:
    return Rejection(code.value, params)


def living_other(state: GameState, actor: Player, target: int) -> Rejection | None:
    if not state.player(target).alive:
        return reject(Rej.TARGET_DEAD, target=target)
    if target == actor.seat:
        return reject(Rej.TARGET_SELF)
    return None


def tonight(state: GameState) -> NightState:
    assert state.night is not None
    return state.night


class Ability:
    """One thing a card can do in one night step; subclasses say on whom and what happens."""

    kind: ClassVar[Kind]
    step: ClassVar[Step]
    needs_target: ClassVar[bool] = True
    exclusive: ClassVar[frozenset[Kind]] = frozenset()
    """Kinds of which only one may be used per night (the herb witch's heal, poison, pass)."""

    def usable(self, state: GameState, actor: Player) -> Rejection | None:
        """Whether the ability can be used now at all, whatever the target."""
        if state.phase is not Phase.NIGHT or state.step is not self.step:
            return reject(Rej.WRONG_PHASE)
        night = tonight(state)
        for kind in self.exclusive or {self.kind}:
            if night.acted(actor.seat, kind):
                return reject(Rej.ALREADY_ACTED)
        return None

    def check_target(
        self, state: GameState, actor: Player, target: int, second: int | None
    ) -> Rejection | None:
        return None

    def check(
        self, state: GameState, actor: Player, target: int | None, second: int | None
    ) -> Rejection | None:
        refused = self.usable(state, actor)
        if refused is not None:
            return refused
        if target is None:
            return reject(Rej.TARGET_REQUIRED) if self.needs_target else None
        if not self.needs_target:
            return reject(Rej.TARGET_UNKNOWN, target=target)
        if not state.has_seat(target):
            return reject(Rej.TARGET_UNKNOWN, target=target)
        return self.check_target(state, actor, target, second)

    def candidates(self, state: GameState, actor: Player) -> Iterable[Choice]:
        """(target, second) pairs worth asking `check` about."""
        if not self.needs_target:
            yield None, None
            return
        for seat in range(1, len(state.players) + 1):
            yield seat, None

    def perform(self, tx: Tx, actor: Player, target: int | None, second: int | None) -> None:
        """Default: remember the choice for the night's resolution."""
        night = tonight(tx.state)
        tx.change(night=night.with_action(actor.seat, self.kind, target))


def _learn(tx: Tx, actor: Player, fact: Fact) -> None:
    me = tx.state.player(actor.seat)
    tx.put_player(evolve(me, facts=(*me.facts, fact)))


class TakeCard(Ability):
    """A3: the thief takes one of the two cards left over (1 or 2); a werewolf card among
    them must be taken."""

    kind = Kind.TAKE_CARD
    step = Step.THIEF

    def check_target(
        self, state: GameState, actor: Player, target: int, second: int | None
    ) -> Rejection | None:
        cards = state.leftover
        if not 1 <= target <= len(cards):
            return reject(Rej.NO_SUCH_CARD, target=target)
        if any(c.wolf for c in cards) and not cards[target - 1].wolf:
            return reject(Rej.MUST_TAKE_WOLF)
        return None

    def check(
        self, state: GameState, actor: Player, target: int | None, second: int | None
    ) -> Rejection | None:
        refused = self.usable(state, actor)
        if refused is not None:
            return refused
        if target is None:
            return reject(Rej.TARGET_REQUIRED)
        return self.check_target(state, actor, target, second)

    def candidates(self, state: GameState, actor: Player) -> Iterable[Choice]:
        return ((i, None) for i in range(1, len(state.leftover) + 1))

    def perform(self, tx: Tx, actor: Player, target: int | None, second: int | None) -> None:
        assert target is not None
        super().perform(tx, actor, target, second)
        take(tx, actor.seat, target)


def take(tx: Tx, seat: int, index: int) -> None:
    """The thief's swap: his card goes back with the card he did not choose."""
    state = tx.state
    me = state.player(seat)
    chosen = state.leftover[index - 1]
    rest = tuple(c for i, c in enumerate(state.leftover, start=1) if i != index)
    tx.put_player(evolve(me, spec=chosen))
    tx.change(leftover=())
    tx.emit(Ev.ROLE_TAKEN, Audience.to(seat), role=chosen.id.value)
    tx.emit(
        Ev.ROLES_DEALT,
        Audience.system(),
        roles={str(p.seat): p.role.value for p in tx.state.players},
        leftover=[me.role.value, *(c.id.value for c in rest)],
    )


class Link(Ability):
    """A4: Amor points at two players, himself allowed; they become the lovers."""

    kind = Kind.LINK
    step = Step.AMOR

    def check_target(
        self, state: GameState, actor: Player, target: int, second: int | None
    ) -> Rejection | None:
        if second is None:
            return reject(Rej.TARGET_REQUIRED)
        if not state.has_seat(second):
            return reject(Rej.TARGET_UNKNOWN, target=second)
        if second == target:
            return reject(Rej.SAME_TWICE, target=target)
        for seat in (target, second):
            if not state.player(seat).alive:
                return reject(Rej.TARGET_DEAD, target=seat)
        return None

    def candidates(self, state: GameState, actor: Player) -> Iterable[Choice]:
        n = len(state.players)
        return ((a, b) for a in range(1, n + 1) for b in range(a + 1, n + 1))

    def perform(self, tx: Tx, actor: Player, target: int | None, second: int | None) -> None:
        assert target is not None and second is not None
        super().perform(tx, actor, target, second)
        for seat in (target, second):
            tx.put_player(evolve(tx.state.player(seat), lover=True))
        pair = sorted((target, second))
        tx.emit(Ev.LOVERS_CHOSEN, Audience.to(actor.seat), seats=pair)
        tx.emit(Ev.LOVERS_REVEALED, Audience.group(tuple(pair)), seats=pair)


class WolfVote(Ability):
    """A6: the wolves' room chooses a victim, never one of its own; not in a quiet first
    night (A15)."""

    kind = Kind.WOLF_VOTE
    step = Step.WOLVES

    def usable(self, state: GameState, actor: Player) -> Rejection | None:
        refused = super().usable(state, actor)
        if refused is None and state.first_night_quiet:
            return reject(Rej.QUIET_NIGHT)
        return refused

    def check_target(
        self, state: GameState, actor: Player, target: int, second: int | None
    ) -> Rejection | None:
        if not state.player(target).alive:
            return reject(Rej.TARGET_DEAD, target=target)
        if target in wolves_room(state):
            return reject(Rej.TARGET_PACK, target=target)
        return None

    def perform(self, tx: Tx, actor: Player, target: int | None, second: int | None) -> None:
        assert target is not None
        super().perform(tx, actor, target, second)
        night = tonight(tx.state)
        votes = {**night.wolf_votes, actor.seat: target}
        tx.change(night=evolve(night, wolf_votes=votes))
        tally = Counter(votes.values())
        tx.emit(
            Ev.WOLF_VOTE_CAST,
            Audience.group(wolves_room(tx.state)),
            voter=actor.seat,
            target=target,
            tally={str(t): n for t, n in sorted(tally.items())},
        )


class Seek(Ability):
    """A11: the seeing werewolf points at someone and learns whether that is the seer."""

    kind = Kind.SEEK
    step = Step.SEEING_WOLF

    def check_target(
        self, state: GameState, actor: Player, target: int, second: int | None
    ) -> Rejection | None:
        return living_other(state, actor, target)

    def perform(self, tx: Tx, actor: Player, target: int | None, second: int | None) -> None:
        assert target is not None
        super().perform(tx, actor, target, second)
        seer = tx.state.player(target).spec.ability(Kind.CHECK) is not None
        _learn(tx, actor, Fact(FactKind.SEEK, tx.state.round, target, seer))
        tx.emit(Ev.SEEK_RESULT, Audience.to(actor.seat), target=target, seer=seer)


class Check(Ability):
    """A6: the seer's vision, thumb up (villager) or down (werewolf); the black werewolf
    shows as a villager (A13)."""

    kind = Kind.CHECK
    step = Step.SEER

    def check_target(
        self, state: GameState, actor: Player, target: int, second: int | None
    ) -> Rejection | None:
        return living_other(state, actor, target)

    def perform(self, tx: Tx, actor: Player, target: int | None, second: int | None) -> None:
        assert target is not None
        super().perform(tx, actor, target, second)
        wolf = tx.state.player(target).spec.seen_as_wolf
        _learn(tx, actor, Fact(FactKind.CHECK, tx.state.round, target, wolf))
        tx.emit(Ev.CHECK_RESULT, Audience.to(actor.seat), target=target, wolf=wolf)


_WITCH = frozenset({Kind.HEAL, Kind.POISON, Kind.PASS})


class _WitchAction(Ability):
    """A7: the herb witch heals the victim, poisons another, or passes; heal and poison
    together are one action in the whole game."""

    step = Step.WITCH
    exclusive = _WITCH
    spends = True

    def usable(self, state: GameState, actor: Player) -> Rejection | None:
        refused = super().usable(state, actor)
        if refused is None and actor.spent:
            return reject(Rej.ACTION_SPENT)
        return refused

    def perform(self, tx: Tx, actor: Player, target: int | None, second: int | None) -> None:
        super().perform(tx, actor, target, second)
        tx.emit(Ev.ACTION_CONFIRMED, Audience.to(actor.seat), kind=self.kind.value, target=target)
        if self.spends:
            me = tx.state.player(actor.seat)
            tx.put_player(evolve(me, spent=True))


class Heal(_WitchAction):
    kind = Kind.HEAL

    def usable(self, state: GameState, actor: Player) -> Rejection | None:
        refused = super().usable(state, actor)
        if refused is not None:
            return refused
        victim = tonight(state).victim
        if victim is None or not state.player(victim).alive:
            return reject(Rej.NO_VICTIM)
        return None

    def check_target(
        self, state: GameState, actor: Player, target: int, second: int | None
    ) -> Rejection | None:
        if target != tonight(state).victim:
            return reject(Rej.NO_VICTIM)
        return None


class Poison(_WitchAction):
    kind = Kind.POISON

    def check_target(
        self, state: GameState, actor: Player, target: int, second: int | None
    ) -> Rejection | None:
        refused = living_other(state, actor, target)
        if refused is None and target == tonight(state).victim:
            return reject(Rej.TARGET_VICTIM, target=target)
        return refused


class Pass(_WitchAction):
    """She keeps her action for a later night (A7); ends her step at once."""

    kind = Kind.PASS
    needs_target = False
    spends = False


class Sense(Ability):
    """A8: the sandman learns whether someone was active this night (gave a night command:
    a wolf's vote, the seer's vision, the seeing werewolf's search, the herb witch's heal or
    poison — not her pass)."""

    kind = Kind.SENSE
    step = Step.SANDMAN

    def check_target(
        self, state: GameState, actor: Player, target: int, second: int | None
    ) -> Rejection | None:
        return living_other(state, actor, target)

    def perform(self, tx: Tx, actor: Player, target: int | None, second: int | None) -> None:
        assert target is not None
        night = tonight(tx.state)
        acts = night.actions.get(target, {})
        active = any(kind is not Kind.PASS for kind in acts)
        super().perform(tx, actor, target, second)
        _learn(tx, actor, Fact(FactKind.SENSE, tx.state.round, target, active))
        tx.emit(Ev.SANDMAN_RESULT, Audience.to(actor.seat), target=target, active=active)
