"""The evening vote's count (D3-D5, S15, S16)."""

from __future__ import annotations

from collections import Counter

from vollmond.engine.core import Audience, evolve
from vollmond.engine.standard.codes import Ev
from vollmond.engine.standard.deaths import death_list, kill
from vollmond.engine.standard.properties import has_trait
from vollmond.engine.standard.state import DayState, GameState
from vollmond.engine.standard.tx import Tx
from vollmond.engine.standard.types import Trait


def vote_weight(state: GameState, day: DayState, voter: int) -> int:
    """One vote, plus one for each vote-giver who handed theirs over (and still lives)."""
    received = sum(
        1 for giver, to in day.transfers.items() if to == voter and state.player(giver).alive
    )
    return 1 + received


def eligible_voters(state: GameState, day: DayState) -> frozenset[int]:
    return frozenset(p.seat for p in state.living() if p.seat not in day.transfers)


def tally(state: GameState, day: DayState) -> Counter[int]:
    """Votes of the living for the living: a vote cast for a nominee who has left since
    counts for nobody, like an abstention (it cannot be changed, D3)."""
    counts: Counter[int] = Counter()
    for voter, target in day.votes.items():
        if target is not None and state.player(voter).alive and state.player(target).alive:
            counts[target] += vote_weight(state, day, voter)
    return counts


def winner_of(counts: Counter[int]) -> int | None:
    """Simple majority among the nominees: strictly the most votes; a tie or none, nobody."""
    if not counts:
        return None
    ranked = counts.most_common()
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return None
    return ranked[0][0]


def resolve_vote(tx: Tx) -> None:
    day = tx.state.day
    assert day is not None
    counts = tally(tx.state, day)
    banished = winner_of(counts)
    spared = False
    dead: list[int] = []
    if banished is not None:
        player = tx.state.player(banished)
        pardon = Trait.SURVIVES_FIRST_BANISHMENT
        if has_trait(player, pardon) and pardon not in player.role_state.used_traits:
            spared = True
            pardoned = player.with_role_state(player.role_state.with_used(pardon))
            tx.put_player(evolve(pardoned, revealed=True))
        else:
            tx.change(last_banished=banished)
            dead = kill(tx, [banished])
    tx.emit(
        Ev.VOTE_RESULT,
        Audience.public(),
        tally={str(t): n for t, n in sorted(counts.items())},
        votes={str(v): t for v, t in sorted(day.votes.items())},
        banished=banished,
        role=tx.state.player(banished).role.value if banished is not None else None,
        spared=spared,
        dead=death_list(tx, dead),
    )
