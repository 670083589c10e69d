"""The "recording" mark in the browser (O2, O4): shown while the table is recorded, again after
a reload, and gone once the recording has ended — all from the server's notice, never a
timer of the page.

The service runs in a thread of this process (not as `tests.browser.serve`), so the test can
raise the alarm through the service's own ``Moderation`` object: the web operator button is
not wired to it in this branch (that is the enforcement helper's work).
"""

from __future__ import annotations

import asyncio
import secrets
import threading
from collections.abc import Coroutine, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

import pytest
from playwright.sync_api import Browser, expect

from tests.service.support import Service, running_service
from vollmond.engine.standard.types import Phase
from vollmond.moderation import Caller, Moderation
from vollmond.service.config import Settings
from vollmond.service.policy import Policy
from vollmond.settings.moderation import ModerationSettings

from .players import Player

pytestmark = pytest.mark.slow

T = TypeVar("T")
DURATIONS = {"night_s": 300, "morning_s": 60, "day_s": 300, "vote_s": 60}
RECORDING_S = 8


@dataclass
class ThreadedService:
    """The real service on an event loop of its own thread; `run` executes a coroutine there."""

    service: Service
    loop: asyncio.AbstractEventLoop

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 30) -> T:
        future: Future[T] = asyncio.run_coroutine_threadsafe(coro, self.loop)
        return future.result(timeout)


@pytest.fixture
def threaded(tmp_path: Path) -> Iterator[ThreadedService]:
    settings = Settings(
        data_dir=tmp_path / "data",
        policy=replace(Policy(), login_attempts_per_minute=10_000),
        moderation=ModerationSettings(recording_max_s=RECORDING_S),
    )
    loop = asyncio.new_event_loop()
    ready: Future[Service] = Future()
    stop = asyncio.Event()

    async def serve() -> None:
        try:
            async with running_service("sqlite", settings) as service:
                ready.set_result(service)
                await stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            raise

    thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True)
    thread.start()
    try:
        yield ThreadedService(ready.result(60), loop)
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(60)
        loop.close()


async def fill_table(service: Service, game_id: str) -> None:
    """Three guests take the other seats, so the founder's round starts."""
    for index in range(3):
        await service.hub.join(game_id, account_id=None, name=f"Gast{index}", channel="phone")
    assert service.hub.running_phase(game_id) == Phase.NIGHT.value


async def raise_alarm(moderation: Moderation, service: Service, game_id: str, accused: int) -> None:
    actor = service.hub.actors[game_id]
    assert actor.state is not None
    caller = 2 if accused != 2 else 3
    await moderation.raise_alarm(
        game_id=game_id,
        round=actor.state.round,
        phase=actor.state.phase.value,
        caller=Caller(house=caller),
        reason=1,
        accused_house=accused,
    )


@pytest.mark.rule("O2", "O4")
def test_the_page_shows_the_recording_mark_while_it_runs_after_a_reload_and_not_after(
    browser: Browser, threaded: ThreadedService
) -> None:
    service = threaded.service
    assert service.app is not None
    moderation: Moderation = service.app.state.moderation
    player = Player.open(browser, service.base_url, f"Zeugin{secrets.token_hex(3)}")
    try:
        player.signup()
        game_id = player.found(4, DURATIONS)
        threaded.run(fill_table(service, game_id))
        player.wait_for_role()
        mark = player.page.locator("#recording-mark")
        expect(mark).to_be_hidden()

        threaded.run(raise_alarm(moderation, service, game_id, player.seat))
        expect(mark).to_be_visible()
        expect(mark).to_contain_text("Aufnahme läuft")
        expect(mark).to_contain_text("aufgezeichnet")
        assert service.hub.notices.current(game_id) is not None

        # O4: after a reload the page is told again by the server and shows the mark.
        player.page.reload()
        player.wait_for_role()
        expect(mark).to_be_visible()
        expect(mark).to_contain_text("Aufnahme läuft")

        # The server ends the recording (recording_max_s); the mark goes with it.
        expect(mark).to_be_hidden(timeout=(RECORDING_S + 10) * 1000)
        assert service.hub.notices.current(game_id) is None
        player.page.reload()
        player.wait_for_role()
        expect(player.page.locator("#game")).to_be_visible()
        expect(mark).to_be_hidden()
        recorded = [m for m in player.messages() if m.get("type") == "recording"]
        assert [m["active"] for m in recorded] == [True, True, True, False], recorded
        player.assert_no_script_errors()
    finally:
        player.close()
