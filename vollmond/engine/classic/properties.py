"""Read-only questions many rules ask, answered from the role spec a player holds."""

from __future__ import annotations

from vollmond.engine.classic.state import GameState, Player
from vollmond.engine.classic.types import Team


def pack(state: GameState, *, living_only: bool = True) -> frozenset[int]:
    """Werewolf cards (werewolf, seeing and black werewolf): whom the village must remove
    (A1) and the pact maker is told of (A12)."""
    return frozenset(p.seat for p in state.players if p.spec.wolf and (p.alive or not living_only))


def wolves_room(state: GameState, *, living_only: bool = True) -> frozenset[int]:
    """Who wakes in the wolves' step: the pack and the false wolf (A10)."""
    return frozenset(
        p.seat for p in state.players if p.spec.wakes_with_wolves and (p.alive or not living_only)
    )


def on_wolves_side(player: Player) -> bool:
    """Counted with the wolves for A1's majority: the pack and the pact maker (A12)."""
    return player.spec.team is Team.WOLVES


def mixed_lovers(state: GameState) -> bool:
    """A1's exception: lovers from both sides play for themselves."""
    lovers = [p for p in state.players if p.lover]
    return len(lovers) == 2 and on_wolves_side(lovers[0]) != on_wolves_side(lovers[1])


def lovers(state: GameState) -> frozenset[int]:
    return frozenset(p.seat for p in state.players if p.lover)


def partner(state: GameState, player: Player) -> int | None:
    if not player.lover:
        return None
    return next((p.seat for p in state.players if p.lover and p.seat != player.seat), None)
