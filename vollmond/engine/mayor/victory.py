"""Who wins (B7), checked after every command and between every two stages.

The game ends as soon as all Nazis or all democrats are out (dead or in prison). A lover pair
of one Nazi and one democrat does not win with either team: it wins only if nobody but the
two is left. A pair of the same team simply wins with its team.
"""

from __future__ import annotations

from vollmond.engine.core import Audience
from vollmond.engine.mayor.codes import Ev
from vollmond.engine.mayor.state import MayorState, Outcome
from vollmond.engine.mayor.tx import Tx
from vollmond.engine.mayor.types import Side, Stage, Team


def mixed_lovers(state: MayorState) -> frozenset[int]:
    """The lover pair if it is one Nazi and one democrat, else nobody."""
    lovers = [state.player(s) for s in state.lovers()]
    if len(lovers) == 2 and lovers[0].team is not lovers[1].team:
        return frozenset(p.seat for p in lovers)
    return frozenset()


def decide(state: MayorState) -> Outcome | None:
    living = state.living_seats()
    mixed = mixed_lovers(state)
    if mixed and living == mixed:
        return Outcome(Side.LOVERS, mixed)
    nazis = sum(1 for p in state.living() if p.team is Team.NAZIS)
    democrats = len(living) - nazis
    if nazis == 0 and democrats == 0:
        return Outcome(Side.DRAW, frozenset())
    if nazis == 0:
        return _team_wins(state, Side.DEMOCRATS, Team.DEMOCRATS, mixed)
    if democrats == 0:
        return _team_wins(state, Side.NAZIS, Team.NAZIS, mixed)
    return None


def _team_wins(state: MayorState, side: Side, team: Team, mixed: frozenset[int]) -> Outcome:
    """The whole team wins, the out ones too, except a member of a mixed lover pair."""
    return Outcome(side, frozenset(p.seat for p in state.players if p.team is team) - mixed)


def finish(tx: Tx, outcome: Outcome) -> None:
    state = tx.state
    tx.change(
        stage=Stage.OVER,
        phase_seq=state.phase_seq + 1,
        outcome=outcome,
        floor=None,
        ballot=None,
        night=None,
    )
    tx.emit(
        Ev.GAME_OVER,
        Audience.public(),
        side=outcome.side.value,
        winners=sorted(outcome.winners),
        roles={str(p.seat): p.role.id for p in state.players},
        lovers=list(state.lovers()),
    )


def settle(tx: Tx) -> bool:
    """End the game if it is decided; True when it ended."""
    if tx.state.outcome is not None:
        return True
    outcome = decide(tx.state)
    if outcome is None:
        return False
    finish(tx, outcome)
    return True
