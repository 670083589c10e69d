"""Leaving the game: death or prison, the lover who follows, the office that falls vacant."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from vollmond.engine.core import Audience, Json, evolve
from vollmond.engine.mayor.codes import Ev
from vollmond.engine.mayor.state import Floor
from vollmond.engine.mayor.tx import Tx
from vollmond.engine.mayor.types import Status


@dataclass(frozen=True, slots=True)
class Removal:
    """Who left the game by one blow, in order, as the events list them ([{seat, role}])."""

    out: tuple[dict[str, Json], ...]
    mayor_lost: int | None

    @property
    def dead(self) -> list[Json]:
        return list(self.out)


def remove(tx: Tx, seats: Iterable[int], status: Status) -> Removal:
    """Take `seats` out with `status` (dead or imprisoned). A lover whose partner leaves the
    game dies of grief (the Werewolf family's rule; seed 000 is silent). Roles are revealed
    by the event the caller emits with `Removal.dead`."""
    queue = list(seats)
    out: list[dict[str, Json]] = []
    mayor_lost: int | None = None
    while queue:
        seat = queue.pop(0)
        player = tx.state.player(seat)
        if not player.alive:
            continue
        tx.put_player(evolve(player, status=status))
        out.append({"seat": seat, "role": player.role.id})
        if tx.state.mayor == seat:
            mayor_lost = seat
            tx.change(mayor=None)
        status = Status.DEAD
        if player.lover:
            queue.extend(s for s in tx.state.lovers() if s != seat)
    tx.change(deaths_this_round=tx.state.deaths_this_round + len(out))
    return Removal(tuple(out), mayor_lost)


def announce_vacancy(tx: Tx, removal: Removal) -> None:
    """B2: the office is empty until the election at the start of the next day."""
    if removal.mayor_lost is not None:
        tx.emit(Ev.MAYOR_LOST, Audience.public(), seat=removal.mayor_lost)


def drop_from_floor(tx: Tx) -> bool:
    """After someone left: take them out of the speakers' queue. True if the current
    speaker was among them (the caller then passes the floor on)."""
    floor = tx.state.floor
    if floor is None:
        return False
    living = tx.state.living_seats()
    queue = tuple(s for s in floor.queue if s in living)
    speaker_gone = floor.speaker is not None and floor.speaker not in living
    tx.change(
        floor=Floor(None if speaker_gone else floor.speaker, queue, floor.purpose, floor.seconds),
    )
    return speaker_gone
