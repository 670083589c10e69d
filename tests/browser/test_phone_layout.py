"""Issue 12, the phone layout (390×844): three tabs (Tisch / Handeln / Gespräch) instead of one
long page, and a click on a house of the circle targets it (here: the evil team's night
vote). Screenshots: phone-table.png, phone-act.png, phone-talk.png."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from .players import Player

pytestmark = pytest.mark.slow

DURATIONS = {"night_s": 60, "morning_s": 3, "day_s": 30, "vote_s": 30}


def test_phone_tabs_and_click_a_house(browser: Browser, server: str, artifacts: Path) -> None:
    tag = secrets.token_hex(3)
    players: list[Player] = []
    try:
        host = Player.open(browser, server, f"Wirt{tag}", phone=True)
        players.append(host)
        host.signup()
        game_id = host.found(4, DURATIONS)
        for index in range(1, 4):
            player = Player.open(browser, server, f"Gast{index}{tag}", phone=True)
            players.append(player)
            player.signup()
            player.join(game_id)
        for player in players:
            player.wait_phase("night")
        wolf = None
        for player in players:
            page = player.page
            expect(page.locator("#phone-tabs")).to_be_visible()
            expect(page.locator("#seats")).to_be_visible()
            expect(page.locator("#actions")).to_be_hidden()
            page.click("#tab-button-act")
            expect(page.locator("#actions")).to_be_visible()
            expect(page.locator("#seats")).to_be_hidden()
            player.wait_for_role()
            if player.role == "evil":
                wolf = player
        assert wolf is not None
        page = wolf.page
        page.screenshot(path=str(artifacts / "phone-act.png"))
        page.click("#tab-button-talk")
        expect(page.locator("#chat-list")).to_be_visible()
        page.screenshot(path=str(artifacts / "phone-talk.png"))
        page.click("#tab-button-table")
        # One screen: the tab's content is no longer a page and a half below the fold.
        height = page.evaluate("document.documentElement.scrollHeight")
        assert height < 844 * 1.5, height
        victim = next(p for p in players if p is not wolf)
        page.locator(f'.seat[data-seat="{victim.seat}"]').click()
        expect(page.locator("#outbox")).to_contain_text(str(victim.seat))
        page.screenshot(path=str(artifacts / "phone-table.png"))
        page.click("#tab-button-act")
        expect(page.locator("#night-victim")).to_contain_text(str(victim.seat))
        for player in players:
            player.assert_no_script_errors()
    finally:
        for player in players:
            player.close()
