"""The real service with browser voice and its telephone channel sharing one set of rooms.

Callers are seated by the phone suite's switchboard (tests/phone/e2e/conftest.py); browser
peers are aiortc clients (tests/voice/client.py) signalled over the real WebSocket.
"""

from __future__ import annotations

import wave
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest
from playwright.async_api import Browser, async_playwright

from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS
from tests.needs import need
from tests.phone.e2e.conftest import PhoneRig, Switchboard
from tests.phone.media_path import MEDIA_PROCESSES
from tests.service.support import running_service
from vollmond.phone.service import start_phone
from vollmond.phone.sip.uas import UasConfig
from vollmond.service.config import Settings
from vollmond.voice.browser import BrowserVoice


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[PhoneRig]:
    need("baresip")
    settings = Settings(data_dir=tmp_path / "data", sip_port=0)
    board = Switchboard()
    async with running_service("sqlite", settings) as service:
        assert service.app is not None
        voice: BrowserVoice = service.app.state.voice
        phone = await start_phone(
            service.hub,
            settings,
            session_factory=board,
            config=UasConfig(
                host="127.0.0.1",
                port=0,
                ring_time=0.05,
                rtp_timeout=10.0,
                media_processes=MEDIA_PROCESSES,
            ),
            rooms=voice.rooms,  # as the app does: one mixer per game for both channels
        )
        assert phone is not None
        try:
            yield PhoneRig(service, phone, board, tmp_path)
        finally:
            await phone.close()


MIC_RATE = 48000


def tone_wav(path: Path, freq: float, seconds: float) -> Path:
    n = np.arange(int(seconds * MIC_RATE))
    samples = (8000 * np.sin(2 * np.pi * freq * n / MIC_RATE)).astype("<i2")
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(MIC_RATE)
        out.writeframes(samples.tobytes())
    return path


@pytest.fixture
async def chromium(tmp_path: Path) -> AsyncIterator[Browser]:
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} is missing: apt-get install chromium-headless-shell", pytrace=False
        )
    mic = tone_wav(tmp_path / "mic.wav", 1000.0, 20.0)
    args = [
        *CHROMIUM_ARGS,
        "--use-fake-ui-for-media-stream",
        "--use-fake-device-for-media-stream",
        f"--use-file-for-fake-audio-capture={mic}",
        "--autoplay-policy=no-user-gesture-required",
    ]
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=str(CHROMIUM), args=args)
        try:
            yield browser
        finally:
            await browser.close()
