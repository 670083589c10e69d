"""The recording notice on the phone (O2, O4), with the real sessions, hub, store and recorder:
every caller at the table is warned (spoken, then the tone; not skippable, before any backlog
of game news); a caller who arrives during the recording is told at once; the end is spoken.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest

from vollmond.engine.standard import GameOptions
from vollmond.moderation import Caller, Moderation
from vollmond.phone.session import PhoneSession
from vollmond.phone.session.prompts import Priority, PromptQueue
from vollmond.phone.session.recording import TONE
from vollmond.service.hub import Hub
from vollmond.service.notices import NoticeStage
from vollmond.service.recorder import TableRecorder
from vollmond.settings.moderation import ModerationSettings

from .support import TextVoice, call_in, press, wait_until
from .test_game import advance, started


@pytest.fixture
async def recorder(hub: Hub, tmp_path: Path) -> AsyncIterator[TableRecorder]:
    moderation = Moderation(hub.sessions, ModerationSettings(), tmp_path / "data")
    running = TableRecorder(hub, moderation, notice_wait_s=20.0)
    await running.start()
    try:
        yield running
    finally:
        await running.close()


def told(session: PhoneSession, fragment: str) -> list[int]:
    """Indexes in the transcript of lines containing `fragment`."""
    return [i for i, s in enumerate(session.transcript) if s.text and fragment in s.text]


def tone_at(session: PhoneSession) -> list[int]:
    return [i for i, s in enumerate(session.transcript) if s.tone == TONE]


async def drain(sessions: list[PhoneSession]) -> None:
    """What the media clock does: play every queued prompt (here: at once)."""
    for session in sessions:
        await session.prompts.drain()


@pytest.mark.rule("O2", "O4")
async def test_callers_are_warned_before_the_recording_and_a_latecomer_is_told(
    hub: Hub, recorder: TableRecorder
) -> None:
    founded = await hub.found(
        GameOptions(players=4), private=False, host_account_id=None, channel="web"
    )
    game_id = founded.game.id
    callers = []
    for _ in range(4):  # guests join the public round from the announcer: 2, 1, 1#, 1#
        caller = await call_in(hub)
        for keys in ("2", "1", "1#", "1#"):
            await press(caller, keys)
        callers.append(caller)
    await started(callers)
    actor = hub.actors[game_id]
    assert actor.state is not None
    await recorder.moderation.raise_alarm(
        game_id=game_id,
        round=actor.state.round,
        phase=actor.state.phase.value,
        caller=Caller(house=1),
        reason=2,
        accused_house=3,
    )
    await wait_until(lambda: hub.notices.current(game_id) is not None)
    for caller in callers:
        (warning,) = told(caller, "nach dem Ton aufgezeichnet")
        (tone,) = tone_at(caller)
        assert tone == warning + 1
        assert not caller.transcript[warning].interruptible
        caller.on_key("5")  # a key does not skip the warning
        assert TONE in caller.prompts.queued_tones
    notice = hub.notices.current(game_id)
    assert notice is not None and notice.stage is NoticeStage.WARNING  # waits for the lines
    await drain(callers)
    await wait_until(lambda: game_id in recorder.sinks)
    running = hub.notices.current(game_id)
    assert running is not None and running.stage is NoticeStage.RECORDING

    # O4: someone who comes to listen during the recording is told at once.
    watcher = await call_in(hub)
    await press(watcher, "2")
    await press(watcher, "3")
    await press(watcher, "1#")
    await press(watcher, "1#")
    assert watcher.spectating and watcher.game_id == game_id
    assert told(watcher, "wird gerade aufgezeichnet") and tone_at(watcher)

    # The round ends: the recording stops and everyone at the table is told.
    start_round = actor.state.round
    while actor.state is not None and actor.state.round == start_round:
        await advance(hub, game_id)
    await wait_until(lambda: hub.notices.current(game_id) is None and not recorder.recordings)
    for session in (*callers, watcher):
        assert told(session, "Aufzeichnung an diesem Tisch ist beendet"), session.spoken()
        await session.close()


async def test_the_warning_cuts_the_news_playing_and_goes_before_the_backlog() -> None:
    queue = PromptQueue(TextVoice(), "de")
    queue.say("erste Nachricht", Priority.NEWS)
    queue.say("zweite Nachricht", Priority.NEWS)
    await queue.rendered()
    assert queue.next_frame() is not None  # the first is playing now
    queue.say("Warnung", Priority.URGENT)
    queue.play(TONE, np.zeros(160, dtype=np.int16), Priority.URGENT)
    queue.say("dritte Nachricht", Priority.NEWS)
    order = [u.text or u.tone for u in queue._queue]
    assert order == ["Warnung", TONE, "erste Nachricht", "zweite Nachricht", "dritte Nachricht"]
    assert queue._queue[2].played == 0  # the cut news is heard again from its start
    await asyncio.sleep(0)
