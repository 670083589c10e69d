"""The telephone with one media process (``[phone] media_processes = 1``), on real audio.

The same tests as on the in-process path (imported here, the ``media_processes`` fixture set
to 1): keys arrive by RFC 4733 and by in-band tones, callers at a table hear each other by day
(and a muted one is not heard), a night room reaches only its members, and callers in a
conference room hear each other — all of it mixed in the media process (the switchboard's
sessions have no prompt queue, so their prompt is still made here and sent ahead). A real
session's prompts are played by the media process from the clips it was sent: the spoken
greeting is heard sample for sample, and no frame of it is made in the signalling process.
Then what is the media process's own: when it dies, its calls are hung up with a BYE and the
next call is carried by the process started in its place.
"""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from tests.phone.e2e.both_paths import (
    test_day_voices,
    test_greeting_spoken,
    test_in_band_keys,
    test_night_room,
    test_rfc4733_keys,
    test_room,
)
from tests.phone.e2e.conftest import LiveRig, PhoneRig, SeatSession
from tests.phone.e2e.support import Phone, level_at, media_from, phones, tone, wait_until
from vollmond.phone.mediaproc.client import MediaProcesses
from vollmond.phone.sip.call import CallState

__all__ = [
    "test_day_voices",
    "test_greeting_spoken",
    "test_in_band_keys",
    "test_night_room",
    "test_rfc4733_keys",
    "test_room",
]


#: What baresip logs when the other side ended the call with a BYE.
BYE_RECEIVED = "session closed: Connection reset by peer"


def _bye_received(phone: Phone) -> bool:
    return BYE_RECEIVED in phone.log_text()


@pytest.fixture
def media_processes() -> int:
    return 1


def _processes(rig: PhoneRig) -> MediaProcesses:
    assert rig.phone.uas is not None
    media = rig.phone.uas.media
    assert isinstance(media, MediaProcesses)
    return media


async def test_a_callers_prompt_is_heard_through_the_media_process(rig: PhoneRig) -> None:
    rig.board.prepared["hearer"] = SeatSession(prompt=tone(700.0, 3.0))
    async with phones(rig.root / "phones", {"hearer": None}) as lines:
        await lines["hearer"].dial(rig.sip_port)
        await wait_until(lambda: media_from(rig.phone, "hearer"), 10, "the call's media")
        session = rig.board.session("hearer")
        await wait_until(lambda: session._played >= 3 * 8000, 15, "the prompt played")
        await asyncio.sleep(0.3)  # its last frames leave the media process LEAD_TICKS later
        heard = await lines["hearer"].final_recording()
    assert level_at(heard, 700.0) > 300.0  # the prompt's tone, through the media process
    assert level_at(heard, 1000.0) < 60.0  # and nothing else


async def test_a_real_sessions_prompts_are_played_by_the_media_process(live: LiveRig) -> None:
    """The greeting of a real session (its prompt queue) is played by the media process from
    the clip it was sent: the caller hears it, and not one frame of it was made here."""
    assert live.phone.uas is not None
    media = live.phone.uas.media
    assert isinstance(media, MediaProcesses)
    process = media.processes[0]
    async with phones(live.root / "phones", {"greeter": None}) as lines:
        await lines["greeter"].dial(live.sip_port)
        await wait_until(lambda: media_from(live.phone, "greeter"), 10, "the call's media")
        await wait_until(lambda: process.counters.get("prompt_frames", 0) >= 100, 15)
        await lines["greeter"].hangup()
        heard = await lines["greeter"].final_recording()
    assert float(abs(heard.astype(float)).mean()) > 100.0  # the greeting, not silence
    assert process.frames_fed == 0  # nothing made here and sent ahead


async def test_the_media_process_dies_its_calls_end_with_bye_and_a_new_one_carries_on(
    rig: PhoneRig,
) -> None:
    media = _processes(rig)
    first = media.processes[0].pid
    assert first is not None
    async with phones(rig.root / "phones", {"anna": None, "bert": None, "cora": None}) as lines:
        for name in ("anna", "bert"):
            await lines[name].dial(rig.sip_port)
        await wait_until(lambda: media_from(rig.phone, "anna") and media_from(rig.phone, "bert"))
        calls = list(rig.phone.lines)
        sessions = [rig.board.session("anna"), rig.board.session("bert")]

        os.kill(first, signal.SIGKILL)

        await wait_until(lambda: all(s.closed for s in sessions), 10, "sessions closed")
        assert all(call.state is CallState.ENDED for call in calls)
        assert rig.phone.lines == {}
        told = (lines["anna"], lines["bert"])
        await wait_until(lambda: all(_bye_received(phone) for phone in told), 10, "the BYEs")
        await wait_until(lambda: media.restarts == 1 and media.processes[0].alive, 10)
        assert media.processes[0].pid != first

        await lines["cora"].dial(rig.sip_port)
        await wait_until(lambda: media_from(rig.phone, "cora"), 10, "cora's media")
        cora = rig.board.session("cora")
        await lines["cora"].keys("*7#", gap=0.3)
        await wait_until(lambda: cora.keylog.text() == "*7#", 5, "cora's keys")
        await lines["cora"].hangup()
        await wait_until(lambda: cora.closed, 5)
