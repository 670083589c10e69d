"""Browser voice in a conference room (X2, X5): Debian's Chromium (Playwright) with a fake
microphone playing a 1000 Hz tone enters the Werwolf room on /rooms.html and turns on its
voice; a baresip caller in the same room plays 700 Hz, another caller sits in the Vampir room.

The caller in the room hears the browser, the browser receives the caller, and the Vampir room
hears nothing of either: the page's peer is a line of the room's own mixer, like a call.
"""

from __future__ import annotations

import asyncio

import pytest
from playwright.async_api import Browser, Page, expect

from tests.phone.e2e.conftest import PhoneRig
from tests.phone.e2e.support import level_at, phones, tone
from tests.voice.test_browser_voice import SILENT, dial_all, hang_up_all
from tests.voice.test_chromium_voice import BROWSER_HEARD
from vollmond.phone.media import Int16Array
from vollmond.service.conference import conference_rooms
from vollmond.service.enforce import Person
from vollmond.voice.conference import ConferenceSeat

pytestmark = pytest.mark.slow


async def received_energy(page: Page) -> float:
    """The audio energy the rooms page's peer has received so far (WebRTC stats)."""
    energy: float = await page.evaluate(
        """async () => {
            const pc = window.vollmondRoomPeer && window.vollmondRoomPeer();
            if (!pc) return 0;
            let energy = 0;
            (await pc.getStats()).forEach((s) => {
                if (s.type === "inbound-rtp" && s.kind === "audio") {
                    energy = s.totalAudioEnergy || 0;
                }
            });
            return energy;
        }"""
    )
    return energy


@pytest.mark.rule("X2", "X5")
async def test_a_browser_talks_with_a_caller_in_a_conference_room(
    rig: PhoneRig, chromium: Browser
) -> None:
    context = await chromium.new_context(base_url=rig.service.base_url, locale="de-DE")
    await context.grant_permissions(["microphone"])
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    await page.goto("/rooms.html")
    csrf = await page.evaluate("fetch('/api/me').then(() => document.cookie)")
    token = next(p.split("=", 1)[1] for p in csrf.split("; ") if p.startswith("vollmond_csrf="))
    guest = await page.request.post(
        "/api/guest", data={"name": "Wilma"}, headers={"X-CSRF-Token": token}
    )
    assert guest.ok, await guest.text()
    await page.reload()
    await page.click('li[data-room="public-werwolf"] button.enter')
    await expect(page.locator("#room-title")).to_have_text("Raum Werwolf")
    await page.click("#room-voice")
    await expect(page.locator("#room-voice")).to_have_attribute(
        "data-state", "connected", timeout=15_000
    )

    rooms = conference_rooms(rig.hub)
    werwolf, vampir = rooms.public("werwolf"), rooms.public("vampir")
    caller = werwolf.enter("Anrufer", Person(), "phone")
    other = vampir.enter("Anderer", Person(), "phone")
    sources: dict[str, Int16Array | None] = {"caller": tone(700.0, 60), "other": tone(1300.0, 60)}
    async with phones(rig.root / "phones", sources) as lines:
        await dial_all(rig, lines)
        # The switchboard's sessions sit in the menu; seat them in their rooms' voices.
        seat = rig.board.session("caller")
        seat.conference_seat = ConferenceSeat(werwolf.voice, caller.slot)  # type: ignore[attr-defined]
        apart = rig.board.session("other")
        apart.conference_seat = ConferenceSeat(vampir.voice, other.slot)  # type: ignore[attr-defined]
        before = await received_energy(page)
        await asyncio.sleep(4.0)
        after = await received_energy(page)
        heard = await hang_up_all(rig, lines)
    await page.click("#room-voice")  # voice off
    await expect(page.locator("#room-voice")).to_have_attribute("data-state", "off")
    await context.close()

    # The caller in the room hears the browser's microphone (damped by Chromium's processing,
    # as in the games' voice test) and not the other room.
    assert level_at(heard["caller"], 1000.0) > BROWSER_HEARD
    assert level_at(heard["caller"], 1300.0) < SILENT
    # The other room hears neither the browser nor the caller.
    assert level_at(heard["other"], 1000.0) < SILENT
    assert level_at(heard["other"], 700.0) < SILENT
    assert after - before > 0.01  # the page received the caller's voice
    assert not errors, errors
