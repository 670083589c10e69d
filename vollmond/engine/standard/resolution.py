"""The night resolves in named, ordered steps:
steal (done first, in night 1) → protect & trap → evil kill → potions → drag → visits → checks
(checks answered at once). Then bonded partners die along and the morning report follows."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from vollmond.engine.standard.abilities.night import choose_victim
from vollmond.engine.standard.properties import has_trait, in_night_room, night_room
from vollmond.engine.standard.state import GameState, NightState
from vollmond.engine.standard.tx import Tx
from vollmond.engine.standard.types import ActionKind, Trait


@dataclass(slots=True)
class NightOutcome:
    """What the steps found; `dying` keeps order for a stable report."""

    night: NightState
    victim: int | None = None
    protected: set[int] = field(default_factory=set)
    trapped: set[int] = field(default_factory=set)
    away: dict[int, int] = field(default_factory=dict)
    victim_dies: bool = False
    dying: list[int] = field(default_factory=list)

    def add(self, seat: int) -> None:
        if seat not in self.dying:
            self.dying.append(seat)


def attackers(state: GameState, night: NightState, victim: int) -> list[int]:
    """Who comes to the victim's house: the living evil players who voted for the victim.

    A voter who has left since is not there; if every one of them left, the kill still
    happens (the room chose it), so one of the living night room came instead.
    """
    voters = sorted(
        voter
        for voter, target in night.evil_votes.items()
        if target == victim and state.player(voter).alive
    )
    return voters or sorted(night_room(state))


def step_protect_and_trap(tx: Tx, out: NightOutcome) -> None:
    protect = ActionKind.PROTECT
    chosen = dict(out.night.targets_of(protect))
    out.protected = {t for t in chosen.values() if t is not None}
    for player in tx.state.players:  # the state's players as the night ended (put_player
        # replaces the tuple, the loop keeps the one it began with)
        if player.alive and player.spec.ability(protect) is not None:
            # "Not the same twice in a row": a night without protecting clears the mark.
            marked = player.role_state.with_last_target(protect, chosen.get(player.seat))
            tx.put_player(player.with_role_state(marked))
    for seat, target in out.night.targets_of(ActionKind.VISIT):
        if target is not None:
            out.away[seat] = target
    out.trapped = {t for _, t in out.night.targets_of(ActionKind.TRAP) if t is not None}


def step_evil_kill(tx: Tx, out: NightOutcome) -> None:
    night = out.night
    out.victim = (
        night.victim
        if night.victim_locked
        else choose_victim(night.evil_votes, tx.state.options.unanimous, tx)
    )
    victim = out.victim
    if victim is None:
        return
    if victim in out.trapped:
        # S9: the trap springs on whoever comes to that house; the victim survives.
        comers = attackers(tx.state, night, victim)
        if comers:
            out.add(tx.rng.choice(comers))
        return
    if victim in out.away or victim in out.protected:
        return
    out.victim_dies = True


def step_potions(tx: Tx, out: NightOutcome) -> None:
    healed = any(t == out.victim for _, t in out.night.targets_of(ActionKind.HEAL))
    if out.victim_dies and healed:
        out.victim_dies = False
    if out.victim_dies and out.victim is not None:
        out.dying.insert(0, out.victim)
    for _, target in out.night.targets_of(ActionKind.POISON):
        if target is not None:
            out.add(target)


def step_drag(tx: Tx, out: NightOutcome) -> None:
    """S17: a creeper actually taken by the evil team drags one random attacker along."""
    victim = out.victim
    if (
        out.victim_dies
        and victim is not None
        and has_trait(tx.state.player(victim), Trait.DRAGS_ATTACKER)
    ):
        comers = attackers(tx.state, out.night, victim)
        if comers:
            out.add(tx.rng.choice(comers))


def step_visits(tx: Tx, out: NightOutcome) -> None:
    for owl, host in sorted(out.away.items()):
        if host == out.victim or in_night_room(tx.state.player(host)):
            out.add(owl)


NIGHT_STEPS: tuple[tuple[str, Callable[[Tx, NightOutcome], None]], ...] = (
    ("protect_and_trap", step_protect_and_trap),
    ("evil_kill", step_evil_kill),
    ("potions", step_potions),
    ("drag", step_drag),
    ("visits", step_visits),
)


def resolve_night(tx: Tx) -> list[int]:
    """Run the steps; return who dies before bonded partners follow."""
    night = tx.state.night
    assert night is not None
    out = NightOutcome(night)
    for _name, step in NIGHT_STEPS:
        step(tx, out)
    tx.change(night=None)
    return out.dying
