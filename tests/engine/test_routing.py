"""Who hears whom (DESIGN §2): the routing table derived from the game state.

Seat layout: 1, 2 evil; 3 seer; 4 doctor; 5, 6 filler; 7 defector (where present).
"""

from __future__ import annotations

import pytest

from tests.scenario import Scenario
from vollmond.engine.standard import CallSettings
from vollmond.engine.standard.routing import (
    DUCKED,
    FULL,
    HALB_GAIN,
    SPECTATORS,
    Listener,
    routing,
)
from vollmond.engine.standard.types import CallStatus, DayCallModes, Phase

TABLE = "evil evil seer doctor filler filler"
DAY_CALLS = CallSettings(by_day=True, day_modes=DayCallModes.BOTH)


def hears(g: Scenario, listener: Listener) -> dict[int, float]:
    """Source seat -> gain for one listener; a source appears at most once."""
    routes = routing(g.state)[listener]
    sources = [r.source for r in routes]
    assert len(sources) == len(set(sources)), f"{listener} hears a source twice: {routes}"
    return {r.source: r.gain for r in routes}


def audible_sources(g: Scenario) -> set[int]:
    """Every seat that anybody at all hears."""
    return {r.source for routes in routing(g.state).values() for r in routes}


def listeners_of(g: Scenario, source: int) -> set[Listener]:
    return {
        listener
        for listener, routes in routing(g.state).items()
        if any(r.source == source for r in routes)
    }


# --- by day: the market place ----------------------------------------------------------------


@pytest.mark.rule("D2")
def test_by_day_every_living_player_hears_every_other_market_speaker() -> None:
    g = Scenario(TABLE).to_day()
    assert g.phase is Phase.DAY
    for seat in range(1, 7):
        assert hears(g, seat) == {s: FULL for s in range(1, 7) if s != seat}


@pytest.mark.rule("D1", "D2")
def test_the_morning_is_heard_in_the_market_too() -> None:
    g = Scenario(TABLE).run("timeout")
    assert g.phase is Phase.MORNING
    assert hears(g, 3) == {1: FULL, 2: FULL, 4: FULL, 5: FULL, 6: FULL}


@pytest.mark.rule("D6")
def test_the_dead_hear_the_market_but_are_no_source() -> None:
    g = Scenario(TABLE).run("evil 1,2 -> 5; timeout; timeout")
    assert g.dead == {5} and g.phase is Phase.DAY
    assert hears(g, 5) == {1: FULL, 2: FULL, 3: FULL, 4: FULL, 6: FULL}
    assert listeners_of(g, 5) == set()
    for seat in (1, 2, 3, 4, 6):
        assert 5 not in hears(g, seat)


@pytest.mark.rule("D6", "X6")
def test_spectators_hear_the_market_only_the_living() -> None:
    g = Scenario(TABLE).run("evil 1,2 -> 5; timeout; timeout")
    assert hears(g, SPECTATORS) == {1: FULL, 2: FULL, 3: FULL, 4: FULL, 6: FULL}


@pytest.mark.rule("D3")
def test_the_vote_is_held_in_the_market() -> None:
    g = Scenario(TABLE).to_day().run("nominate 3 -> 1; timeout")
    assert g.phase is Phase.VOTE
    assert hears(g, 4) == {1: FULL, 2: FULL, 3: FULL, 5: FULL, 6: FULL}
    assert hears(g, SPECTATORS) == dict.fromkeys(range(1, 7), FULL)


# --- at night: the night room and the cells --------------------------------------------------


@pytest.mark.rule("N1", "S12")
def test_at_night_the_evil_team_hears_each_other_not_the_defector() -> None:
    g = Scenario(TABLE + " defector")
    assert g.phase is Phase.NIGHT
    assert hears(g, 1) == {2: FULL}
    assert hears(g, 2) == {1: FULL}
    assert hears(g, 7) == {}
    assert listeners_of(g, 7) == set()
    assert listeners_of(g, 1) == {2}


@pytest.mark.rule("N1")
def test_at_night_villagers_hear_nothing_in_their_cells() -> None:
    g = Scenario(TABLE)
    for seat in (3, 4, 5, 6):
        assert hears(g, seat) == {}
        assert listeners_of(g, seat) == set()


@pytest.mark.rule("N1", "X6")
def test_spectators_never_hear_the_night_room() -> None:
    g = Scenario(TABLE)
    assert hears(g, SPECTATORS) == {}


@pytest.mark.rule("N1", "D6")
def test_a_dead_evil_player_leaves_the_night_room() -> None:
    g = Scenario("evil evil evil seer doctor filler filler filler filler")
    g.to_day().run("nominate 4 -> 1; timeout; vote 1,2,3,4,5,6,7,8,9 -> 1")
    assert g.dead == {1} and g.phase is Phase.NIGHT
    assert hears(g, 2) == {3: FULL}
    assert hears(g, 3) == {2: FULL}
    assert hears(g, 1) == {}
    assert listeners_of(g, 1) == set()


# --- private calls ---------------------------------------------------------------------------


@pytest.mark.rule("C1", "C6", "X6")
def test_a_night_call_the_two_hear_each_other_and_nobody_else_hears_them() -> None:
    g = Scenario(TABLE).run("call 3 -> 4; accept 4")
    assert hears(g, 3) == {4: FULL}
    assert hears(g, 4) == {3: FULL}
    assert listeners_of(g, 3) == {4}
    assert listeners_of(g, 4) == {3}
    assert hears(g, SPECTATORS) == {}


@pytest.mark.rule("C2")
def test_ringing_connects_nobody_yet() -> None:
    g = Scenario(TABLE).run("call 3 -> 4")
    assert hears(g, 3) == {} and hears(g, 4) == {}
    g.run("hangup 3; call 1 -> 5")
    assert hears(g, 1) == {2: FULL}  # still in the night room while it rings
    assert hears(g, 5) == {}


@pytest.mark.rule("C4", "C5")
def test_after_the_call_the_player_is_back_in_the_cell() -> None:
    g = Scenario(TABLE).run("call 3 -> 4; accept 4; hangup 4")
    assert hears(g, 3) == {} and hears(g, 4) == {}
    g.run("call 3 -> 4; accept 4; call-timeout")
    assert hears(g, 3) == {} and hears(g, 4) == {}


@pytest.mark.rule("C7", "N1")
def test_an_evil_player_in_a_night_call_leaves_the_night_room_meanwhile() -> None:
    """Decision: one place at a time. While evil 1 talks to 5, the night room (here only 2)
    does not hear 1 and 1 does not hear it, so the callee can never overhear the room
    through the caller's line. The room itself stays (C7) and 1 returns after the call."""
    g = Scenario("evil evil evil seer doctor filler filler filler filler")
    g.run("call 1 -> 6; accept 6")
    assert hears(g, 1) == {6: FULL}
    assert hears(g, 6) == {1: FULL}
    assert hears(g, 2) == {3: FULL}
    assert hears(g, 3) == {2: FULL}
    assert listeners_of(g, 2) == {3}
    g.run("hangup 6")
    assert hears(g, 1) == {2: FULL, 3: FULL}


@pytest.mark.rule("C3", "C1")
def test_two_calls_at_once_stay_apart() -> None:
    g = Scenario(TABLE).run("call 3 -> 4; accept 4; call 5 -> 6; accept 6")
    assert hears(g, 3) == {4: FULL}
    assert hears(g, 5) == {6: FULL}
    assert listeners_of(g, 5) == {6}


@pytest.mark.rule("C9", "C6", "X6")
def test_a_stumm_day_call_is_private_and_away_from_the_market() -> None:
    g = Scenario(TABLE, calls=DAY_CALLS).to_day().run("call 3 -> 4; accept 4")
    assert hears(g, 3) == {4: FULL}
    assert hears(g, 4) == {3: FULL}
    assert hears(g, 5) == {1: FULL, 2: FULL, 6: FULL}
    assert hears(g, SPECTATORS) == {1: FULL, 2: FULL, 5: FULL, 6: FULL}
    assert listeners_of(g, 3) == {4}


@pytest.mark.rule("C9")
def test_halbmodus_hears_the_market_quietly_and_is_no_market_source() -> None:
    g = Scenario(TABLE, calls=DAY_CALLS).to_day().run("call 3 -> 4; accept 4; toggle 3")
    assert hears(g, 3) == {4: FULL, 1: HALB_GAIN, 2: HALB_GAIN, 5: HALB_GAIN, 6: HALB_GAIN}
    assert hears(g, 4) == {3: FULL}  # the partner stays stumm
    assert listeners_of(g, 3) == {4}  # the market never hears a halb participant
    assert hears(g, 5) == {1: FULL, 2: FULL, 6: FULL}
    assert hears(g, SPECTATORS) == {1: FULL, 2: FULL, 5: FULL, 6: FULL}


@pytest.mark.rule("C9")
def test_halb_only_setting_routes_the_market_underneath_for_both() -> None:
    g = Scenario(TABLE, calls=CallSettings(by_day=True, day_modes=DayCallModes.HALB))
    g.to_day().run("call 3 -> 4; accept 4")
    assert hears(g, 3) == {4: FULL, 1: HALB_GAIN, 2: HALB_GAIN, 5: HALB_GAIN, 6: HALB_GAIN}
    assert hears(g, 4) == {3: FULL, 1: HALB_GAIN, 2: HALB_GAIN, 5: HALB_GAIN, 6: HALB_GAIN}


@pytest.mark.rule("C8", "C9")
def test_when_voting_starts_call_participants_are_back_in_the_market() -> None:
    g = Scenario(TABLE, calls=DAY_CALLS).to_day()
    g.run("call 3 -> 4; accept 4; nominate 5 -> 1; timeout")
    assert g.phase is Phase.VOTE
    assert hears(g, 3) == {1: FULL, 2: FULL, 4: FULL, 5: FULL, 6: FULL}
    assert listeners_of(g, 3) == {1, 2, 4, 5, 6, SPECTATORS}


# --- séance ----------------------------------------------------------------------------------


@pytest.mark.rule("S8", "C6", "X6")
def test_seance_the_necromancer_and_the_dead_hear_each_other() -> None:
    g = Scenario("evil evil necromancer doctor filler filler filler")
    g.run("evil 1,2 -> 5; timeout").to_day()
    g.run("nominate 3 -> 6; timeout; vote 1,2,3,4,6,7 -> 0")
    assert g.phase is Phase.NIGHT and g.dead == {5}
    assert hears(g, 5) == {}  # the dead hear nothing at night
    g.run("seance 3 -> 5")
    assert hears(g, 3) == {5: FULL}
    assert hears(g, 5) == {3: FULL}
    assert listeners_of(g, 5) == {3}
    assert hears(g, SPECTATORS) == {}
    g.run("hangup 5")  # either side may hang up
    assert hears(g, 3) == {} and hears(g, 5) == {}


# --- interjection ----------------------------------------------------------------------------


@pytest.mark.rule("S19")
def test_interjection_the_floor_holder_at_full_others_ducked() -> None:
    g = Scenario(TABLE).to_day().run("interject 4")
    assert hears(g, 3) == {4: FULL, 1: DUCKED, 2: DUCKED, 5: DUCKED, 6: DUCKED}
    assert hears(g, 4) == {1: DUCKED, 2: DUCKED, 3: DUCKED, 5: DUCKED, 6: DUCKED}
    assert hears(g, SPECTATORS)[4] == FULL
    assert hears(g, SPECTATORS)[3] == DUCKED
    g.run("floor-timeout")
    assert hears(g, 3) == {1: FULL, 2: FULL, 4: FULL, 5: FULL, 6: FULL}


@pytest.mark.rule("S19", "C9")
def test_interjection_reaches_a_halb_participant_quietly() -> None:
    g = Scenario(TABLE, calls=DAY_CALLS).to_day()
    g.run("call 3 -> 4; accept 4; toggle 3; interject 5")
    assert hears(g, 3) == {
        4: FULL,
        5: FULL * HALB_GAIN,
        1: DUCKED * HALB_GAIN,
        2: DUCKED * HALB_GAIN,
        6: DUCKED * HALB_GAIN,
    }


# --- invariants over a whole little game ------------------------------------------------------


@pytest.mark.rule("C6", "X6", "N1")
def test_no_call_or_night_voice_ever_reaches_spectators() -> None:
    g = Scenario(TABLE + " filler", calls=DAY_CALLS)
    steps = [
        "call 3 -> 4",
        "accept 4",
        "call 1 -> 5",
        "accept 5",
        "evil 1,2 -> 6",
        "timeout",
        "call 3 -> 7",
        "accept 7",
        "toggle 7",
        "timeout",
        "nominate 3 -> 1",
    ]
    for step in steps:
        g.run(step)
        spectators = hears(g, SPECTATORS)
        if g.phase is Phase.NIGHT:
            assert spectators == {}
        talking = [c for c in g.state.calls if c.status is CallStatus.ACTIVE]
        busy = {s for c in talking for s in (c.caller, c.callee)}
        assert not busy & spectators.keys()
        assert set(spectators) <= g.alive
    assert audible_sources(g) <= g.alive
