"""Who wins (V1-V3, S11, S13), checked after every death and at each new night."""

from __future__ import annotations

from vollmond.engine.core import Audience
from vollmond.engine.kit.kept import MISSING, Kept
from vollmond.engine.standard.codes import Ev
from vollmond.engine.standard.properties import has_trait, on_team
from vollmond.engine.standard.state import GameState, Outcome, Player
from vollmond.engine.standard.tx import Tx
from vollmond.engine.standard.types import Phase, Side, Team, Trait

DECIDED_KEPT = 256
_decided: Kept[tuple[Player, ...], Outcome | None] = Kept(DECIDED_KEPT)


def decide(state: GameState) -> Outcome | None:
    """The outcome if the game is decided now, else None.

    Asked after every command, but it reads only the players, and most commands (votes,
    nominations, calls) leave the players' tuple as it was: the answer is kept by the tuple's
    identity (the entry holds the tuple, so its id cannot be reused while kept)."""
    players = state.players
    hit = _decided.get(players)
    if hit is not MISSING:
        return hit
    return _decided.put(players, _decide(players))


def _decide(players: tuple[Player, ...]) -> Outcome | None:
    living = [p for p in players if p.alive]
    lovers = [p for p in players if p.lover]
    lovers_alive = len(lovers) == 2 and all(p.alive for p in lovers)
    if lovers_alive and len(living) == 2:
        return Outcome((Side.LOVERS,), frozenset(p.seat for p in lovers))
    evil = sum(1 for p in living if p.spec.counts_for_evil_majority)
    if evil == 0:
        main = Side.VILLAGE
        winners = {p.seat for p in players if on_team(p, Team.VILLAGE)}
    elif evil >= len(living) - evil:
        main = Side.EVIL
        winners = {p.seat for p in players if on_team(p, Team.EVIL)}
    else:
        return None
    sides = [main]
    if lovers_alive:
        sides.append(Side.LOVERS)
        winners |= {p.seat for p in lovers}
    foxes = {p.seat for p in living if has_trait(p, Trait.WINS_IF_ALIVE)}
    if foxes:
        sides.append(Side.FOX)
        winners |= foxes
    return Outcome(tuple(sides), frozenset(winners))


def finish(tx: Tx, outcome: Outcome) -> None:
    tx.change(phase=Phase.OVER, phase_seq=tx.state.phase_seq + 1, outcome=outcome, calls=())
    tx.emit(
        Ev.GAME_OVER,
        Audience.public(),
        sides=[s.value for s in outcome.sides],
        winners=sorted(outcome.winners),
        roles={str(p.seat): p.role.value for p in tx.state.players},
        lovers=[p.seat for p in tx.state.players if p.lover],
    )


def settle(tx: Tx) -> bool:
    """End the game if it is decided; True when it ended. (`decide`, asked after every
    command: its kept answer is looked up here, without a call of its own.)"""
    players = tx.state.players
    outcome = _decided.get(players)
    if outcome is MISSING:
        outcome = _decided.put(players, _decide(players))
    if outcome is None:
        return False
    finish(tx, outcome)
    return True
