"""The page's call-progress tones (tones.js) in Debian's Chromium: the ringing and busy
tones the telephone plays, on the same events (vollmond/phone/session/game.py)."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser, expect

from tests.phone.e2e.conftest import PhoneRig
from tests.voice.test_browser_voice import to_day
from tests.voice.test_chromium_voice import seated_page
from vollmond.engine.core import Rejection
from vollmond.engine.standard import CallSettings, GameOptions
from vollmond.engine.standard.commands import AnswerCall, PlaceCall

pytestmark = pytest.mark.slow


@pytest.mark.rule("X5", "C2", "C3")
async def test_the_page_plays_ringing_and_busy_tones_as_the_telephone(
    rig: PhoneRig, chromium: Browser
) -> None:
    """The caller's page plays the Freiton while the callee's page rings (the double ring);
    a refusal ends both; calling a busy house plays the Besetztton, which ends by itself."""
    hub = rig.hub
    options = GameOptions(players=6, calls=CallSettings(by_day=True))
    founded = await hub.found(options, private=False, host_account_id=None, host_name="p1")
    game = founded.game.id
    assert founded.token is not None
    tokens = [founded.token]
    for i in range(2, 7):
        tokens.append((await hub.join(game, account_id=None, name=f"p{i}")).token)
    await to_day(rig, game)
    caller = await seated_page(chromium, rig.service.base_url, game, tokens[0])
    callee = await seated_page(chromium, rig.service.base_url, game, tokens[1])
    try:
        for page in (caller, callee):  # caught up: a call placed before would be history
            live = page.locator("#game")
            await expect(live).to_have_attribute("data-live", "true", timeout=20_000)
            await expect(page.locator("#call-tone")).to_have_attribute("data-tone", "")

        async def submit(command: object) -> None:
            outcome = await hub.submit(game, command)
            assert not isinstance(outcome, Rejection), outcome

        for command in (PlaceCall(3, 4), AnswerCall(4, accept=True)):  # house 4 is busy
            await submit(command)
        await submit(PlaceCall(1, 2))
        await expect(caller.locator("#call-tone")).to_have_attribute("data-tone", "ringing")
        await expect(callee.locator("#call-tone")).to_have_attribute("data-tone", "incoming_ring")
        for page in (caller, callee):  # WebAudio is really playing
            await expect(page.locator("#call-tone")).to_have_attribute("data-audio", "running")
        await submit(AnswerCall(2, accept=False))
        for page in (caller, callee):  # the refusal ends both rings
            await expect(page.locator("#call-tone")).to_have_attribute("data-tone", "")
        await submit(PlaceCall(1, 4))
        await expect(caller.locator("#call-tone")).to_have_attribute("data-tone", "busy")
        await expect(callee.locator("#call-tone")).to_have_attribute("data-tone", "")
        # Four cadences (3.84 s), then silence, as on the telephone.
        await expect(caller.locator("#call-tone")).to_have_attribute(
            "data-tone", "", timeout=15_000
        )
    finally:
        await caller.context.close()
        await callee.context.close()
