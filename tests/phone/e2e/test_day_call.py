"""A day call by keys with the real session, on real audio: stumm, then Halbmodus (*0*).

Four callers and one browser seat (the founder, silent) in a private round that allows calls
by day in both modes. By day Anna calls Bert (*0 NN #, Bert accepts with 1), Anna switches to
Halbmodus with *0*: she now hears the market place (Cora's tone) at a quarter of its level;
Bert, still stumm, hears only Anna; Dirk in the market place hears Cora but never Anna.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.phone.e2e.conftest import LiveRig
from tests.phone.e2e.support import level_at, phones, stop_all, tone, wait_until
from tests.phone.e2e.test_full_game import join_by_code
from tests.service.support import ApiClient
from vollmond.engine.standard.routing import HALB_GAIN
from vollmond.engine.standard.types import CallMode, CallStatus, Phase
from vollmond.phone.media import Int16Array
from vollmond.phone.session.codes import phone_code

DURATIONS = {
    "steal_s": 3.0,
    "night_s": 3.0,
    "morning_s": 1.5,
    "day_s": 300.0,
    "vote_s": 30.0,
    "floor_s": 5.0,
}


async def quiet(live: LiveRig, names: list[str], timeout: float = 75.0) -> None:
    """Wait until no caller has a prompt queued (the room is then heard undimmed). The 3-second
    night's narration, walk and timers are withdrawn at daybreak (they are past), so what is
    left is the day's turn, what stays true (seat code, the role shortened to its name, the
    morning's dead) and the call's own news: about 49 s here, was about 74 s (timeout 150)."""
    started = time.monotonic()
    await wait_until(lambda: not any(live.session(n).prompts.busy for n in names), timeout)
    print(f"quiet after {time.monotonic() - started:.1f} s")


@pytest.mark.slow
@pytest.mark.rule("C8", "C9", "D2", "X6")
async def test_a_day_call_stumm_then_halbmodus_on_real_audio(live: LiveRig) -> None:
    browser = ApiClient(live.service)
    try:
        await browser.signup("gastgeberin")
        founded = await browser.found(
            size=5,
            private=True,
            durations=DURATIONS,
            calls={"by_day": True, "day_modes": "both"},
        )
        game_id = str(founded["game"])
        names = ["anna", "bert", "cora", "dirk"]
        sources: dict[str, Int16Array | None] = dict.fromkeys(names)
        sources["anna"] = tone(1000.0, 300)
        sources["cora"] = tone(700.0, 300)
        async with phones(live.root / "phones", sources) as lines:
            await join_by_code(live, lines, phone_code(str(founded["invitation_code"])))
            actor = live.hub.actors[game_id]
            seat = {n: live.session(n).seat or 0 for n in names}
            await wait_until(lambda: actor.state is not None and actor.state.phase is Phase.DAY, 30)
            assert actor.state is not None
            assert len(list(actor.state.living())) == 5

            def modes() -> list[tuple[CallStatus, CallMode, CallMode]]:
                assert actor.state is not None
                return [
                    (c.status, c.mode_of(c.caller), c.mode_of(c.callee)) for c in actor.state.calls
                ]

            await lines["anna"].keys(f"*0{seat['bert']}#")
            await wait_until(lambda: bool(modes()), 10)
            await lines["bert"].keys("1")
            await wait_until(lambda: bool(modes()) and modes()[0][0] is CallStatus.ACTIVE, 10)
            assert modes() == [(CallStatus.ACTIVE, CallMode.STUMM, CallMode.STUMM)]
            await lines["anna"].keys("*0*")
            await wait_until(lambda: modes()[0][1] is CallMode.HALB, 10)
            assert modes() == [(CallStatus.ACTIVE, CallMode.HALB, CallMode.STUMM)]
            await quiet(live, names)
            await asyncio.sleep(3.0)
            for phone in lines.values():
                await phone.hangup()
            await wait_until(lambda: not live.phone.lines, 10)
            await stop_all(lines.values())  # complete recording files
            tail = {n: lines[n].recording()[-int(1.5 * 8000) - 4000 : -4000] for n in names}
    finally:
        await browser.close()
    market = level_at(tail["dirk"], 700.0)
    assert market > 1500.0  # the market place is heard there
    assert level_at(tail["dirk"], 1000.0) < 60.0  # the call is not
    assert level_at(tail["bert"], 1000.0) > 1500.0  # the callee hears the caller
    assert level_at(tail["bert"], 700.0) < 60.0  # stumm: no market place
    under = level_at(tail["anna"], 700.0) / market
    assert under == pytest.approx(HALB_GAIN, abs=0.08)
