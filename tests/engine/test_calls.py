"""Private calls ("Nachtruf", C1-C9): placing, ringing, busy, hang-up, limits, modes, chat.

Seat layout used by most tests: 1, 2 evil; 3 seer; 4 doctor; 5, 6 filler.
"""

from __future__ import annotations

import pytest

from tests.scenario import Scenario
from vollmond.engine.core import Viewer
from vollmond.engine.standard import CallSettings, CallTimeout, GameOptions, HangUp, PlaceCall
from vollmond.engine.standard.codes import Ev, Rej
from vollmond.engine.standard.state import Call
from vollmond.engine.standard.types import CallMode, CallStatus, DayCallModes, Phase
from vollmond.engine.standard.view import view

TABLE = "evil evil seer doctor filler filler"
CALL_CODES = {
    Ev.CALL_OUTGOING,
    Ev.CALL_INCOMING,
    Ev.CALL_BUSY,
    Ev.CALL_CONNECTED,
    Ev.CALL_DECLINED,
    Ev.CALL_MISSED,
    Ev.CALL_ENDED,
    Ev.CALL_MODE_CHANGED,
    Ev.SEANCE_OPENED,
}
DAY_CALLS = CallSettings(by_day=True, day_modes=DayCallModes.BOTH)


def only_call(g: Scenario) -> Call:
    assert len(g.state.calls) == 1
    return g.state.calls[0]


def call_events(g: Scenario, seat: int) -> list[str]:
    return [e.code for e in g.events_for(seat) if e.code in CALL_CODES]


def spectator_call_events(g: Scenario) -> list[str]:
    spectator = Viewer.spectator()
    return [e.code for e in g.events if e.audience.includes(spectator) and e.code in CALL_CODES]


def reaching(g: Scenario, code: str) -> set[int]:
    """The seats that the most recent event `code` reaches."""
    event = g.last(code)
    return {p.seat for p in g.state.players if event.audience.includes(Viewer.player(p.seat))}


# --- C1: placing a call reaches only the two ------------------------------------------------


@pytest.mark.rule("C1", "C6", "X6")
def test_night_call_reaches_only_caller_and_callee() -> None:
    g = Scenario(TABLE)
    outsider_before = g.view(5)
    spectator_before = view(g.state, Viewer.spectator())
    g.run("call 3 -> 4")
    assert g.last(Ev.CALL_OUTGOING).params["callee"] == 4
    assert reaching(g, Ev.CALL_OUTGOING) == {3}
    assert reaching(g, Ev.CALL_INCOMING) == {4}
    g.run("accept 4")
    assert reaching(g, Ev.CALL_CONNECTED) == {3, 4}
    call = only_call(g)
    assert (call.caller, call.callee, call.status) == (3, 4, CallStatus.ACTIVE)
    assert g.view(3)["me"]["call"]["with"] == 4
    assert g.view(4)["me"]["call"]["with"] == 3
    # A third player and a spectator learn nothing: no event, and an unchanged view.
    for outsider in (1, 2, 5, 6):
        assert call_events(g, outsider) == []
    assert spectator_call_events(g) == []
    assert g.view(5) == outsider_before
    assert view(g.state, Viewer.spectator()) == spectator_before


@pytest.mark.rule("C1")
def test_cannot_call_oneself_or_an_unknown_house() -> None:
    g = Scenario(TABLE)
    assert g.refused("call 3 -> 3") == Rej.TARGET_SELF
    assert g.refused("call 3 -> 9") == Rej.TARGET_UNKNOWN
    assert g.state.calls == ()


# --- C2: ringing, accept 1, decline 2, ringing stops by itself -------------------------------


@pytest.mark.rule("C2")
def test_callee_hears_the_callers_house_number_and_accepts() -> None:
    g = Scenario(TABLE)
    g.run("call 5 -> 3")
    incoming = g.events_for(3, Ev.CALL_INCOMING)
    assert [e.params["caller"] for e in incoming] == [5]
    assert only_call(g).status is CallStatus.RINGING
    assert g.view(3)["me"]["call"]["incoming"] is True
    g.run("accept 3")
    assert only_call(g).status is CallStatus.ACTIVE
    connected = g.last(Ev.CALL_CONNECTED).params
    assert (connected["caller"], connected["callee"]) == (5, 3)


@pytest.mark.rule("C2")
def test_only_the_callee_can_answer() -> None:
    g = Scenario(TABLE)
    g.run("call 5 -> 3")
    assert g.refused("accept 5") == Rej.NO_INCOMING_CALL
    assert g.refused("accept 6") == Rej.NO_INCOMING_CALL
    g.run("accept 3")
    assert g.refused("accept 3") == Rej.NO_INCOMING_CALL


@pytest.mark.rule("C2")
def test_decline_ends_the_ringing_for_both() -> None:
    g = Scenario(TABLE)
    g.run("call 5 -> 3; decline 3")
    assert g.state.calls == ()
    assert reaching(g, Ev.CALL_DECLINED) == {3, 5}
    assert g.last(Ev.CALL_DECLINED).params["callee"] == 3
    assert Ev.CALL_CONNECTED not in call_events(g, 5)
    g.run("call 5 -> 4")  # free again
    assert only_call(g).callee == 4


@pytest.mark.rule("C2")
def test_ringing_stops_by_itself() -> None:
    g = Scenario(TABLE, calls=CallSettings(ring_s=15.0))
    g.run("call 5 -> 3")
    call_id = only_call(g).id
    ring_timers = [t for t in g.timers if t.command == CallTimeout(call_id, active=False)]
    assert [t.delay_s for t in ring_timers] == [15.0]
    g.run("ring-timeout")
    assert g.state.calls == ()
    assert reaching(g, Ev.CALL_MISSED) == {3, 5}
    assert g.refused("accept 3") == Rej.NO_INCOMING_CALL


@pytest.mark.rule("C2")
def test_ring_timer_after_answer_is_stale() -> None:
    g = Scenario(TABLE)
    g.run("call 5 -> 3; accept 3")
    call_id = only_call(g).id
    refused = g.send(CallTimeout(call_id, active=False))
    assert refused is not None and refused.code == Rej.STALE_TIMER
    assert only_call(g).status is CallStatus.ACTIVE


# --- C3: busy --------------------------------------------------------------------------------


@pytest.mark.rule("C3")
@pytest.mark.parametrize("answered", [False, True])
def test_calling_someone_in_a_call_is_busy_for_the_caller_only(answered: bool) -> None:
    g = Scenario(TABLE)
    g.run("call 3 -> 4" + ("; accept 4" if answered else ""))
    before_pair = call_events(g, 3) + call_events(g, 4)
    calls_before = g.state.calls
    for target in (3, 4):
        g.run(f"call 5 -> {target}")
        busy = g.last(Ev.CALL_BUSY)
        assert busy.params["callee"] == target
        assert reaching(g, Ev.CALL_BUSY) == {5}
    assert call_events(g, 3) + call_events(g, 4) == before_pair
    assert g.state.calls == calls_before
    assert g.state.call_of(5) is None
    assert spectator_call_events(g) == []


@pytest.mark.rule("C3", "C8")
def test_a_busy_signal_does_not_count_against_the_limit() -> None:
    g = Scenario(TABLE, calls=CallSettings(per_night=1))
    g.run("call 3 -> 4; call 5 -> 3")
    assert g.last(Ev.CALL_BUSY).params["callee"] == 3
    g.run("call 5 -> 6")
    placed = g.state.call_of(5)
    assert placed is not None and (placed.callee, placed.status) == (6, CallStatus.RINGING)
    assert g.state.calls_placed == {3: 1, 5: 1}


@pytest.mark.rule("C3")
def test_someone_in_a_call_cannot_place_another() -> None:
    g = Scenario(TABLE)
    g.run("call 3 -> 4")
    assert g.refused("call 3 -> 5") == Rej.IN_CALL
    assert g.refused("call 4 -> 5") == Rej.IN_CALL
    g.run("accept 4")
    assert g.refused("call 4 -> 5") == Rej.IN_CALL


# --- C4: hang up -----------------------------------------------------------------------------


@pytest.mark.rule("C4")
@pytest.mark.parametrize("who", [3, 4])
def test_either_side_hangs_up_an_active_call(who: int) -> None:
    g = Scenario(TABLE)
    g.run(f"call 3 -> 4; accept 4; hangup {who}")
    assert g.state.calls == ()
    ended = g.last(Ev.CALL_ENDED)
    assert ended.params["reason"] == "hung_up"
    assert reaching(g, Ev.CALL_ENDED) == {3, 4}
    assert g.view(3)["me"]["call"] is None
    assert g.view(4)["me"]["call"] is None


@pytest.mark.rule("C4")
@pytest.mark.parametrize("who", [3, 4])
def test_either_side_hangs_up_while_ringing(who: int) -> None:
    g = Scenario(TABLE)
    g.run(f"call 3 -> 4; hangup {who}")
    assert g.state.calls == ()
    assert g.last(Ev.CALL_ENDED).params["reason"] == "hung_up"
    assert reaching(g, Ev.CALL_ENDED) == {3, 4}
    assert g.refused("accept 4") == Rej.NO_INCOMING_CALL


@pytest.mark.rule("C4")
def test_hang_up_without_a_call_is_refused() -> None:
    g = Scenario(TABLE)
    assert g.refused("hangup 3") == Rej.NOT_IN_CALL
    g.run("call 3 -> 4; accept 4; hangup 4")
    assert g.refused("hangup 3") == Rej.NOT_IN_CALL


@pytest.mark.rule("C4", "C5")
def test_max_duration_timer_after_hang_up_is_stale() -> None:
    g = Scenario(TABLE)
    g.run("call 3 -> 4; accept 4")
    call_id = only_call(g).id
    g.run("hangup 3")
    refused = g.send(CallTimeout(call_id, active=True))
    assert refused is not None and refused.code == Rej.STALE_TIMER


# --- C5: end of night, maximum duration, night action afterwards ------------------------------


@pytest.mark.rule("C5")
def test_a_call_ends_at_the_end_of_the_night() -> None:
    g = Scenario(TABLE)
    g.run("call 3 -> 4; accept 4; call 5 -> 6")  # one active, one ringing
    g.run("timeout")
    assert g.phase is Phase.MORNING
    assert g.state.calls == ()
    reasons = {(e.params["call"], e.params["reason"]) for e in g.events if e.code == Ev.CALL_ENDED}
    assert reasons == {(1, "phase_end"), (2, "phase_end")}
    assert g.view(3)["me"]["call"] is None


@pytest.mark.rule("C5", "S1")
def test_max_duration_ends_the_call_and_the_seer_still_checks() -> None:
    g = Scenario(TABLE, calls=CallSettings(max_duration_s=45.0))
    g.run("call 3 -> 4; accept 4")
    call_id = only_call(g).id
    assert [t.delay_s for t in g.timers if t.command == CallTimeout(call_id, active=True)] == [45.0]
    g.run("call-timeout")
    assert g.state.calls == ()
    assert g.last(Ev.CALL_ENDED).params["reason"] == "max_duration"
    assert reaching(g, Ev.CALL_ENDED) == {3, 4}
    assert g.phase is Phase.NIGHT
    g.run("check 3 -> 1; protect 4 -> 5")
    assert g.last(Ev.CHECK_RESULT).params == {"target": 1, "evil": True}
    g.run("evil 1,2 -> 5; timeout")
    assert g.dead == set()  # the doctor's protection given after the call counted


@pytest.mark.rule("C5")
def test_night_actions_are_possible_during_a_call_too() -> None:
    g = Scenario(TABLE)
    g.run("call 1 -> 3; accept 3; check 3 -> 2; evil 1,2 -> 6")
    assert g.last(Ev.CHECK_RESULT).params["evil"] is True
    g.run("timeout")
    assert g.dead == {6}


# --- C6: the dead ----------------------------------------------------------------------------


@pytest.mark.rule("C6", "D6")
def test_the_dead_can_neither_call_nor_be_called() -> None:
    g = Scenario(TABLE)
    g.run("evil 1,2 -> 5; timeout")
    assert g.dead == {5}
    g.run("timeout; nominate 3 -> 6; timeout; vote 1,2,3,4,6 -> 0")
    assert g.phase is Phase.NIGHT
    assert g.refused("call 5 -> 3") == Rej.ACTOR_DEAD
    assert g.refused("call 3 -> 5") == Rej.TARGET_DEAD
    assert not any(
        isinstance(cmd, dict) and cmd.get("type") == "PlaceCall" for cmd in g.view(5)["me"]["legal"]
    )
    legal_targets = {
        cmd["callee"] for cmd in g.view(3)["me"]["legal"] if cmd["type"] == "PlaceCall"
    }
    assert legal_targets == {1, 2, 4, 6}


@pytest.mark.rule("C6", "S5")
def test_a_death_by_day_ends_the_call() -> None:
    g = Scenario("evil evil hunter doctor filler filler filler", calls=DAY_CALLS)
    g.to_day()
    g.run("call 5 -> 6; accept 6; shoot 3 -> 6")
    assert 6 in g.dead
    assert g.state.calls == ()
    ended = g.last(Ev.CALL_ENDED)
    assert ended.params["reason"] == "death"
    assert reaching(g, Ev.CALL_ENDED) == {5, 6}


@pytest.mark.rule("C6", "X6")
def test_spectators_never_see_a_call_or_its_chat() -> None:
    g = Scenario(TABLE, calls=DAY_CALLS)
    g.run("call 3 -> 4; accept 4; say 3: psst; hangup 4; call 5 -> 6; decline 6; timeout")
    g.run("call 1 -> 2; accept 2; toggle 1; say 2: hello")
    spectator = Viewer.spectator()
    visible = [e for e in g.events if e.audience.includes(spectator)]
    assert not any(e.code in CALL_CODES for e in visible)
    assert not any(e.code == Ev.CHAT for e in visible)
    spectator_view = view(g.state, spectator)
    assert spectator_view["me"] is None


# --- C7: the evil team and calls -------------------------------------------------------------


@pytest.mark.rule("C7", "N1")
def test_evil_team_keeps_its_night_room_while_a_member_is_in_a_call() -> None:
    g = Scenario(TABLE)
    g.run("call 1 -> 5; accept 5; evil 2 -> 3")
    vote = g.last(Ev.EVIL_VOTE_CAST)
    assert reaching(g, Ev.EVIL_VOTE_CAST) == {1, 2}
    assert vote.params["voter"] == 2
    assert g.view(2)["night_room"]["members"] == [1, 2]
    g.run("say 2: take the seer")
    assert g.last(Ev.CHAT).params["room"] == "night_room"
    assert reaching(g, Ev.CHAT) == {1, 2}
    g.run("evil 1 -> 3; timeout")
    assert g.dead == {3}


@pytest.mark.rule("C7")
def test_evil_may_phone_by_default() -> None:
    g = Scenario(TABLE)
    g.run("call 2 -> 6; accept 6")
    assert only_call(g).status is CallStatus.ACTIVE


@pytest.mark.rule("C7")
def test_evil_calling_off_forbids_placing_but_not_answering() -> None:
    g = Scenario(TABLE, calls=CallSettings(evil_may_call=False))
    assert g.refused("call 1 -> 3") == Rej.CALLS_DISABLED
    assert g.refused("call 2 -> 5") == Rej.CALLS_DISABLED
    # Decision: they can still be called and answer (refusing would reveal them).
    g.run("call 3 -> 1")
    assert g.last(Ev.CALL_INCOMING).params["caller"] == 3
    g.run("accept 1")
    assert only_call(g).status is CallStatus.ACTIVE
    g.run("hangup 1; call 5 -> 2; decline 2; call 6 -> 3")
    assert only_call(g).callee == 3  # villagers still call each other


@pytest.mark.rule("C7", "C8")
def test_evil_calling_off_applies_at_night_only() -> None:
    g = Scenario(TABLE, calls=CallSettings(evil_may_call=False, by_day=True))
    assert g.refused("call 1 -> 3") == Rej.CALLS_DISABLED
    g.to_day()
    g.run("call 1 -> 3; accept 3")
    assert only_call(g).caller == 1


# --- C8: the founder's settings --------------------------------------------------------------


@pytest.mark.rule("C8")
def test_calls_off_are_refused() -> None:
    g = Scenario(TABLE, calls=CallSettings(enabled=False, by_day=True))
    assert g.refused("call 3 -> 4") == Rej.CALLS_DISABLED
    g.to_day()
    assert g.refused("call 3 -> 4") == Rej.CALLS_DISABLED


@pytest.mark.rule("C8", "S10")
def test_twins_call_each_other_at_night_even_with_calls_off() -> None:
    g = Scenario(
        "evil evil twin twin filler filler", calls=CallSettings(enabled=False, per_night=1)
    )
    assert g.refused("call 3 -> 5") == Rej.CALLS_DISABLED
    g.run("call 3 -> 4; accept 4; hangup 3; call 4 -> 3; accept 3; hangup 4")
    g.run("call 3 -> 4")  # not counted against the limit either
    assert only_call(g).caller == 3
    assert g.state.calls_placed == {}
    g.run("hangup 3").to_day()
    assert g.refused("call 3 -> 4") == Rej.CALLS_DISABLED  # by day the setting rules


@pytest.mark.rule("C8", "S11")
def test_lovers_call_each_other_at_night_even_with_calls_off() -> None:
    g = Scenario(TABLE, lovers=(1, 5), calls=CallSettings(enabled=False, evil_may_call=False))
    assert g.refused("call 5 -> 6") == Rej.CALLS_DISABLED
    g.run("call 5 -> 1; accept 1; hangup 1; call 1 -> 5")  # even the evil lover
    assert only_call(g).caller == 1


@pytest.mark.rule("C8")
def test_per_night_limit_counts_placed_calls_and_resets_each_night() -> None:
    g = Scenario(TABLE, calls=CallSettings(per_night=2))
    g.run("call 3 -> 4; decline 4; call 3 -> 5; ring-timeout")
    assert g.refused("call 3 -> 6") == Rej.CALL_LIMIT
    g.run("call 4 -> 3")  # the callee's answered calls do not count for her
    g.run("hangup 4; timeout; timeout; timeout")  # morning, day, no nominations -> night 2
    assert g.phase is Phase.NIGHT and g.state.round == 2
    g.run("call 3 -> 6; hangup 3; call 3 -> 5")
    assert only_call(g).callee == 5


@pytest.mark.rule("C8")
def test_per_night_limit_spans_the_steal_step() -> None:
    g = Scenario("vagabond evil evil seer filler filler filler", calls=CallSettings(per_night=1))
    assert g.state.night is not None and g.state.night.step.value == "steal"
    g.run("call 4 -> 5; hangup 4; steal 1 -> #")
    assert g.state.night is not None and g.state.night.step.value == "main"
    assert g.refused("call 4 -> 6") == Rej.CALL_LIMIT


@pytest.mark.rule("C8")
def test_day_calls_only_with_calls_by_day() -> None:
    g = Scenario(TABLE)
    g.to_day()
    assert g.refused("call 3 -> 4") == Rej.CALLS_DISABLED
    h = Scenario(TABLE, calls=DAY_CALLS)
    h.run("timeout")
    assert h.phase is Phase.MORNING
    h.run("call 3 -> 4; accept 4")
    assert only_call(h).status is CallStatus.ACTIVE
    h.run("timeout")  # morning -> day: the call goes on
    assert h.state.phase is Phase.DAY
    assert only_call(h).status is CallStatus.ACTIVE


@pytest.mark.rule("C8", "D2", "D3")
def test_day_call_ends_when_voting_starts_and_nominating_voting_stay_possible() -> None:
    g = Scenario(TABLE, calls=DAY_CALLS)
    g.to_day()
    g.run("call 3 -> 4; accept 4; nominate 3 -> 1; nominate 4 -> 2; call 5 -> 6")
    assert g.state.day is not None and g.state.day.nominees == (1, 2)
    g.run("timeout")
    assert g.phase is Phase.VOTE
    assert g.state.calls == ()
    assert {e.params["reason"] for e in g.events if e.code == Ev.CALL_ENDED} == {"phase_end"}
    assert g.refused("call 3 -> 4") == Rej.WRONG_PHASE
    g.run("vote 3,4,5 -> 1; vote 1,2 -> 2; vote 6 -> 0")
    assert 1 in g.dead


@pytest.mark.rule("C8")
def test_calls_by_day_are_not_limited_by_the_night_limit() -> None:
    g = Scenario(TABLE, calls=CallSettings(by_day=True, per_night=1))
    g.to_day()
    g.run("call 3 -> 4; hangup 3; call 3 -> 5; hangup 3; call 3 -> 6")
    assert only_call(g).callee == 6


@pytest.mark.rule("C8")
def test_max_duration_applies_by_day() -> None:
    g = Scenario(TABLE, calls=CallSettings(by_day=True, max_duration_s=30.0))
    g.to_day()
    g.run("call 3 -> 4; accept 4")
    call_id = only_call(g).id
    assert [t.delay_s for t in g.timers if t.command == CallTimeout(call_id, active=True)] == [30.0]
    g.run("call-timeout")
    assert g.state.calls == ()
    assert g.last(Ev.CALL_ENDED).params["reason"] == "max_duration"


# --- C9: stumm / Halbmodus -------------------------------------------------------------------


@pytest.mark.rule("C9")
def test_every_call_starts_stumm_and_cannot_switch_at_night() -> None:
    g = Scenario(TABLE, calls=DAY_CALLS)
    g.run("call 3 -> 4; accept 4")
    assert only_call(g).modes == (CallMode.STUMM, CallMode.STUMM)
    assert g.refused("toggle 3") == Rej.MODE_FIXED
    g.run("hangup 3").to_day()
    g.run("call 3 -> 4; accept 4")
    assert only_call(g).modes == (CallMode.STUMM, CallMode.STUMM)
    assert g.view(3)["me"]["call"]["mode"] == "stumm"


@pytest.mark.rule("C9")
def test_switching_is_per_participant_and_reaches_only_the_two() -> None:
    g = Scenario(TABLE, calls=DAY_CALLS)
    g.to_day()
    g.run("call 3 -> 4; accept 4; toggle 3")
    assert only_call(g).mode_of(3) is CallMode.HALB
    assert only_call(g).mode_of(4) is CallMode.STUMM
    changed = g.last(Ev.CALL_MODE_CHANGED).params
    assert (changed["seat"], changed["mode"]) == (3, "halb")
    assert reaching(g, Ev.CALL_MODE_CHANGED) == {3, 4}
    assert g.view(3)["me"]["hears_market_quietly"] is True
    assert g.view(4)["me"]["hears_market_quietly"] is False
    g.run("toggle 4; toggle 3")
    assert only_call(g).modes == (CallMode.STUMM, CallMode.HALB)


@pytest.mark.rule("C9")
def test_halb_participants_are_not_shown_as_present() -> None:
    g = Scenario(TABLE, calls=DAY_CALLS)
    g.to_day()
    g.run("call 3 -> 4; accept 4; toggle 3; toggle 4")
    seats = g.view(5)["seats"]
    present = {s["seat"] for s in seats if s["present"]}
    assert present == {1, 2, 5, 6}


@pytest.mark.rule("C9")
def test_stumm_only_cannot_switch() -> None:
    g = Scenario(TABLE, calls=CallSettings(by_day=True, day_modes=DayCallModes.STUMM))
    g.to_day()
    g.run("call 3 -> 4; accept 4")
    assert only_call(g).modes == (CallMode.STUMM, CallMode.STUMM)
    assert g.refused("toggle 3") == Rej.MODE_FIXED


@pytest.mark.rule("C9")
def test_halb_only_day_calls_start_halb_and_cannot_switch() -> None:
    g = Scenario(TABLE, calls=CallSettings(by_day=True, day_modes=DayCallModes.HALB))
    g.run("call 3 -> 4; accept 4")  # at night there is no market place: stumm
    assert only_call(g).modes == (CallMode.STUMM, CallMode.STUMM)
    g.run("hangup 4").to_day()
    g.run("call 3 -> 4; accept 4")
    assert only_call(g).modes == (CallMode.HALB, CallMode.HALB)
    assert g.refused("toggle 4") == Rej.MODE_FIXED


@pytest.mark.rule("C9")
def test_toggle_needs_an_active_call() -> None:
    g = Scenario(TABLE, calls=DAY_CALLS)
    g.to_day()
    assert g.refused("toggle 3") == Rej.NOT_IN_CALL
    g.run("call 3 -> 4")
    assert g.refused("toggle 3") == Rej.NOT_IN_CALL


# --- chat within calls -----------------------------------------------------------------------


@pytest.mark.rule("C1", "C6")
def test_chat_in_a_night_call_reaches_only_the_two() -> None:
    g = Scenario(TABLE)
    assert g.refused("say 3: anyone?") == Rej.NOBODY_HEARS  # alone in her cell
    g.run("call 3 -> 4")
    assert g.refused("say 3: ringing") == Rej.NOBODY_HEARS  # not connected yet
    g.run("accept 4; say 4: it is me")
    chat = g.last(Ev.CHAT)
    assert chat.params == {"room": "call", "seat": 4, "text": "it is me"}
    assert reaching(g, Ev.CHAT) == {3, 4}


@pytest.mark.rule("C7", "N1")
def test_an_evil_player_in_a_call_writes_into_the_call_not_the_night_room() -> None:
    g = Scenario(TABLE)
    g.run("call 1 -> 5; accept 5; say 1: hello neighbour")
    assert g.last(Ev.CHAT).params["room"] == "call"
    assert reaching(g, Ev.CHAT) == {1, 5}


@pytest.mark.rule("C9", "D2")
def test_chat_in_a_day_call_stays_out_of_the_market() -> None:
    g = Scenario(TABLE, calls=DAY_CALLS)
    g.to_day()
    g.run("say 5: good morning")
    assert g.last(Ev.CHAT).params["room"] == "market"
    g.run("call 3 -> 4; accept 4; toggle 3; say 3: vote 1")
    assert g.last(Ev.CHAT).params["room"] == "call"
    assert reaching(g, Ev.CHAT) == {3, 4}
    assert not g.last(Ev.CHAT).audience.includes(Viewer.spectator())


# --- commands straight, without the scenario words --------------------------------------------


@pytest.mark.rule("C1", "C4")
def test_commands_round_trip_through_apply() -> None:
    g = Scenario(TABLE)
    assert g.send(PlaceCall(6, 5)) is None
    assert g.state.call_of(5) == g.state.call_of(6)
    assert g.send(HangUp(5)) is None
    assert g.state.calls == ()
    assert isinstance(g.options, GameOptions)
