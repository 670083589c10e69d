"""What each seat did in a finished standard game (`ScoresSeats`): karma's facts (P3).

Read from the final state (winners, the living, roles) and the accepted commands (the day's
votes and a seat's own `Leave`). A special role is one with more to do than the plain
villager's or the pack's shared night vote: an ability of its own or a trait.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from vollmond.engine.ruleset import SeatResult
from vollmond.engine.standard.commands import Leave, Vote
from vollmond.engine.standard.roles.base import RoleSpec
from vollmond.engine.standard.state import GameState
from vollmond.engine.standard.types import ActionKind


def is_special(spec: RoleSpec) -> bool:
    return bool(spec.traits) or any(a.kind is not ActionKind.EVIL_VOTE for a in spec.abilities)


def seat_results(state: GameState, commands: Sequence[Any]) -> Mapping[int, SeatResult]:
    votes: dict[int, int] = {}
    left: set[int] = set()
    for command in commands:
        if isinstance(command, Vote) and command.target is not None:
            votes[command.actor] = votes.get(command.actor, 0) + 1
        elif isinstance(command, Leave):
            left.add(command.actor)
    winners = state.outcome.winners if state.outcome is not None else frozenset()
    return {
        player.seat: SeatResult(
            won=player.seat in winners,
            survived=player.alive,
            special_role=is_special(player.spec),
            votes=votes.get(player.seat, 0),
            left=player.seat in left,
        )
        for player in state.players
    }
