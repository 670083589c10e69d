"""Moving on as soon as everyone needed has acted: the vote when every eligible voter voted,
the steal step when every vagabond chose, the victim when the whole night room voted.

Called after anything that can complete a step: a vote, a vote transfer, a player leaving.
"""

from __future__ import annotations

from vollmond.engine.standard.abilities.night import lock_victim
from vollmond.engine.standard.phases import end_vote, start_main_step
from vollmond.engine.standard.properties import night_room, spec_of
from vollmond.engine.standard.state import GameState
from vollmond.engine.standard.tx import Tx
from vollmond.engine.standard.types import ActionKind, NightStep, Phase
from vollmond.engine.standard.voting import eligible_voters


def all_stole(state: GameState) -> bool:
    night = state.night
    assert night is not None
    return all(
        night.acted(p.seat, ActionKind.STEAL)
        for p in state.living()
        if spec_of(p).ability(ActionKind.STEAL) is not None
    )


def advance_if_complete(tx: Tx) -> None:
    state = tx.state
    if state.phase is Phase.VOTE:
        day = state.day
        assert day is not None
        if eligible_voters(state, day) <= day.votes.keys():
            end_vote(tx)
    elif state.phase is Phase.NIGHT:
        night = state.night
        assert night is not None
        if night.step is NightStep.STEAL:
            if all_stole(state):
                start_main_step(tx)
        elif not night.victim_locked:
            room = night_room(state)
            if room and room <= night.evil_votes.keys():
                lock_victim(tx)
