"""The real service (uvicorn, store, hub, game actors) with its telephone channel on a free
port, and a switchboard of minimal sessions that seat a caller by name.

The switchboard is this test suite's own minimal seating path: it stands in for the announcer
menu (``vollmond.phone.session``) where a test is about the voice rooms, the transport or the
service's robustness rather than the menu. Callers whose name the switchboard does not know
get a session in the menu: no game, no room.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from tests.needs import need
from tests.phone.e2e.support import KeyLog
from tests.phone.media_path import MEDIA_PROCESSES
from tests.prompt_cache import PROMPT_CACHE
from tests.service.support import Service, running_service
from vollmond.engine.standard import GameOptions
from vollmond.phone.caller import CallerId
from vollmond.phone.media import Int16Array
from vollmond.phone.service import LineSession, PhoneService, start_phone
from vollmond.phone.session import EspeakVoice, PhoneSession
from vollmond.phone.session.prompts import Renders
from vollmond.phone.sip.uas import UasConfig
from vollmond.service.config import Settings
from vollmond.service.enforce import Person
from vollmond.service.hub import Hub
from vollmond.settings.moderation import ModerationSettings
from vollmond.settings.phone import PhoneSettings
from vollmond.settings.sip import SipSettings


@dataclass(eq=False)
class SeatSession:
    """A caller already seated (or spectating, or in the menu): keys are only recorded."""

    game_id: str | None = None
    seat: int | None = None
    spectating: bool = False
    prompt: Int16Array | None = None
    person: Person = field(default_factory=Person)  # for moderation (a muted caller)
    keylog: KeyLog = field(default_factory=KeyLog)
    started: bool = False
    closed: bool = False
    _played: int = 0

    async def start(self) -> None:
        self.started = True

    def on_key(self, key: str) -> None:
        import time  # noqa: PLC0415

        self.keylog.keys.append(key)
        self.keylog.times.append(time.monotonic())

    def next_frame(self) -> Int16Array | None:
        if self.prompt is None or self._played >= len(self.prompt):
            return None
        frame = self.prompt[self._played : self._played + 160]
        self._played += 160
        if len(frame) < 160:
            frame = np.pad(frame, (0, 160 - len(frame)))
        return frame

    async def close(self) -> None:
        self.closed = True


@dataclass
class Switchboard:
    """Session factory: the caller's name picks a prepared session."""

    prepared: dict[str, SeatSession] = field(default_factory=dict)
    made: dict[str, list[SeatSession]] = field(default_factory=dict)

    def __call__(self, caller: CallerId) -> LineSession:
        template = self.prepared.get(caller.number, SeatSession())
        session = SeatSession(
            template.game_id, template.seat, template.spectating, template.prompt, template.person
        )
        self.made.setdefault(caller.number, []).append(session)
        return session

    def session(self, caller: str) -> SeatSession:
        return self.made[caller][-1]


@dataclass
class PhoneRig:
    service: Service
    phone: PhoneService
    board: Switchboard
    root: Path

    @property
    def hub(self) -> Hub:
        return self.service.hub

    @property
    def sip_port(self) -> int:
        assert self.phone.uas is not None
        return self.phone.uas.port

    async def table(self, options: GameOptions) -> str:
        """A running game: every seat joined (by name, no account), so it starts when full."""
        founded = await self.hub.found(
            options, private=False, host_account_id=None, host_name="p1", channel="phone"
        )
        for i in range(2, options.players + 1):
            await self.hub.join(founded.game.id, account_id=None, name=f"p{i}", channel="phone")
        assert founded.game.id in self.hub.actors
        return founded.game.id


@pytest.fixture
def media_processes() -> int:
    """The media path of the rigs (a test module may override it: test_media_process)."""
    return MEDIA_PROCESSES


@pytest.fixture
async def rig(tmp_path: Path, media_processes: int) -> AsyncIterator[PhoneRig]:
    need("baresip", "sipp")
    settings = Settings(data_dir=tmp_path / "data", sip_port=0)
    board = Switchboard()
    async with running_service("sqlite", settings) as service:
        phone = await start_phone(
            service.hub,
            settings,
            session_factory=board,
            config=UasConfig(
                host="127.0.0.1",
                port=0,
                ring_time=0.05,
                rtp_timeout=5.0,
                media_processes=media_processes,
            ),
            enforcer=service.enforcer,
        )
        assert phone is not None
        try:
            yield PhoneRig(service, phone, board, tmp_path)
        finally:
            await phone.close()


# --- the real sessions (vollmond.phone.session) ----------------------------------------------


@pytest.fixture(scope="session")
def voice() -> EspeakVoice:
    """espeak-ng with one prompt cache for the whole test run (each text rendered once, by
    whichever test process needs it first: tests/conftest.py)."""
    return EspeakVoice(PROMPT_CACHE)


@dataclass
class LiveRig:
    """The service with the real session per call; every session made is kept by caller."""

    service: Service
    phone: PhoneService
    voice: EspeakVoice
    root: Path
    sessions: dict[str, list[PhoneSession]] = field(default_factory=dict)

    @property
    def hub(self) -> Hub:
        return self.service.hub

    @property
    def sip_port(self) -> int:
        assert self.phone.uas is not None
        return self.phone.uas.port

    def session(self, caller: str) -> PhoneSession:
        return self.sessions[caller][-1]


@contextlib.asynccontextmanager
async def live_rig(
    tmp_path: Path,
    voice: EspeakVoice,
    sip: SipSettings | None = None,
    *,
    silence_s: float = 8.0,
    moderation: ModerationSettings | None = None,
    media_processes: int = MEDIA_PROCESSES,
) -> AsyncIterator[LiveRig]:
    """The service with real sessions per call; `sip` sets the SIP server's trust and limits,
    `silence_s` the quiet before a reminder (short in the silence test, to keep it short),
    `moderation` the operators' moderation settings (a short conference recording),
    `media_processes` the media path (tests/phone/media_path.py)."""
    need("baresip", "sipp", "espeak-ng", "sox")
    settings = Settings(
        data_dir=tmp_path / "data", sip_port=0, moderation=moderation or ModerationSettings()
    )
    async with running_service("sqlite", settings) as service:
        made: dict[str, list[PhoneSession]] = {}
        renders = Renders(voice)  # shared by the calls, as the service's own factory does

        def factory(caller: CallerId) -> LineSession:
            session = PhoneSession(
                service.hub,
                caller,
                voice,
                identity=settings.identity,
                digit_timeout_s=2.0,
                enforcer=service.enforcer,
                phone=PhoneSettings(silence_s=silence_s),
                renders=renders,
            )
            made.setdefault(caller.number, []).append(session)
            return session

        uas = UasConfig(
            host="127.0.0.1",
            port=0,
            ring_time=0.05,
            rtp_timeout=10.0,
            media_processes=media_processes,
        )
        if sip is not None:
            uas = dataclasses.replace(uas, settings=sip)
        phone = await start_phone(
            service.hub, settings, session_factory=factory, config=uas, enforcer=service.enforcer
        )
        assert phone is not None
        try:
            yield LiveRig(service, phone, voice, tmp_path, made)
        finally:
            await phone.close()


@pytest.fixture
async def live(tmp_path: Path, voice: EspeakVoice, media_processes: int) -> AsyncIterator[LiveRig]:
    async with live_rig(tmp_path, voice, media_processes=media_processes) as rig:
        yield rig
