"""The lobby in Chromium: a private round joined by its invitation code, linking a phone
(the page shows the one-time code to type when calling from the number)."""

from __future__ import annotations

import re
import secrets

import pytest
from playwright.sync_api import Browser, expect

from .players import Player

pytestmark = pytest.mark.slow


@pytest.mark.rule("P1")
def test_private_round_by_code_and_phone_link(browser: Browser, server: str) -> None:
    tag = secrets.token_hex(3)
    host = Player.open(browser, server, f"Gastgeberin{tag}")
    guest = Player.open(browser, server, f"Freund{tag}")
    try:
        host.signup()
        host.page.check("#found-private")
        game_id = host.found(5, {})
        code_text = host.page.locator("#invitation-code").inner_text()
        code = code_text.rsplit(" ", 1)[1]
        assert re.fullmatch(r"[A-Z2-9]{10}", code), code_text

        guest.signup()
        # A private round is not listed publicly.
        expect(guest.page.locator("#public-games")).not_to_contain_text(game_id)
        expect(guest.page.locator(f'li[data-game="{game_id}"]')).to_have_count(0)
        guest.page.fill("#join-code", code.lower())
        guest.page.click("#join-code-submit")
        expect(guest.page).to_have_url(re.compile(f"#/game/{game_id}$"))
        expect(guest.page.locator("#waiting-count")).to_contain_text("2")
        expect(host.page.locator("#waiting-count")).to_contain_text("2")
        expect(host.page.locator("#start-button")).to_be_visible()

        # Set a PIN and ask to link a number: the page shows the code to type from it.
        guest.page.goto("/#/")
        guest.page.locator("#phone-link > summary").click()
        guest.page.fill('input[name="number"]', "+49 30 1234567")
        guest.page.fill('input[name="pin"]', "4711")
        guest.page.click('form:has(input[name="pin"]) button[type="submit"]')
        expect(guest.page.locator("#phone-code")).to_contain_text("+49301234567")
        expect(guest.page.locator("#phone-code")).to_have_text(re.compile(r"\b\d{6}\b"))
        expect(guest.page.locator("#phone-status")).to_contain_text("PIN gesetzt")
        for player in (host, guest):
            player.assert_no_script_errors()
    finally:
        host.close()
        guest.close()
