"""The mailbox (X3) and friends (X4) in Debian's Chromium: two players ask, accept, write,
read, reply and delete through the page alone, see the header's counts, get clear errors in
their language, and the open panels pass axe in German and English."""

from __future__ import annotations

import secrets

import pytest
from playwright.sync_api import Browser, expect

from .axe import describe, serious_violations
from .players import Player
from .untranslated import untranslated

pytestmark = pytest.mark.slow


def unique(name: str) -> str:
    return f"{name}{secrets.randbelow(10**6)}"


@pytest.mark.rule("X3", "X4", "X5")
def test_two_players_become_friends_and_write_through_the_page(
    browser: Browser, server: str
) -> None:
    anna = Player.open(browser, server, unique("Anna"))
    bert = Player.open(browser, server, unique("Bert"))
    try:
        anna.signup()
        bert.signup()
        a, b = anna.page, bert.page
        # Anna asks Bert by name; an unknown name is refused in words.
        a.click("#friends-button")
        a.fill("#friend-form input[name=who]", "Niemand-hier-" + bert.name)
        a.click("#friend-form button[type=submit]")
        expect(a.locator("#friends-error")).to_contain_text("Niemanden")
        a.fill("#friend-form input[name=who]", bert.name)
        a.click("#friend-form button[type=submit]")
        expect(a.locator("#friends-note")).to_have_text("Anfrage gesendet.")
        # Bert's header counts the request; he accepts in the panel.
        expect(b.locator("#friends-button")).to_have_text("Freunde (1 Anfragen)", timeout=15_000)
        b.click("#friends-button")
        b.click("#friend-list .accept-friend")
        expect(b.locator("#friend-list li[data-state=friend]")).to_contain_text(anna.name)
        # Anna writes; a too long text is refused before anything is stored.
        a.click("#mail-button")
        a.fill("#mail-form input[name=to]", bert.name)
        a.fill("#mail-form textarea[name=text]", "x" * 1001)
        a.click("#mail-form button[type=submit]")
        expect(a.locator("#mail-error")).to_contain_text("zu lang")
        assert untranslated(a) == []
        a.fill("#mail-form textarea[name=text]", "Heute Abend Werwolf?")
        a.click("#mail-form button[type=submit]")
        expect(a.locator("#mail-note")).to_have_text("Gesendet.")
        # Bert's header shows the new message; he reads and replies.
        expect(b.locator("#mail-button")).to_have_text("Postfach (1 neu)", timeout=15_000)
        b.click("#mail-button")
        message = b.locator("#mail-list li[data-kind=text]")
        expect(message).to_contain_text("Heute Abend Werwolf?")
        expect(message).to_contain_text(anna.name)
        assert serious_violations(b) == [], describe(serious_violations(b))
        message.get_by_role("button", name="Antworten").click()
        message.locator("textarea[name=text]").fill("Gern, um acht!")
        message.locator("button[type=submit]").click()
        expect(a.locator("#mail-button")).to_have_text("Postfach (1 neu)", timeout=15_000)
        # Deleted, it is gone.
        b.locator("#mail-list li").first.get_by_role("button", name="Löschen").click()
        expect(b.locator("#mail-list")).to_have_count(0)
        # In English.
        a.click("#lang-button")
        expect(a.locator("#mail-button")).to_have_text("Mailbox (1 new)")
        expect(a.locator("#community-panel h2")).to_have_text("Mailbox")
        expect(a.locator("#mail-list li")).to_contain_text("Gern, um acht!")
        assert serious_violations(a) == [], describe(serious_violations(a))
        assert anna.errors == [] and bert.errors == []
    finally:
        anna.context.close()
        bert.context.close()
