"""Issue 12, the front page: one sentence of what this is, the rules in 30 seconds per world
(in that world's names), the number and SIP address to call in (operator settings), playing
as a guest (a name, no password) and "Nächster freier Tisch" (quick join)."""

from __future__ import annotations

import re
import secrets

import pytest
from playwright.sync_api import Browser, expect

from .players import Player
from .serve import PHONE_NUMBER, SIP_ADDRESS

pytestmark = pytest.mark.slow


def test_front_page_guest_play_and_quick_join(browser: Browser, server: str) -> None:
    tag = secrets.token_hex(3)
    host = Player.open(browser, server, f"Gruenderin{tag}")
    guest = Player.open(browser, server, f"Gast{tag}")
    try:
        page = guest.page
        expect(page.locator("#front-what")).to_contain_text("Werwolf-Spiel")
        expect(page.locator("#front-call")).to_contain_text(PHONE_NUMBER)
        expect(page.locator("#front-call")).to_contain_text(SIP_ADDRESS)
        rules = page.locator('#front-rules details[data-world="werwolf"]')
        expect(rules).to_contain_text("das Rudel")

        host.signup()
        host.found(5, {})  # at least one open table (others of this session may be older)

        page.fill("#guest-name", guest.name)
        page.click("#guest-submit")
        expect(page.locator("#account-label")).to_contain_text(guest.name)
        expect(page.locator("#auth-password")).to_have_count(0)
        page.click("#quick-join")
        expect(page).to_have_url(re.compile(r"#/game/[\w-]+$"))
        expect(page.locator(".waiting-list")).to_contain_text(guest.name)
        guest.assert_no_script_errors()
    finally:
        host.close()
        guest.close()
