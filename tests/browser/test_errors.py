"""Issue 12: every error has a code and is shown from the catalogues in the page's language.

On a German page: the password rule at sign-up, starting a round with too few players (the
error stays until dismissed) and an unknown game each show the German sentence of
``web.errors`` and nothing English or raw. (That every code the server sends has a sentence
is tests/service/test_error_catalogue.py.)
"""

from __future__ import annotations

import re
import secrets

import pytest
from playwright.sync_api import Browser, expect

from .players import Player
from .untranslated import GERMAN, untranslated

pytestmark = pytest.mark.slow


def test_errors_are_german_on_the_german_page(browser: Browser, server: str) -> None:
    tag = secrets.token_hex(3)
    player = Player.open(browser, server, f"Fehlerfee{tag}")
    try:
        page = player.page
        page.fill("#auth-name", player.name)
        page.fill("#auth-password", "kurz")
        page.click("#signup-button")
        expect(page.locator(".error:not(:empty)").first).to_contain_text(GERMAN["password_rule"])
        assert not untranslated(page), untranslated(page)

        player.signup()
        game_id = player.found(4, {})
        page.click("#start-button")
        error = page.locator("#waiting-error-text")
        expect(error).to_contain_text(GERMAN["too_few_players"])
        assert not untranslated(page), untranslated(page)
        # The waiting room polls every 1.2 s; the error outlives several redraws.
        page.wait_for_timeout(3000)
        expect(error).to_contain_text(GERMAN["too_few_players"])
        page.click("#waiting-error-dismiss")
        expect(page.locator("#waiting-error-text")).to_have_count(0)

        page.goto(f"/#/game/{game_id}x")
        expect(page.locator(".error:not(:empty)").first).to_contain_text(GERMAN["no_such_game"])
        assert not untranslated(page), untranslated(page)
        player.assert_no_script_errors()
    finally:
        player.close()


def test_an_unfair_deck_is_refused_with_its_reason_and_the_host_cancels(
    browser: Browser, server: str
) -> None:
    tag = secrets.token_hex(3)
    host = Player.open(browser, server, f"Mischerin{tag}")
    try:
        host.signup()
        page = host.page
        page.select_option("#found-world", "werwolf")
        page.fill('#found-form input[name="size"]', "7")
        page.select_option("#found-deck", "custom")
        page.fill("#custom-count-0", "4")  # evil 4 of 7: decided at the start
        page.click("#found-submit")
        expect(page.locator(".error").filter(has_text=GERMAN["deck_evil_majority"])).to_be_visible()
        assert not untranslated(page), untranslated(page)
        page.select_option("#custom-role-0", "doctor")  # no evil card at all
        page.click("#found-submit")
        expect(page.locator(".error").filter(has_text=GERMAN["deck_no_evil"])).to_be_visible()
        page.select_option("#custom-role-0", "evil")
        page.fill("#custom-count-0", "2")
        page.click("#found-submit")
        expect(page).to_have_url(re.compile(r"#/game/[\w-]+$"))
        game_id = page.url.rsplit("/", 1)[1]
        page.click("#cancel-game")
        expect(page).to_have_url(re.compile(r"#/$"))
        expect(page.locator(f'[data-game="{game_id}"]')).to_have_count(0)
        host.assert_no_script_errors()
    finally:
        host.close()
