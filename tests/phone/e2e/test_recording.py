"""The recording after an operator call, end to end (O2): four baresip callers in a running
game, a caller presses ``*9 1 NN #`` by day; everyone at the table hears the spoken warning
and the notice tone on real audio; then the market place is recorded into the vault —
encrypted, opened by an admin to the market's audio — until the round ends.

The ``*9`` key raises the alarm itself (the session's ``Enforcer.raise_alarm``, which goes
through ``Moderation.raise_alarm`` and its feed to the table recorder); the test only presses
the keys and checks the one alarm that results.
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime

import numpy as np
import pytest

from tests.phone.e2e.conftest import LiveRig
from tests.phone.e2e.support import Phone, level_at, phones, tone, wait_until
from tests.phone.e2e.test_callers import best_match, private_round, settle
from vollmond.engine.standard.commands import PhaseTimeout
from vollmond.engine.standard.types import Phase
from vollmond.moderation import Moderation
from vollmond.moderation.alarms import list_alarms
from vollmond.moderation.recordings import list_recordings, play_recording
from vollmond.phone.media import Int16Array
from vollmond.phone.session.prompts import tones
from vollmond.phone.session.recording import TONE
from vollmond.service.notices import NoticeStage
from vollmond.service.recorder import TableRecorder
from vollmond.store import Role
from vollmond.store.models import AccountRow

MARKET_HZ = 700.0  # what Anna says in the market place all along


async def next_phase_until(live: LiveRig, game_id: str, done: object) -> None:
    actor = live.hub.actors[game_id]
    async with asyncio.timeout(20):
        while actor.state is not None and not done(actor.state):  # type: ignore[operator]
            assert actor.state.phase is not Phase.OVER
            await live.hub.submit(game_id, PhaseTimeout(actor.state.phase_seq))


async def call_the_operator(live: LiveRig, lines: dict[str, Phone], game_id: str) -> None:
    """Bert calls the operator about Anna by keys (*9, reason 1, house NN, #); his session
    raises the alarm (see the module docstring)."""
    anna, bert = live.session("anna").seat, live.session("bert").seat
    assert anna is not None
    await lines["bert"].keys(f"*91{anna:02d}#")
    await wait_until(lambda: bool(live.session("bert").operator_calls), 15)
    await live.session("bert").idle()  # the alarm has been raised
    call = live.session("bert").operator_calls[-1]
    assert (call.game_id, call.seat, call.reason, call.player) == (game_id, bert, 1, anna)
    (alarm,) = await list_alarms(live.hub.sessions, game_id=game_id)  # one alarm, his
    assert (alarm.caller.house, alarm.reason, alarm.accused_house) == (bert, 1, anna)


def assert_warned(live: LiveRig, heard: dict[str, Int16Array]) -> None:
    """Every caller was told (transcript: warning, unskippable tone, end) and heard the
    warning and the tone on real audio (baresip's decoded side)."""
    notice_tone = tones.recording_notice()[: 600 * 8]
    for name, recording in heard.items():
        spoken = live.session(name).transcript
        told = [s.text for s in spoken if s.text and "aufgezeichnet" in s.text]
        assert told, (name, [s.text for s in spoken])
        assert any(s.tone == TONE and not s.interruptible for s in spoken), name
        assert any(s.text and "Aufzeichnung" in s.text and "beendet" in s.text for s in spoken)
        assert told[0] is not None
        tone_match = best_match(recording, notice_tone)
        warning_match = best_match(recording, live.voice.render(told[0], "de"))
        print(f"{name}: tone match {tone_match:.3f}, warning match {warning_match:.3f}")
        assert tone_match > 0.8, name
        assert warning_match > 0.6, name


async def assert_recorded(live: LiveRig, game_id: str, recorded_for: float) -> None:
    """One recording of the game: encrypted on disk, opened by an admin to the market place
    (Anna's voice) for the time it ran, without the prompts and tones."""
    assert live.service.app is not None
    moderation: Moderation = live.service.app.state.moderation
    admin = AccountRow(name="Ada", name_key="ada", password_hash="-", role=Role.ADMIN)
    async with live.hub.sessions.begin() as session:
        session.add(admin)
    now = datetime.now(UTC)
    (listed,) = await list_recordings(
        live.hub.sessions, moderation.settings, by=admin.id, now=now, game_id=game_id
    )
    assert listed.room == "market" and listed.ended_at is not None
    vault = moderation.vault
    raw = (vault.directory / f"{listed.id}.vrec").read_bytes()
    content = await play_recording(live.hub.sessions, vault, listed.id, by=admin.id, now=now)
    assert content.complete
    audio = np.frombuffer(content.audio, dtype="<i2")
    print(f"recorded {content.duration_s:.1f} s of {recorded_for:.1f} s; {len(raw)} bytes")
    assert content.duration_s == pytest.approx(recorded_for, abs=2.0)
    assert content.duration_s < moderation.settings.recording_max_s
    assert level_at(audio, MARKET_HZ) > 1500  # Anna in the market place
    assert level_at(audio, 1320.0) < 100  # prompts and tones are not in the rooms
    middle = len(content.audio) // 2
    for start in (middle, middle // 2):
        assert content.audio[start : start + 1600] not in raw  # no 100 ms in the clear


@pytest.mark.rule("O2", "O3")
async def test_an_operator_call_warns_every_caller_and_records_the_market_place(
    live: LiveRig,
) -> None:
    names = ["anna", "bert", "cora", "dirk"]
    sources: dict[str, Int16Array | None] = dict.fromkeys(names)
    sources["anna"] = tone(MARKET_HZ, 115)
    assert live.service.app is not None
    recorder: TableRecorder = live.service.app.state.recorder
    async with phones(live.root / "phones", sources) as lines:
        game_id = await private_round(live, lines, names)
        actor = live.hub.actors[game_id]
        await next_phase_until(live, game_id, lambda s: s.phase is Phase.DAY)
        assert actor.state is not None
        round_ = actor.state.round
        for name in names:
            await settle(live, name)
        # The lines still play the narration of the phases the test skipped through: the
        # warning goes before that backlog (urgent), so it is heard within seconds.
        await call_the_operator(live, lines, game_id)

        def stage() -> NoticeStage | None:
            notice = live.hub.notices.current(game_id)
            return notice.stage if notice is not None else None

        await wait_until(lambda: stage() is NoticeStage.WARNING, 5)
        await wait_until(lambda: stage() is NoticeStage.RECORDING, 30)
        recording_began = time.monotonic()
        # Recording starts only once every caller's line has played the warning and the tone.
        for name in names:
            assert TONE not in live.session(name).prompts.queued_tones, name
        await asyncio.sleep(4.0)  # the market place (Anna) is being recorded
        await next_phase_until(live, game_id, lambda s: s.round > round_)  # the round ends
        await wait_until(lambda: stage() is None and not recorder.recordings, 15)
        recorded_for = time.monotonic() - recording_began
        await asyncio.sleep(4.0)  # the end of the recording is spoken
        for phone in lines.values():
            await phone.hangup()
        await wait_until(lambda: not live.phone.lines, 10)
        await asyncio.sleep(0.3)
        heard = {name: lines[name].recording() for name in names}

    assert_warned(live, heard)
    await assert_recorded(live, game_id, recorded_for)
