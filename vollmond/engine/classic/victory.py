"""Who wins (A1, A4, A14); checked after every command and between every two stages."""

from __future__ import annotations

from vollmond.engine.classic.codes import Ev
from vollmond.engine.classic.properties import lovers, mixed_lovers, on_wolves_side
from vollmond.engine.classic.state import GameState, Outcome
from vollmond.engine.classic.tx import Tx
from vollmond.engine.classic.types import Phase, Side, Team
from vollmond.engine.core import Audience


def decide(state: GameState) -> Outcome | None:
    """A1: the village wins when no werewolf card lives; the wolves when the living on their
    side are at least as many as the rest. The exception: lovers from both sides play for
    themselves and win when they are the last two alive; they never win with a team."""
    living = [p for p in state.players if p.alive]
    pair = lovers(state)
    mixed = mixed_lovers(state)
    if mixed and len(living) == 2 and {p.seat for p in living} == pair:
        return Outcome((Side.LOVERS,), pair)
    outsiders = pair if mixed else frozenset()
    if not any(p.spec.wolf for p in living):
        return Outcome((Side.VILLAGE,), _team(state, Team.VILLAGE) - outsiders)
    wolves_side = sum(1 for p in living if on_wolves_side(p))
    if wolves_side >= len(living) - wolves_side:
        return Outcome((Side.WOLVES,), _team(state, Team.WOLVES) - outsiders)
    return None


def _team(state: GameState, team: Team) -> frozenset[int]:
    return frozenset(p.seat for p in state.players if p.spec.team is team)


def finish(tx: Tx, outcome: Outcome) -> None:
    tx.change(phase=Phase.OVER, phase_seq=tx.state.phase_seq + 1, step=None, outcome=outcome)
    tx.emit(
        Ev.GAME_OVER,
        Audience.public(),
        sides=[s.value for s in outcome.sides],
        winners=sorted(outcome.winners),
        roles={str(p.seat): p.role.value for p in tx.state.players},
        lovers=sorted(lovers(tx.state)),
    )


def settle(tx: Tx) -> bool:
    """End the game if it is decided; True when it is over."""
    if tx.state.phase is Phase.OVER:
        return True
    outcome = decide(tx.state)
    if outcome is None:
        return False
    finish(tx, outcome)
    return True
