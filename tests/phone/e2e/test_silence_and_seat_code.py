"""Issue 11 on real audio: a silent caller is reminded and, after three reminders in the
announcer, hung up; a guest who drops comes back to the same seat with 4 and the seat code."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest

from tests.phone.e2e.conftest import LiveRig, live_rig
from tests.phone.e2e.support import Phone, phones, read_wav, rms, stop_all, wait_until
from vollmond.engine.standard import GameOptions
from vollmond.phone.media import Int16Array
from vollmond.phone.session import EspeakVoice, PhoneSession
from vollmond.phone.session.codes import phone_code

SILENCE_S = 1.0  # instead of 8 s, so three reminders fit in a short test
WINDOW = 800  # 100 ms at 8 kHz
QUIET = 150.0  # rms of a 100 ms window below this is a pause (speech is in the thousands)
HEARD = 300.0  # rms of a stretch of speech well above the line's silence
LATE_S = 3.0  # a loaded machine may render a reminder late; never early


@pytest.fixture
async def quiet_live(tmp_path: Path, voice: EspeakVoice) -> AsyncIterator[LiveRig]:
    async with live_rig(tmp_path, voice, silence_s=SILENCE_S) as rig:
        yield rig


def speech_after_pauses(heard: Int16Array, pause_s: float) -> list[tuple[float, float]]:
    """(pause, speech) in seconds for every stretch of speech that follows a pause of at
    least `pause_s`: what a listener hears as 'quiet, then someone speaks again'."""
    windows = len(heard) // WINDOW
    loud = [rms(heard[i * WINDOW : (i + 1) * WINDOW]) >= QUIET for i in range(windows)]
    found: list[tuple[float, float]] = []
    i = 0
    while i < windows:
        if loud[i]:
            i += 1
            continue
        start = i
        while i < windows and not loud[i]:
            i += 1
        pause = (i - start) * WINDOW / 8000
        talk = i
        # speech runs on across espeak's short pauses between words and sentences
        while i < windows and (loud[i] or any(loud[i : i + int(pause_s * 10 * 0.7)])):
            i += 1
        if pause >= pause_s and i > talk:
            found.append((pause, (i - talk) * WINDOW / 8000))
    return found


def seconds(voice: EspeakVoice, *texts: str) -> float:
    return sum(len(voice.render(t, "de")) for t in texts) / 8000


async def test_a_silent_caller_is_reminded_three_times_then_hung_up(quiet_live: LiveRig) -> None:
    live = quiet_live
    async with phones(live.root / "phones", {"+4930100": None}) as lines:
        phone = lines["+4930100"]
        await phone.dial(live.sip_port)
        await wait_until(lambda: bool(live.sessions.get("+4930100")), 15)
        session = live.session("+4930100")
        reminder = session.t("phone.reminder", keys=session.t("phone.ident.choices"))
        # Nobody presses anything: three reminders, then goodbye and the server hangs up.
        await wait_until(lambda: session.spoken().count(reminder) == 1, 20)
        await asyncio.wait_for(session.hangup_requested.wait(), 25)
        await wait_until(lambda: not live.phone.lines, 15)
        await stop_all(lines.values())
        heard = lines["+4930100"].recording()
    assert session.reminded == 3 and session.spoken().count(reminder) == 3
    assert session.spoken()[-2:] == [session.t("phone.reminder_end"), session.t("phone.goodbye")]
    assert "closed" in phone.log_text().lower()  # the softphone saw the call end
    # On the line: after the greeting, four times a pause of the silence period and then
    # speech, three as long as the reminder and the last as long as the goodbye.
    after = speech_after_pauses(heard, SILENCE_S * 0.8)
    assert len(after) >= 4, after
    *_, r1, r2, r3, end = after
    long = seconds(live.voice, reminder)
    short = seconds(live.voice, session.t("phone.reminder_end"), session.t("phone.goodbye"))
    for pause, talk in (r1, r2, r3):
        assert SILENCE_S * 0.8 <= pause <= SILENCE_S + LATE_S, after
        assert abs(talk - long) <= 1.0, (after, long)
    assert SILENCE_S * 0.8 <= end[0] <= SILENCE_S + LATE_S and abs(end[1] - short) <= 1.0, after
    assert rms(heard[-int((r3[1] + end[0] + end[1]) * 8000) :]) > HEARD


def spoken_seat_code(session: PhoneSession) -> str | None:
    prefix = session.t("phone.menu.seat_code", code="@").split("@")[0]
    line = next((s for s in session.spoken() if s.startswith(prefix)), None)
    return None if line is None else "".join(ch for ch in line.split(".")[0] if ch.isdigit())


def calls(phone: Phone) -> list[Int16Array]:
    """What the phone heard, one recording per call."""
    return [read_wav(f) for f in sorted((phone.home / "snd").glob("*-dec.wav"))]


async def settle(session: PhoneSession) -> None:
    async with asyncio.timeout(20):
        await session.idle()
        await session.prompts.rendered()


async def seat_id(live: LiveRig, game_id: str, token: str | None) -> int | None:
    seat = await live.hub.seat_for(game_id, token) if token is not None else None
    return seat.id if seat is not None else None


async def test_a_guest_drops_and_comes_back_to_the_same_seat_with_the_seat_code(
    live: LiveRig,
) -> None:
    founded = await live.hub.found(
        GameOptions(players=5), private=True, host_account_id=None, channel="web"
    )
    game_id = founded.game.id
    assert founded.invitation_code is not None
    digits = phone_code(founded.invitation_code)
    number = "+4930200"
    async with phones(live.root / "phones", {number: None}) as lines:
        phone = lines[number]
        await phone.dial(live.sip_port)
        await wait_until(lambda: bool(live.sessions.get(number)), 15)
        guest = live.session(number)
        await wait_until(lambda: guest.announcer.ident.state == "choices", 15)
        await phone.keys("2")  # guest
        await wait_until(lambda: guest.announcer.state == "menu", 15)
        await phone.keys("2")  # a private round by its code
        await wait_until(lambda: guest.announcer.state == "code", 15)
        await phone.keys(digits + "#", gap=0.15)
        await wait_until(lambda: spoken_seat_code(guest) is not None, 20)
        code = spoken_seat_code(guest)
        assert code is not None and len(code) == 5
        # Before the start a seat is its row (houses are dealt at the start); its token is
        # the call's key to it, renewed when the code brings a caller back.
        token, seats = guest.announcer.lobby_token, len((await live.hub.table(game_id)).seats)
        held = await seat_id(live, game_id, token)
        assert guest.game_id == game_id and held is not None
        await settle(guest)
        await wait_until(lambda: guest.prompts.playing is None, 20)  # the code was heard
        await phone.hangup()  # the call drops
        await wait_until(lambda: not live.phone.lines, 10)
        # Calling back: guest, 4, the seat code.
        await phone.dial(live.sip_port)
        await wait_until(lambda: len(live.sessions[number]) == 2, 15)
        back = live.session(number)
        await wait_until(lambda: back.announcer.ident.state == "choices", 15)
        await phone.keys("2")
        await wait_until(lambda: back.announcer.state == "menu", 15)
        await phone.keys("4")
        await wait_until(lambda: back.announcer.state == "seatcode", 15)
        await phone.keys(code + "#", gap=0.15)
        await wait_until(lambda: back.game_id == game_id, 15)
        assert back.announcer.state == "lobby"
        assert await seat_id(live, game_id, back.announcer.lobby_token) == held  # the same seat
        assert await seat_id(live, game_id, token) is None  # the dropped call's key is void
        assert len((await live.hub.table(game_id)).seats) == seats  # no second seat
        await settle(back)
        await phone.hangup()
        await wait_until(lambda: not live.phone.lines, 10)
        await stop_all(lines.values())
        first, second = calls(phone)
    assert back.t("phone.menu.ask_seat_code") in back.spoken()
    # Both calls carried speech: the seat code at the end of the first, the menu in the second.
    code_s = seconds(live.voice, guest.t("phone.menu.seat_code", code=" ".join(code)))
    assert rms(first[-int(code_s * 8000) :]) > HEARD
    assert rms(second) > HEARD
    assert np.max(np.abs(second)) > 1000
