"""Dying: the lover follows (A4), the role is shown (the dead give no more hints, A9), a
captain's death calls for his successor (A5)."""

from __future__ import annotations

from collections.abc import Iterable

from vollmond.engine.classic.properties import partner
from vollmond.engine.classic.tx import Tx
from vollmond.engine.core import Json, evolve


def kill(tx: Tx, seats: Iterable[int]) -> list[int]:
    """Kill the given seats and their lovers; return the dead in order."""
    queue = list(seats)
    dead: list[int] = []
    while queue:
        seat = queue.pop(0)
        player = tx.state.player(seat)
        if not player.alive:
            continue
        tx.put_player(evolve(player, alive=False, revealed=True))
        dead.append(seat)
        other = partner(tx.state, player)
        if other is not None:
            queue.append(other)
        if tx.state.captain == seat:
            tx.change(captain=None, successor_due=seat)
    if dead:
        tx.change(deaths_this_round=tx.state.deaths_this_round + len(dead))
    return dead


def death_list(tx: Tx, dead: list[int]) -> list[Json]:
    """The public record of deaths: house number and the now revealed role."""
    return [{"seat": s, "role": tx.state.player(s).role.value} for s in dead]
