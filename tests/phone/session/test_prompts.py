"""Voices, tones and the prompt queue; the real espeak-ng voice where it matters."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.needs import need
from vollmond.i18n import text
from vollmond.phone.caller import CallerId
from vollmond.phone.session import PhoneSession
from vollmond.phone.session.prompts import (
    FRAME_SAMPLES,
    Audio,
    EspeakVoice,
    Priority,
    PromptQueue,
    tones,
)
from vollmond.phone.session.prompts.prewarm import prewarm, static_prompts
from vollmond.service.hub import Hub
from vollmond.worlds import get_world

from .support import TextVoice, press


def rms(audio: Audio) -> float:
    return float(np.sqrt(np.mean(audio.astype(np.float64) ** 2))) if len(audio) else 0.0


def test_tones_have_their_cadence_and_level() -> None:
    ring = tones.ringing()
    assert len(ring) == 5 * 8000 and rms(ring[:8000]) > 3000 and rms(ring[8000:]) == 0
    busy = tones.busy(1)
    assert len(busy) == int(0.96 * 8000)
    assert np.abs(tones.beep()).max() < 32767 * 0.31
    assert len(tones.recording_notice()) > 0 and len(tones.incoming_ring()) > 0
    spectrum = np.abs(np.fft.rfft(tones.tone(425, 1000)))
    assert abs(int(np.argmax(spectrum)) - 425) <= 1  # 1 s of signal: 1 Hz per bin


async def test_the_queue_plays_in_order_in_frames_and_barge_in_drops_menus_only() -> None:
    voice = TextVoice()
    queue = PromptQueue(voice, "de")
    assert queue.next_frame() is None
    queue.say("Morgenbericht", Priority.NEWS)
    queue.say("Menü eins")
    queue.play("beep", tones.beep())
    await queue.rendered()
    frame = queue.next_frame()
    assert frame is not None and frame.shape == (FRAME_SAMPLES,) and frame.dtype == np.int16
    assert queue.interrupt() == 2  # the menu and the beep; the news stays
    rest = await queue.drain()
    assert len(rest) + FRAME_SAMPLES >= len("Morgenbericht") * 80
    assert queue.next_frame() is None
    assert [s.text or s.tone for s in queue.transcript] == ["Morgenbericht", "Menü eins", "beep"]
    queue.play("ringing", tones.ringing(4), Priority.NEWS)
    queue.say("Die Leitung steht", Priority.NEWS)
    assert queue.queued_tones == ["ringing"]
    assert queue.stop_tone("ringing") == 1 and queue.queued_tones == []
    left = len(await queue.drain())
    assert len("Die Leitung steht") * 80 <= left < len("Die Leitung steht") * 80 + FRAME_SAMPLES


def test_espeak_renders_german_at_8khz_once_and_caches_on_disk(tmp_path: Path) -> None:
    need("espeak-ng", "sox")
    voice = EspeakVoice(tmp_path / "cache")
    audio = voice.render("Hausnummer fünf ruft an", "de")
    assert audio.dtype == np.int16 and 0.8 * 8000 < len(audio) < 4 * 8000
    assert rms(audio) > 500
    again = voice.render("Hausnummer fünf ruft an", "de")
    assert voice.renders == 1 and np.array_equal(audio, again)
    assert len(list((tmp_path / "cache").glob("*.s16"))) == 1
    fresh = EspeakVoice(tmp_path / "cache")
    assert np.array_equal(fresh.render("Hausnummer fünf ruft an", "de"), audio)
    assert fresh.renders == 0
    english = voice.render("House five is calling", "en")
    assert voice.renders == 2 and not np.array_equal(english[: len(audio)], audio[: len(english)])


async def test_the_greeting_is_heard_with_the_real_voice(hub: Hub, tmp_path: Path) -> None:
    need("espeak-ng", "sox")
    voice = EspeakVoice(tmp_path / "cache")
    session = PhoneSession(hub, CallerId("anonymous"), voice)
    await session.start()
    await session.prompts.rendered()
    first = session.prompts._queue[0]
    assert first.ready() and first.audio is not None
    greeting = text("phone.greeting", "de", get_world("werwolf"))
    assert np.array_equal(first.audio, voice.render(greeting, "de"))
    frames: list[Audio] = []
    while (frame := session.next_frame()) is not None and len(frames) < 50 * 30:
        frames.append(frame)
    audio = np.concatenate(frames)
    assert rms(audio) > 500  # speech, not silence
    assert len(audio) >= len(first.audio)
    await session.close()


async def test_a_key_cuts_the_menu_short_with_the_real_voice(hub: Hub, tmp_path: Path) -> None:
    need("espeak-ng", "sox")
    session = PhoneSession(hub, CallerId("anonymous"), EspeakVoice(tmp_path / "cache"))
    await session.start()
    await session.prompts.rendered()
    session.next_frame()
    await press(session, "2")  # guest, while the choices still play
    assert session.transcript[1].text == text("phone.ident.choices", "de", get_world("werwolf"))
    await session.prompts.rendered()
    remaining = await session.prompts.drain()
    assert 0 < len(remaining) < 8000 * 40
    await session.close()


async def test_prewarming_renders_the_fixed_prompts_once(tmp_path: Path) -> None:
    voice = TextVoice()
    count = await prewarm(voice, "de")
    rendered = [line for line, _ in voice.rendered]
    assert count == len(rendered) > 50
    assert text("phone.menu.choices", "de", get_world("werwolf")) in rendered
    assert text("phone.night.step.evil", "de", get_world("vampir")) in rendered
    assert all("{" not in line for line in rendered)
    assert static_prompts("en") and set(static_prompts("en")).isdisjoint(rendered)
