"""Issue 12: the balance preview of a custom deck in the founding form — the win rates of a
few bot games played by the server, in the page's language; an unfair deck shows its reason."""

from __future__ import annotations

import re
import secrets

import pytest
from playwright.sync_api import Browser, expect

from .players import Player
from .untranslated import GERMAN, untranslated

pytestmark = pytest.mark.slow


def test_the_founding_form_shows_a_decks_simulated_win_rates(browser: Browser, server: str) -> None:
    host = Player.open(browser, server, f"Waage{secrets.token_hex(3)}")
    try:
        host.signup()
        page = host.page
        page.select_option("#found-world", "werwolf")
        page.fill('#found-form input[name="size"]', "7")
        page.select_option("#found-deck", "custom")
        page.fill("#custom-count-2", "5")  # evil 1, seer 1, filler 5
        page.click("#balance-check")
        result = page.locator("#balance-result")
        expect(result).to_have_text(
            re.compile(r"^In \d+ Probespielen mit Bots gewann: .+ \d+ %, .+ \d+ %\.$"),
            timeout=30_000,
        )
        assert not untranslated(page), untranslated(page)
        page.fill("#custom-count-0", "4")  # evil 4 of 7: refused, with the founding reason
        page.click("#balance-check")
        expect(result).to_have_text(GERMAN["deck_evil_majority"])
        host.assert_no_script_errors()
    finally:
        host.close()
