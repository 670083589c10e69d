"""The night (B5): the Nazis must agree on one victim, otherwise nobody dies.

They recognise each other when they first wake (seed 000: "erkennen sich gegenseitig"), so
the team and the lovers are revealed when the first night begins, not at the deal: during
the first election nobody knows anybody. Each Nazi points at a victim and may change their
mind while the night lasts; the moment every living Nazi points at the same person, the
night ends. When the night's time runs out without agreement, nobody dies.
"""

from __future__ import annotations

from vollmond.engine.core import Audience, Rejection
from vollmond.engine.mayor.codes import Ev, Rej
from vollmond.engine.mayor.commands import ChooseVictim
from vollmond.engine.mayor.deaths import announce_vacancy, remove
from vollmond.engine.mayor.state import MayorState, Night
from vollmond.engine.mayor.tx import Tx
from vollmond.engine.mayor.types import Stage, Status


def open_night(tx: Tx) -> None:
    tx.change(night=Night(), trial=None, election=None, ballot=None, floor=None)


def reveal_bonds(tx: Tx) -> None:
    """At the first night: the Nazis learn each other, the lovers learn each other."""
    if tx.state.bonds_known:
        return
    tx.change(bonds_known=True)
    room = sorted(p.seat for p in tx.state.players if p.role.night_room)
    tx.emit(Ev.TEAM_REVEALED, Audience.group(tuple(room)), members=room)
    lovers = tx.state.lovers()
    if lovers:
        tx.emit(Ev.LOVERS_REVEALED, Audience.group(lovers), seats=list(lovers))


def check_choose(state: MayorState, cmd: ChooseVictim) -> Rejection | None:
    if state.stage is not Stage.NIGHT or state.night is None:
        return Rejection(Rej.WRONG_STAGE)
    if not state.player(cmd.actor).role.night_room:
        return Rejection(Rej.NO_NIGHT_ACTION)
    if not state.has_seat(cmd.target):
        return Rejection(Rej.TARGET_UNKNOWN, {"target": cmd.target})
    if cmd.target == cmd.actor:
        return Rejection(Rej.TARGET_SELF)
    target = state.player(cmd.target)
    if not target.alive:
        return Rejection(Rej.TARGET_OUT, {"target": cmd.target})
    if target.role.night_room:
        return Rejection(Rej.TARGET_TEAMMATE, {"target": cmd.target})
    return None


def choose(tx: Tx, cmd: ChooseVictim) -> None:
    night = tx.state.night
    assert night is not None
    tx.change(night=Night({**night.choices, cmd.actor: cmd.target}))
    tx.emit(
        Ev.VICTIM_CHOSEN,
        Audience.group(tx.state.night_room()),
        voter=cmd.actor,
        target=cmd.target,
    )


def agreed_victim(state: MayorState) -> int | None:
    """The victim every living Nazi points at, or None while they disagree or wait."""
    night = state.night
    room = state.night_room()
    if night is None or not room or not room <= night.choices.keys():
        return None
    targets = {night.choices[seat] for seat in room}
    if len(targets) != 1:
        return None
    victim = targets.pop()
    return victim if state.player(victim).alive else None


def end_night(tx: Tx) -> None:
    victim = agreed_victim(tx.state)
    tx.change(night=None)
    if victim is None:
        tx.emit(Ev.NIGHT_QUIET, Audience.public(), round=tx.state.round)
        return
    role = tx.state.player(victim).role.id
    removal = remove(tx, [victim], Status.DEAD)
    tx.emit(
        Ev.NIGHT_VICTIM,
        Audience.public(),
        round=tx.state.round,
        seat=victim,
        role=role,
        dead=removal.dead,
    )
    announce_vacancy(tx, removal)
