"""Dying: bonded partners follow (twins S10, lovers S11), roles are revealed (D1, D5),
and a dead player's call ends (C6)."""

from __future__ import annotations

from collections.abc import Iterable

from vollmond.engine.core import Audience, Json, evolve
from vollmond.engine.standard.codes import Ev
from vollmond.engine.standard.properties import bonded_partners
from vollmond.engine.standard.tx import Tx
from vollmond.engine.standard.types import CallEndReason


def kill(tx: Tx, seats: Iterable[int]) -> list[int]:
    """Kill the given seats and everyone bonded to them; return the dead in order."""
    queue = list(seats)
    dead: list[int] = []
    while queue:
        seat = queue.pop(0)
        player = tx.state.player(seat)
        if not player.alive:
            continue
        tx.put_player(evolve(player, alive=False, revealed=True))
        dead.append(seat)
        queue.extend(sorted(bonded_partners(tx.state, player)))
    if dead:
        tx.change(deaths_this_round=tx.state.deaths_this_round + len(dead))
        end_calls_of(tx, set(dead), CallEndReason.DEATH)
        _drop_dead_nominees(tx, set(dead))
    return dead


def _drop_dead_nominees(tx: Tx, dead: set[int]) -> None:
    """Someone shot or killed by day is no longer up for the vote (D3, D6)."""
    day = tx.state.day
    if day is None or not dead & set(day.nominations.values()):
        return
    kept = {by: nominee for by, nominee in day.nominations.items() if nominee not in dead}
    tx.change(day=evolve(day, nominations=kept))


def end_calls_of(tx: Tx, seats: set[int] | None, reason: CallEndReason) -> None:
    """End every call touching `seats` (all calls when None)."""
    keep = []
    for call in tx.state.calls:
        if seats is None or call.caller in seats or call.callee in seats:
            tx.emit(
                Ev.CALL_ENDED,
                Audience.to(call.caller, call.callee),
                call=call.id,
                reason=reason.value,
                kind=call.kind.value,
            )
        else:
            keep.append(call)
    if len(keep) != len(tx.state.calls):
        tx.change(calls=tuple(keep))


def death_list(tx: Tx, dead: list[int]) -> list[Json]:
    """The public record of deaths: house number and the now revealed role."""
    return [{"seat": s, "role": tx.state.player(s).role.value} for s in dead]
