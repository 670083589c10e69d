"""Secrecy on real audio: baresip phones in a running game, each recording what it hears.

One line plays a tone; the recordings show who heard it. The routing table decides, the mixer
multiplies, and the tone crosses two real G.711 legs (baresip → server → baresip).
"""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from tests.phone.e2e.conftest import PhoneRig, SeatSession
from tests.phone.e2e.support import level_at, phones, rms, tone, wait_until
from vollmond.engine.core import Rejection
from vollmond.engine.standard import CallSettings, GameOptions
from vollmond.engine.standard.commands import AnswerCall, PhaseTimeout, PlaceCall
from vollmond.engine.standard.queries import night_room
from vollmond.engine.standard.types import Phase
from vollmond.phone.media import Int16Array

HEARD = 1500.0  # a 6000-amplitude tone arrives near full level
SILENT = 60.0  # G.711 idle noise and rounding stay far below this


async def talk(
    rig: PhoneRig, sources: dict[str, Int16Array | None], seconds: float
) -> dict[str, Int16Array]:
    """Every named phone dials in, listens for `seconds`, hangs up; returns the recordings."""
    async with phones(rig.root / "phones", sources) as lines:
        for phone in lines.values():
            await phone.dial(rig.sip_port)
        await wait_until(lambda: len(rig.phone.lines) == len(lines), 15)
        await asyncio.sleep(seconds)
        for phone in lines.values():
            await phone.hangup()
        await wait_until(lambda: not rig.phone.lines, 10)
        return {name: await phone.final_recording() for name, phone in lines.items()}


def body(recording: Int16Array) -> Int16Array:
    """The recording without its first second (call set-up)."""
    assert len(recording) > 2 * 8000, len(recording)
    return recording[8000:]


@pytest.mark.rule("N1", "X6", "C6")
async def test_a_tone_in_one_evil_line_at_night_reaches_only_the_other_evil(rig: PhoneRig) -> None:
    game = await rig.table(GameOptions(players=8))
    state = rig.hub.actors[game].state
    assert state is not None and state.phase is Phase.NIGHT
    evil = sorted(night_room(state))
    village = [seat for seat in range(1, 9) if seat not in evil]
    assert len(evil) == 2
    speaker, partner = evil
    seats = {"evil1": speaker, "evil2": partner, "v1": village[0], "v2": village[1]}
    seats["v3"] = village[2]
    for name, seat in seats.items():
        rig.board.prepared[name] = SeatSession(game, seat)
    rig.board.prepared["watcher"] = SeatSession(game, spectating=True)
    sources: dict[str, Int16Array | None] = dict.fromkeys([*seats, "watcher"])
    sources["evil1"] = tone(1000.0, 60)
    heard = await talk(rig, sources, 4.0)

    assert rig.hub.actors[game].state.phase is Phase.NIGHT  # type: ignore[union-attr]
    assert level_at(body(heard["evil2"]), 1000.0) > HEARD
    for name in ("v1", "v2", "v3", "watcher"):
        assert level_at(body(heard[name]), 1000.0) < SILENT, name
        assert rms(body(heard[name])) < SILENT, name
    # The speaker does not hear herself.
    assert level_at(body(heard["evil1"]), 1000.0) < SILENT


@pytest.mark.rule("C6", "C9", "D2", "X6")
async def test_a_private_call_by_day_is_absent_from_the_market_place(rig: PhoneRig) -> None:
    calls = CallSettings(by_day=True)
    game = await rig.table(GameOptions(players=6, calls=calls))
    actor = rig.hub.actors[game]
    while actor.state is not None and actor.state.phase is not Phase.DAY:
        outcome = await rig.hub.submit(game, PhaseTimeout(actor.state.phase_seq))
        assert not isinstance(outcome, Rejection), outcome
    assert actor.state is not None
    assert len(list(actor.state.living())) == 6
    for command in (PlaceCall(1, 2), AnswerCall(2, accept=True)):
        outcome = await rig.hub.submit(game, command)
        assert not isinstance(outcome, Rejection), outcome
    names = {"caller": 1, "callee": 2, "market": 3, "m4": 4, "m5": 5}
    for name, seat in names.items():
        rig.board.prepared[name] = SeatSession(game, seat)
    rig.board.prepared["watcher"] = SeatSession(game, spectating=True)
    sources: dict[str, Int16Array | None] = dict.fromkeys([*names, "watcher"])
    sources["caller"] = tone(1000.0, 60)
    sources["market"] = tone(700.0, 60)
    heard = await talk(rig, sources, 4.0)

    callee = body(heard["callee"])
    assert level_at(callee, 1000.0) > HEARD  # the call partner hears the caller
    assert level_at(callee, 700.0) < SILENT  # every call starts stumm (C9)
    for name in ("m4", "m5", "watcher"):
        assert level_at(body(heard[name]), 700.0) > HEARD, name  # the market works
        assert level_at(body(heard[name]), 1000.0) < SILENT, name  # the call is private
    assert level_at(body(heard["caller"]), 700.0) < SILENT


async def test_a_caller_in_the_menu_hears_no_room_and_feeds_none(rig: PhoneRig) -> None:
    game = await rig.table(GameOptions(players=6))
    actor = rig.hub.actors[game]
    while actor.state is not None and actor.state.phase is not Phase.DAY:
        await rig.hub.submit(game, PhaseTimeout(actor.state.phase_seq))
    rig.board.prepared["speaker"] = SeatSession(game, 3)
    rig.board.prepared["listener"] = SeatSession(game, 4)
    # "stranger" is unknown to the switchboard: a session in the menu, no game.
    sources: dict[str, Int16Array | None] = {
        "speaker": tone(700.0, 60),
        "stranger": tone(1200.0, 60),
        "listener": None,
    }
    heard = await talk(rig, sources, 3.0)
    assert level_at(body(heard["listener"]), 700.0) > HEARD
    assert level_at(body(heard["listener"]), 1200.0) < SILENT
    assert np.max(np.abs(body(heard["stranger"]).astype(np.int32))) < SILENT
