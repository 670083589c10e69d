"""Moderation end to end, one chain with real clients (issue 9, "Prove it"): a baresip caller
presses ``*9 1 NN #`` in a running game → the alarm appears in a moderator's console page
(Chromium) within a second → every caller at the table hears the warning and the tone on real
audio → the recording's file holds no audio in the clear → an admin plays it in the console
page and the audit log has the entry; a moderator's attempt to play it is refused (and
audited too).

Two callers with the real phone sessions join a public table from the announcer (two web
guests fill it); the moderator and the admin are signed-in accounts whose cookies Chromium
and an HTTP client carry.
"""

from __future__ import annotations

import asyncio
import io
import time
import wave
from collections.abc import AsyncIterator
from typing import Any

import numpy as np
import pytest
from playwright.async_api import Browser, Page, expect

from tests.browser.test_moderation_console import OBSERVE_ALARMS
from tests.phone.e2e.conftest import LiveRig
from tests.phone.e2e.support import Phone, level_at, phones, tone, wait_until
from tests.phone.e2e.test_callers import dial, settle
from tests.phone.e2e.test_recording import MARKET_HZ, assert_warned
from tests.service.support import ApiClient
from tests.voice.conftest import chromium
from vollmond.engine.standard import GameOptions
from vollmond.engine.standard.commands import PhaseTimeout
from vollmond.engine.standard.types import Phase
from vollmond.moderation import Moderation
from vollmond.moderation.alarms import list_alarms
from vollmond.phone.media import Int16Array
from vollmond.service.notices import NoticeStage
from vollmond.store.accounts import set_role
from vollmond.store.models import Role

pytestmark = pytest.mark.slow
__all__ = ["chromium"]  # the Chromium fixture of the voice tests


async def staff(live: LiveRig, name: str, role: Role) -> ApiClient:
    client = ApiClient(live.service)
    await client.signup(name)
    assert client.account_id is not None
    await set_role(live.hub.sessions, client.account_id, role)
    return client


async def console(browser: Browser, live: LiveRig, client: ApiClient, route: str) -> Page:
    """The console page signed in as `client` (its session cookie in a fresh context)."""
    base = live.service.base_url
    context = await browser.new_context(base_url=base, locale="de-DE")
    cookies: Any = [{"name": k, "value": v, "url": base} for k, v in client.http.cookies.items()]
    await context.add_cookies(cookies)
    page = await context.new_page()
    await page.goto(f"/mod.html{route}")
    return page


async def seat_callers(live: LiveRig, lines: dict[str, Phone]) -> str:
    """Three web guests wait at a public five-seat table; the callers join it from the
    announcer as guests (2 guest, 1 play, 1# the first world, 1# the first table)."""
    founded = await live.hub.found(GameOptions(players=5), private=False, host_account_id=None)
    for name in ("Web 1", "Web 2", "Web 3"):
        await live.hub.join(founded.game.id, account_id=None, name=name)
    for name, phone in lines.items():
        await dial(live, phone)
        await settle(live, name)
        for keys in ("2", "1", "1#", "1#"):
            await phone.keys(keys, gap=0.1)
            await settle(live, name)
    await wait_until(lambda: all(live.session(n).seat is not None for n in lines), 20)
    return founded.game.id


async def next_phase_until(live: LiveRig, game_id: str, done: Any) -> None:
    actor = live.hub.actors[game_id]
    async with asyncio.timeout(20):
        while actor.state is not None and not done(actor.state):
            assert actor.state.phase is not Phase.OVER
            await live.hub.submit(game_id, PhaseTimeout(actor.state.phase_seq))


async def alarm_reaches_the_console(
    live: LiveRig, lines: dict[str, Phone], game_id: str, page: Page
) -> None:
    """Bert presses ``*9 1 <anna> #``; the alarm's card is in the moderator's page within a
    second of the closing ``#`` (the key's RTP event, the session, the store, the feed, the
    console socket, the page)."""
    anna = live.session("anna").seat
    assert anna is not None
    await lines["bert"].keys(f"*91{anna:02d}")
    hash_ms = time.time() * 1000
    await lines["bert"].keys("#")
    await wait_until(lambda: bool(live.session("bert").operator_calls), 15)
    await live.session("bert").idle()
    (alarm,) = await list_alarms(live.hub.sessions, game_id=game_id)
    assert (alarm.caller.house, alarm.reason, alarm.accused_house) == (
        live.session("bert").seat,
        1,
        anna,
    )
    card = page.locator(f'li[data-alarm="{alarm.id}"]')
    await expect(card).to_contain_text(f"Beschuldigt: Haus {anna}", timeout=2_000)
    seen_ms = await page.evaluate(f"window.__alarmSeen['{alarm.id}']")
    print(f"'#' pressed -> alarm in the console: {seen_ms - hash_ms:.0f} ms")
    assert seen_ms - hash_ms < 1000


async def played_by_admin(browser: Browser, live: LiveRig, admin: ApiClient, rec: str) -> None:
    """The admin plays the recording in the console page (muted: headless autoplay)."""
    page = await console(browser, live, admin, "#recordings")
    try:
        await expect(page.locator(f'li[data-recording="{rec}"]')).to_be_visible()
        played = await page.evaluate(
            """async (id) => {
                const audio = document.querySelector(`li[data-recording="${id}"] audio`);
                audio.muted = true;
                audio.playbackRate = 16;
                const ended = new Promise((ok) => audio.addEventListener("ended", ok));
                await audio.play();
                await ended;
                return audio.duration;
            }""",
            rec,
        )
        assert played > 0.5, played
    finally:
        await page.context.close()


def pcm_of(wav_body: bytes) -> bytes:
    with wave.open(io.BytesIO(wav_body)) as wav:
        assert (wav.getframerate(), wav.getnchannels()) == (8000, 1)
        frames: bytes = wav.readframes(wav.getnframes())
        return frames


@pytest.fixture
async def people(live: LiveRig) -> AsyncIterator[tuple[ApiClient, ApiClient]]:
    admin, mo = await staff(live, "Ada", Role.ADMIN), await staff(live, "Mo", Role.MODERATOR)
    yield admin, mo
    for client in (admin, mo):
        await client.close()


@pytest.mark.rule("O1", "O2", "O3")
async def test_a_star9_call_reaches_the_console_warns_records_and_only_an_admin_plays_it(
    live: LiveRig, chromium: Browser, people: tuple[ApiClient, ApiClient]
) -> None:
    admin, mo = people
    assert live.service.app is not None
    moderation: Moderation = live.service.app.state.moderation
    names = ["anna", "bert"]
    sources: dict[str, Int16Array | None] = {"anna": tone(MARKET_HZ, 60), "bert": None}
    page = await console(chromium, live, mo, "")
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        await expect(page.locator("#mod-live")).to_have_text("Live verbunden", timeout=15_000)
        await page.evaluate(OBSERVE_ALARMS)
        async with phones(live.root / "phones", sources) as lines:
            game_id = await seat_callers(live, lines)
            # At once, in the first night: the warning goes before the day's narration.
            await alarm_reaches_the_console(live, lines, game_id, page)

            def stage() -> NoticeStage | None:
                notice = live.hub.notices.current(game_id)
                return notice.stage if notice is not None else None

            # Day breaks: the night's unheard turn prompts are withdrawn, the warning stays.
            await next_phase_until(live, game_id, lambda s: s.phase is Phase.DAY)
            await wait_until(lambda: stage() is NoticeStage.RECORDING, 30)  # warned first
            await asyncio.sleep(1.5)  # anna's voice on the market place is recorded
            await next_phase_until(live, game_id, lambda s: s.phase is not Phase.DAY)
            await wait_until(lambda: stage() is None, 15)
            for phone in lines.values():
                await phone.hangup()
            await wait_until(lambda: not live.phone.lines, 10)
            heard = {name: await lines[name].final_recording() for name in names}
        assert_warned(live, heard)

        (recording,) = (await admin.get("/api/mod/recordings")).json()["recordings"]
        raw = (moderation.vault.directory / f"{recording['id']}.vrec").read_bytes()
        refused = await mo.get(f"/api/mod/recordings/{recording['id']}/audio")
        assert refused.status_code == 403 and refused.json()["error"] == "not_permitted"

        await played_by_admin(chromium, live, admin, recording["id"])
        # The page's playback is in the audit log; so is the moderator's refused attempt.
        entries = (await admin.get("/api/mod/audit")).json()["entries"]
        target = [e for e in entries if e["target_id"] == str(recording["id"])]
        assert any(
            e["action"] == "recording.play" and e["actor"] == admin.account_id for e in target
        )
        assert any(
            e["action"] == "recording.play.refused" and e["actor"] == mo.account_id for e in target
        )
        # The bytes the admin gets hold the market place; the file on disk holds none of it.
        body = await admin.get(f"/api/mod/recordings/{recording['id']}/audio")
        pcm = pcm_of(body.content)
        assert level_at(np.frombuffer(pcm, dtype="<i2"), MARKET_HZ) > 1500  # anna, recorded
        for start in (len(pcm) // 4, len(pcm) // 2):
            assert pcm[start : start + 1600] not in raw  # no 100 ms in the clear on disk

        assert not errors, errors
    finally:
        await page.context.close()
