"""The night's hooks in the order of A6: the wolves recognise each other and fix a victim,
the herb witch is shown it, and at dawn the night resolves (victim unless healed, then the
poisoned)."""

from __future__ import annotations

from collections import Counter

from vollmond.engine.classic.abilities import take
from vollmond.engine.classic.codes import Ev
from vollmond.engine.classic.deaths import death_list, kill
from vollmond.engine.classic.properties import pack, wolves_room
from vollmond.engine.classic.state import DayState, NightState
from vollmond.engine.classic.tx import Tx
from vollmond.engine.classic.types import Kind, Step
from vollmond.engine.core import Audience, evolve


def open_step(tx: Tx, step: Step) -> None:
    """A fresh night for the round, or the next step of the running one."""
    state = tx.state
    night = state.night
    if night is None or night.number != state.round:
        night = NightState(state.round, step)
    tx.change(night=evolve(night, step=step), step=step, day=None)


# --- before the first night (A3, A4) ------------------------------------------------------


def show_thief_cards(tx: Tx) -> None:
    cards = tx.state.leftover
    for thief in holders(tx, Kind.TAKE_CARD):
        tx.emit(
            Ev.THIEF_CARDS,
            Audience.to(thief),
            cards=[c.id.value for c in cards],
            must_take_wolf=any(c.wolf for c in cards),
        )


def thief_default(tx: Tx) -> None:
    """The thief let the time run out: he takes the werewolf card if one is left, else the
    master draws one of the two for him."""
    cards = tx.state.leftover
    if not cards:
        return
    for thief in holders(tx, Kind.TAKE_CARD):
        wolves = [i for i, c in enumerate(cards, start=1) if c.wolf]
        index = wolves[0] if wolves else tx.rng.choice(range(1, len(cards) + 1))
        night = tx.state.night
        assert night is not None
        tx.change(night=night.with_action(thief, Kind.TAKE_CARD, index))
        take(tx, thief, index)
        return


def holders(tx: Tx, kind: Kind) -> list[int]:
    return [p.seat for p in tx.state.living() if p.spec.ability(kind) is not None]


# --- the wolves (A6, A10, A12, A15) --------------------------------------------------------


def recognise(tx: Tx) -> None:
    """Round 1: the wolves' room sees its members (roles stay hidden: the false wolf looks
    like any wolf, A10); the pact maker is told the werewolves, they not him (A12)."""
    if tx.state.round != 1:
        return
    room = wolves_room(tx.state)
    tx.change(pack_known=True)
    tx.emit(Ev.PACK_REVEALED, Audience.group(room), members=sorted(room))
    wolves = sorted(pack(tx.state))
    for p in tx.state.living():
        if p.spec.learns_wolves:
            tx.emit(Ev.WOLVES_TOLD, Audience.to(p.seat), wolves=wolves)


def fix_victim(tx: Tx) -> None:
    """End of the wolves' step: most votes is the victim, a tie by lot, no votes nobody."""
    if tx.state.first_night_quiet:
        return
    night = tx.state.night
    assert night is not None
    votes = {v: t for v, t in night.wolf_votes.items() if tx.state.player(t).alive}
    victim: int | None = None
    if votes:
        counts = Counter(votes.values())
        top = max(counts.values())
        tied = sorted(t for t, n in counts.items() if n == top)
        victim = tied[0] if len(tied) == 1 else tx.rng.choice(tied)
    tx.change(night=evolve(night, victim=victim))
    tx.emit(Ev.WOLVES_CHOSE, Audience.group(wolves_room(tx.state)), victim=victim)


# --- the herb witch (A7) -------------------------------------------------------------------


def show_victim(tx: Tx) -> None:
    """Only a living herb witch who still has her action is shown the victim."""
    night = tx.state.night
    assert night is not None
    for p in tx.state.living():
        if p.spec.ability(Kind.HEAL) is not None and not p.spent:
            victim = night.victim
            if victim is not None and not tx.state.player(victim).alive:
                victim = None
            tx.emit(Ev.WITCH_VICTIM, Audience.to(p.seat), victim=victim)


# --- dawn ------------------------------------------------------------------------------------


def resolve(tx: Tx) -> None:
    """A9: the master announces the night's dead: the wolves' victim unless healed, and
    whoever was poisoned."""
    night = tx.state.night
    deaths: list[int] = []
    if night is not None and night.number == tx.state.round:
        healed = {t for _, t in night.targets_of(Kind.HEAL)}
        if night.victim is not None and night.victim not in healed:
            deaths.append(night.victim)
        deaths += [t for _, t in night.targets_of(Kind.POISON) if t is not None]
    dead = kill(tx, deaths)
    tx.change(day=DayState(tx.state.round), step=None)
    tx.emit(Ev.MORNING_REPORT, Audience.public(), round=tx.state.round, dead=death_list(tx, dead))
