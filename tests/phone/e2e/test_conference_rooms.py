"""Conference rooms on real audio (X2): three baresip callers go through the announcer by keys
(2 guest, 5 conference rooms, NN# a world's room). Anna and Bert meet in the Werwolf room and
hear each other; Cora, alone in the Vampir room, hears neither and is heard by neither.

Each phone plays its own tone; the tail of each recording (after every prompt has been
played, so only the room is heard) shows who heard whom across two real G.711 legs.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from tests.phone.e2e.conftest import LiveRig, live_rig
from tests.phone.e2e.support import Phone, level_at, phones, stop_all, tone, wait_until
from tests.phone.e2e.test_callers import best_match, dial, settle
from vollmond.moderation import Moderation
from vollmond.moderation.alarms import list_alarms
from vollmond.moderation.recordings import list_recordings, play_recording
from vollmond.phone.media import Int16Array
from vollmond.phone.session import EspeakVoice
from vollmond.phone.session.prompts import tones
from vollmond.phone.session.recording import TONE
from vollmond.service.notices import NoticeStage
from vollmond.settings.moderation import ModerationSettings
from vollmond.store import Role
from vollmond.store.models import AccountRow

HEARD = 1500.0  # a 6000-amplitude tone arrives near full level
SILENT = 60.0  # G.711 idle noise and rounding stay far below this
TONES = {"anna": 1000.0, "bert": 700.0, "cora": 1300.0}
ROOMS = {"anna": "1#", "bert": "1#", "cora": "2#"}  # Werwolf, Werwolf, Vampir


async def enter_by_keys(live: LiveRig, lines: dict[str, Phone], rooms: dict[str, str]) -> None:
    """Every caller: 2 guest, 5 conference rooms, then the room's number and #."""
    for name, phone in lines.items():
        await dial(live, phone)
        await phone.keys("2")  # guest
        await settle(live, name)
        await phone.keys("5")  # conference rooms
        await settle(live, name)
        await phone.keys(rooms[name], gap=0.15)
    await wait_until(lambda: all(live.session(n).conference_seat is not None for n in lines), 30)


@pytest.mark.rule("X2", "X1")
async def test_two_callers_in_a_room_hear_each_other_and_a_third_room_hears_nothing(
    live: LiveRig,
) -> None:
    sources: dict[str, Int16Array | None] = {n: tone(f, 300) for n, f in TONES.items()}
    async with phones(live.root / "phones", sources) as lines:
        await enter_by_keys(live, lines, ROOMS)
        werwolf, with_anna = (live.session(n).conference_seat for n in ("anna", "bert"))
        assert werwolf is not None and with_anna is not None
        assert with_anna.voice is werwolf.voice
        vampir = live.session("cora").conference_seat
        assert vampir is not None and vampir.voice is not werwolf.voice
        # Only the room is heard once every prompt ("Bert ist da", the keys) has played.
        await wait_until(lambda: not any(live.session(n).prompts.busy for n in lines), 60)
        await asyncio.sleep(3.0)
        for phone in lines.values():
            await phone.hangup()
        await wait_until(lambda: not live.phone.lines, 10)
        await stop_all(lines.values())  # complete recording files
        tail = {n: lines[n].recording()[-int(1.5 * 8000) - 4000 : -4000] for n in lines}

    assert level_at(tail["bert"], TONES["anna"]) > HEARD  # Bert hears Anna
    assert level_at(tail["anna"], TONES["bert"]) > HEARD  # Anna hears Bert
    assert level_at(tail["anna"], TONES["anna"]) < SILENT  # nobody hears themselves
    assert level_at(tail["bert"], TONES["bert"]) < SILENT
    for name in ("anna", "bert"):
        assert level_at(tail["cora"], TONES[name]) < SILENT, name  # the other room: nothing
        assert level_at(tail[name], TONES["cora"]) < SILENT, name  # and nothing from it


LENGTH_S = 6  # the operators' conference_recording_s, short for the test (default 300)


@pytest.fixture
async def short_recording(tmp_path: Path, voice: EspeakVoice) -> AsyncIterator[LiveRig]:
    settings = ModerationSettings(conference_recording_s=LENGTH_S)
    async with live_rig(tmp_path, voice, moderation=settings) as rig:
        yield rig


@pytest.mark.rule("X2", "O1", "O2", "O3", "O4")
async def test_star_9_in_a_room_warns_everyone_then_records_the_room_for_exactly_its_length(
    short_recording: LiveRig,
) -> None:
    """Bert presses ``*9 1 01 #`` (reason 1, about number 1: Anna) in the Werwolf room: Anna
    and Bert hear the warning and the tone on real audio; the room (Anna's tone) is recorded,
    encrypted, for exactly `LENGTH_S` seconds; an admin opens it."""
    live = short_recording
    sources: dict[str, Int16Array | None] = {"anna": tone(TONES["anna"], 300), "bert": None}
    async with phones(live.root / "phones", sources) as lines:
        await enter_by_keys(live, lines, dict.fromkeys(lines, "1#"))
        await wait_until(lambda: not any(live.session(n).prompts.busy for n in lines), 60)
        await lines["bert"].keys("*9101#")
        await wait_until(lambda: live.hub.notices.current("conference:public-werwolf") is not None)
        (alarm,) = await list_alarms(live.hub.sessions)
        assert alarm.conference == "public-werwolf" and alarm.game_id is None
        assert (alarm.caller.house, alarm.reason, alarm.accused_house) == (2, 1, 1)

        def stage() -> NoticeStage | None:
            notice = live.hub.notices.current("conference:public-werwolf")
            return notice.stage if notice is not None else None

        await wait_until(lambda: stage() is NoticeStage.RECORDING, 30)
        for name in lines:  # recording began only after every line played warning and tone
            assert TONE not in live.session(name).prompts.queued_tones, name
        await wait_until(lambda: stage() is None, LENGTH_S + 15)
        await asyncio.sleep(3.0)  # "Die Aufzeichnung in diesem Raum ist beendet."
        for phone in lines.values():
            await phone.hangup()
        await wait_until(lambda: not live.phone.lines, 10)
        await stop_all(lines.values())
        heard = {name: lines[name].recording() for name in lines}

    assert_warned(live, heard)
    await assert_recorded(live)


def assert_warned(live: LiveRig, heard: dict[str, Int16Array]) -> None:
    """Everyone in the room was told (warning with the exact length, the end) and heard the
    warning and the tone on real audio."""
    notice_tone = tones.recording_notice()[: 600 * 8]
    for name, recording in heard.items():
        spoken = [s.text for s in live.session(name).transcript if s.text]
        told = [t for t in spoken if "in diesem Raum nach dem Ton aufgezeichnet" in t]
        assert told and "genau 6 Sekunden" in told[0], (name, spoken)
        assert any("Aufzeichnung in diesem Raum ist beendet" in t for t in spoken), name
        assert best_match(recording, notice_tone) > 0.8, name
        assert best_match(recording, live.voice.render(told[0], "de")) > 0.6, name


async def assert_recorded(live: LiveRig) -> None:
    """One recording of the room, exactly its length, encrypted, opened by an admin to the
    room's voice (Anna) without prompts and tones."""
    assert live.service.app is not None
    moderation: Moderation = live.service.app.state.moderation
    admin = AccountRow(name="Ada", name_key="ada", password_hash="-", role=Role.ADMIN)
    async with live.hub.sessions.begin() as session:
        session.add(admin)
    now = datetime.now(UTC)
    (listed,) = await list_recordings(live.hub.sessions, moderation.settings, by=admin.id, now=now)
    assert listed.room == "conference:public-werwolf" and listed.game_id is None
    assert listed.ended_at is not None
    assert (listed.ended_at - listed.started_at).total_seconds() == pytest.approx(LENGTH_S, abs=0.5)
    raw = (moderation.vault.directory / f"{listed.id}.vrec").read_bytes()
    content = await play_recording(
        live.hub.sessions, moderation.vault, listed.id, by=admin.id, now=now
    )
    assert content.complete
    print(f"recorded {content.duration_s:.2f} s of audio for a {LENGTH_S} s window")
    assert content.duration_s == pytest.approx(LENGTH_S, abs=1.0)
    audio = np.frombuffer(content.audio, dtype="<i2")
    assert level_at(audio, TONES["anna"]) > HEARD  # Anna in the room
    assert level_at(audio, 1320.0) < 100  # prompts and tones are not in the room's mix
    middle = len(content.audio) // 2
    assert content.audio[middle : middle + 1600] not in raw  # encrypted on disk
