"""Private calls ("Nachtruf", C1-C9): who may call whom, ringing, busy, hang-up, modes.

Calls are game state because they decide who hears whom (routing) and who is busy; the
audio itself never passes through the engine.
"""

from __future__ import annotations

from vollmond.engine.core import Audience, Rejection, evolve
from vollmond.engine.standard.abilities.base import reject
from vollmond.engine.standard.codes import Ev, Rej
from vollmond.engine.standard.commands import (
    AnswerCall,
    CallTimeout,
    HangUp,
    PlaceCall,
    ToggleCallMode,
)
from vollmond.engine.standard.deaths import end_calls_of
from vollmond.engine.standard.properties import bonded_partners, bonds_known, in_night_room
from vollmond.engine.standard.state import Call, GameState
from vollmond.engine.standard.tx import Tx
from vollmond.engine.standard.types import (
    CallEndReason,
    CallKind,
    CallMode,
    CallStatus,
    DayCallModes,
    Phase,
)

DAY_CALL_PHASES = (Phase.MORNING, Phase.DAY)


def is_partner_call(state: GameState, caller: int, callee: int) -> bool:
    """Twins (S10) and lovers (S11) may always talk at night, whatever the call setting;
    twins only once they know each other, after the vagabond's steal step (S14)."""
    if state.phase is not Phase.NIGHT or callee == caller:
        return False
    if state.player(caller).lover and state.player(callee).lover:
        return True
    return bonds_known(state) and callee in bonded_partners(state, state.player(caller))


def check_place(state: GameState, cmd: PlaceCall) -> Rejection | None:
    settings = state.options.calls
    partner = state.has_seat(cmd.callee) and is_partner_call(state, cmd.actor, cmd.callee)
    if state.phase is Phase.NIGHT:
        if not (settings.enabled or partner):
            return reject(Rej.CALLS_DISABLED)
    elif state.phase in DAY_CALL_PHASES:
        if not (settings.enabled and settings.by_day):
            return reject(Rej.CALLS_DISABLED)
    else:
        return reject(Rej.WRONG_PHASE)
    if not state.has_seat(cmd.callee):
        return reject(Rej.TARGET_UNKNOWN, target=cmd.callee)
    if cmd.callee == cmd.actor:
        return reject(Rej.TARGET_SELF)
    if not state.player(cmd.callee).alive:
        return reject(Rej.TARGET_DEAD, target=cmd.callee)
    if state.call_of(cmd.actor) is not None:
        return reject(Rej.IN_CALL)
    if (
        state.phase is Phase.NIGHT
        and not settings.evil_may_call
        and not partner
        and in_night_room(state.player(cmd.actor))
    ):
        return reject(Rej.CALLS_DISABLED)
    if (
        state.phase is Phase.NIGHT
        and not partner
        and state.calls_placed.get(cmd.actor, 0) >= settings.per_night
    ):
        return reject(Rej.CALL_LIMIT, limit=settings.per_night)
    return None


def place(tx: Tx, cmd: PlaceCall) -> None:
    """C2/C3: ring the callee ("Hausnummer N ruft an"), or tell the caller it is busy."""
    state = tx.state
    if state.call_of(cmd.callee) is not None:
        tx.emit(Ev.CALL_BUSY, Audience.to(cmd.actor), callee=cmd.callee)
        return
    partner = is_partner_call(state, cmd.actor, cmd.callee)
    call = Call(state.next_call_id, CallKind.CALL, cmd.actor, cmd.callee, CallStatus.RINGING)
    placed = state.calls_placed
    if not partner:
        placed = {**placed, cmd.actor: placed.get(cmd.actor, 0) + 1}
    tx.change(
        calls=(*state.calls, call),
        next_call_id=call.id + 1,
        calls_placed=placed,
    )
    tx.emit(Ev.CALL_OUTGOING, Audience.to(cmd.actor), call=call.id, callee=cmd.callee)
    tx.emit(Ev.CALL_INCOMING, Audience.to(cmd.callee), call=call.id, caller=cmd.actor)
    tx.after(state.options.calls.ring_s, CallTimeout(call.id, active=False))


def _ringing_for(state: GameState, seat: int) -> Call | None:
    call = state.call_of(seat)
    if call is not None and call.status is CallStatus.RINGING and call.callee == seat:
        return call
    return None


def check_answer(state: GameState, cmd: AnswerCall) -> Rejection | None:
    if _ringing_for(state, cmd.actor) is None:
        return reject(Rej.NO_INCOMING_CALL)
    return None


def answer(tx: Tx, cmd: AnswerCall) -> None:
    call = _ringing_for(tx.state, cmd.actor)
    assert call is not None
    both = Audience.to(call.caller, call.callee)
    if not cmd.accept:
        _drop(tx, call)
        tx.emit(Ev.CALL_DECLINED, both, call=call.id, callee=call.callee)
        return
    # C9: every call starts stumm, unless the founder allowed only Halbmodus by day.
    halb_only = (
        tx.state.phase in DAY_CALL_PHASES and tx.state.options.calls.day_modes is DayCallModes.HALB
    )
    start = CallMode.HALB if halb_only else CallMode.STUMM
    active = evolve(call, status=CallStatus.ACTIVE, modes=(start, start))
    tx.change(calls=tuple(active if c.id == call.id else c for c in tx.state.calls))
    tx.emit(Ev.CALL_CONNECTED, both, call=call.id, caller=call.caller, callee=call.callee)
    tx.after(tx.state.options.calls.max_duration_s, CallTimeout(call.id, active=True))


def _drop(tx: Tx, call: Call) -> None:
    tx.change(calls=tuple(c for c in tx.state.calls if c.id != call.id))


def check_hang_up(state: GameState, cmd: HangUp) -> Rejection | None:
    if state.call_of(cmd.actor) is None:
        return reject(Rej.NOT_IN_CALL)
    return None


def hang_up(tx: Tx, cmd: HangUp) -> None:
    """C4: ends a ringing or active call (or a séance) for both sides."""
    end_calls_of(tx, {cmd.actor}, CallEndReason.HUNG_UP)


def check_timeout(state: GameState, cmd: CallTimeout) -> Rejection | None:
    for call in state.calls:
        if call.id == cmd.call_id and (call.status is CallStatus.ACTIVE) == cmd.active:
            return None
    return reject(Rej.STALE_TIMER)


def timeout(tx: Tx, cmd: CallTimeout) -> None:
    """Ringing stops by itself (C2); a call ends at its maximum duration (C5)."""
    call = next(c for c in tx.state.calls if c.id == cmd.call_id)
    if cmd.active:
        end_calls_of(tx, {call.caller}, CallEndReason.MAX_DURATION)
        return
    _drop(tx, call)
    tx.emit(Ev.CALL_MISSED, Audience.to(call.caller, call.callee), call=call.id)


def check_toggle(state: GameState, cmd: ToggleCallMode) -> Rejection | None:
    call = state.call_of(cmd.actor)
    if call is None or call.status is not CallStatus.ACTIVE:
        return reject(Rej.NOT_IN_CALL)
    if state.phase not in DAY_CALL_PHASES or state.options.calls.day_modes is not DayCallModes.BOTH:
        return reject(Rej.MODE_FIXED)
    return None


def toggle(tx: Tx, cmd: ToggleCallMode) -> None:
    """C9: with "both" allowed, each side switches stumm ⇄ Halbmodus, even mid-call."""
    call = tx.state.call_of(cmd.actor)
    assert call is not None
    current = call.mode_of(cmd.actor)
    new = CallMode.HALB if current is CallMode.STUMM else CallMode.STUMM
    modes = (new, call.modes[1]) if cmd.actor == call.caller else (call.modes[0], new)
    updated = evolve(call, modes=modes)
    tx.change(calls=tuple(updated if c.id == call.id else c for c in tx.state.calls))
    tx.emit(
        Ev.CALL_MODE_CHANGED,
        Audience.to(call.caller, call.callee),
        call=call.id,
        seat=cmd.actor,
        mode=new.value,
    )
