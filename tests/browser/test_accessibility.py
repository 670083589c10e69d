"""Issue 12, accessibility: axe-core (vendored, tests/browser/axe.py) finds no serious or
critical violation over the page states — front page signed out and in, waiting room, the
table by night, by day, at the vote and at the end, the phone layout's tabs — in German and
in English, and the lobby in every world's colours."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from .axe import describe, serious_violations
from .players import Player

pytestmark = pytest.mark.slow

DURATIONS = {"night_s": 12, "morning_s": 2, "day_s": 5, "vote_s": 20}


class Audit:
    def __init__(self) -> None:
        self.found: dict[str, list[dict[str, Any]]] = {}

    def check(self, page: Page, state: str) -> None:
        violations = serious_violations(page)
        if violations:
            self.found[state] = violations

    def check_both_languages(self, page: Page, state: str) -> None:
        self.check(page, state + " de")
        page.click("#lang-button")
        expect(page.locator("html")).to_have_attribute("lang", "en")
        page.wait_for_timeout(300)  # the view re-renders in English
        self.check(page, state + " en")
        page.click("#lang-button")
        expect(page.locator("html")).to_have_attribute("lang", "de")

    def check_every_world(self, page: Page) -> None:
        """The lobby takes the picked world's colours: each world once."""
        chips = page.locator(".world-chip:not(.all)")
        for index in range(chips.count()):
            chip = chips.nth(index)
            chip.click()
            expect(chip).to_have_attribute("aria-pressed", "true")
            self.check(page, f"lobby world {index + 1}")
        page.locator(".world-chip.all").click()

    def check_phone_tabs(self, page: Page) -> None:
        for tab in ("table", "act", "talk"):
            page.click(f"#tab-button-{tab}")
            self.check(page, f"phone {tab}")
        page.click("#tab-button-act")  # the phone player acts from "Handeln"

    def report(self) -> str:
        return "\n".join(f"== {state}\n{describe(v)}" for state, v in self.found.items())


def test_no_serious_axe_violation_over_the_page_states(browser: Browser, server: str) -> None:
    tag = secrets.token_hex(3)
    audit = Audit()
    players: list[Player] = []
    try:
        host = Player.open(browser, server, f"Wirt{tag}")
        players.append(host)
        expect(host.page.locator("#front-what")).not_to_be_empty()
        audit.check_both_languages(host.page, "front")
        host.signup()
        audit.check_both_languages(host.page, "lobby")
        audit.check_every_world(host.page)
        game_id = host.found(4, DURATIONS)
        audit.check_both_languages(host.page, "waiting room")
        phone = Player.open(browser, server, f"Handy{tag}", phone=True)
        players.append(phone)
        phone.signup()
        for index in range(1, 3):
            player = Player.open(browser, server, f"Gast{index}{tag}")
            players.append(player)
            player.signup()
            player.join(game_id)
        phone.join(game_id)
        for player in players:
            player.wait_for_role()
        host.wait_phase("night")
        # The wolf acts first: five axe audits on a loaded machine can outlast a short night.
        wolf = next(p for p in players if p.role == "evil")
        victim = next(p for p in players if p.role != "evil" and p is not host)
        phone.page.click("#tab-button-act")  # the phone layout acts from "Handeln"
        wolf.act("ability:evil_vote", victim.seat)
        audit.check_both_languages(host.page, "night")
        audit.check_phone_tabs(phone.page)
        host.wait_phase("day", timeout_ms=30_000)
        # The nomination first, as the wolf's vote at night: two audits can outlast a 5-s day.
        living = [p for p in players if p is not victim]
        accuser = next(p for p in living if p is not wolf)
        accuser.act("Nominate", wolf.seat)
        audit.check_both_languages(host.page, "day")
        host.wait_phase("vote", timeout_ms=30_000)
        audit.check(host.page, "vote de")
        for player in living:
            player.act("Vote", wolf.seat if player is not wolf else None)
        host.wait_phase("over", timeout_ms=30_000)
        expect(host.page.locator("#over")).to_be_visible()
        host.page.click("#replay-load")
        expect(host.page.locator("#replay-list")).not_to_be_empty()
        audit.check_both_languages(host.page, "over")
        assert not audit.found, "serious axe violations:\n" + audit.report()
        for player in players:
            player.assert_no_script_errors()
    finally:
        for player in players:
            player.close()
