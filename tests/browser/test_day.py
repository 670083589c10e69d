"""The day in Chromium: a day call (ringing, busy, stumm/Halbmodus switch, its chat, hang up),
the vote-giver's transfer, the evil team's instant kill and the hunter's shot — all by clicks."""

from __future__ import annotations

import re
import secrets

import pytest
from playwright.sync_api import Browser, expect

from .players import Player

pytestmark = pytest.mark.slow


def found_day_game(host: Player) -> str:
    page = host.page
    page.select_option("#found-world", "werwolf")
    page.fill('#found-form input[name="size"]', "4")
    page.select_option("#found-deck", "custom")
    # evil 1, seer -> hunter, filler 2 -> vote-giver 1 + filler 1
    page.select_option("#custom-role-1", "hunter")
    page.select_option("#custom-role-2", "vote_giver")
    page.fill("#custom-count-2", "1")
    page.click("#custom-add")
    page.check("#cb-instant_kill")
    page.locator("details:has(#cb-calls_enabled) summary").click()
    page.check("#cb-by_day")
    return host.found(4, {"night_s": 3, "morning_s": 2, "day_s": 90, "vote_s": 30}, "custom")


@pytest.mark.rule("X5", "C3", "C9", "S5", "S15", "S18")
def test_day_calls_and_day_abilities(browser: Browser, server: str) -> None:
    tag = secrets.token_hex(3)
    players: list[Player] = []
    try:
        host = Player.open(browser, server, f"Marktfrau{tag}")
        players.append(host)
        host.signup()
        # found() selects the deck again; custom rows are set first.
        game_id = found_day_game(host)
        for index in range(1, 4):
            player = Player.open(browser, server, f"Hirte{index}{tag}")
            players.append(player)
            player.signup()
            player.join(game_id)
        for player in players:
            player.wait_for_role()
        role = {p.role: p for p in players}
        assert sorted(role) == ["evil", "filler", "hunter", "vote_giver"]
        wolf, hunter, giver, villager = (
            role[r] for r in ("evil", "hunter", "vote_giver", "filler")
        )
        for player in players:
            player.wait_phase("day", timeout_ms=30_000)

        # The hunter's buttons stay in place while what they offer stays the same, however many
        # views arrive (the call below changes the table, not what the hunter can do): a button
        # replaced between a press and its release loses the click.
        nominate = hunter.page.locator(f'[data-group="Nominate"] button[data-target="{wolf.seat}"]')
        nominate.evaluate("button => { button.dataset.probe = 'kept'; }")

        # A day call: ringing, accept; a third caller hears "busy".
        villager.act("PlaceCall", giver.seat)
        expect(giver.page.locator("#call-status")).to_have_attribute("data-status", "ringing")
        giver.page.click("#call-accept")
        expect(villager.page.locator("#call-status")).to_have_attribute("data-status", "active")
        # In a call, the two are not shown present on the market place (C9).
        away = hunter.page.locator(f'.seat[data-seat="{villager.seat}"]')
        expect(away).to_have_class(re.compile(r"\baway\b"))
        expect(nominate).to_have_attribute("data-probe", "kept")
        hunter.act("PlaceCall", villager.seat)
        expect(hunter.page.locator("#log")).to_contain_text("besetzt")
        # Every call starts stumm; the switch to Halbmodus and back (C9).
        expect(villager.page.locator("#call-mode")).to_contain_text("stumm")
        villager.page.click("#call-toggle")
        expect(villager.page.locator("#call-mode")).to_contain_text("Halbmodus")
        villager.say(f"Unter uns-{tag}")
        expect(giver.page.locator("#chat-list")).to_contain_text(f"Unter uns-{tag}")
        villager.page.click("#call-hangup")
        expect(giver.page.locator("#call-status")).to_have_count(0)
        assert not any(f"Unter uns-{tag}" in f for f in hunter.frames)

        # The vote-giver hands his vote on; only the two learn of it.
        giver.act("ability:transfer_vote", villager.seat)
        expect(villager.page.locator("#log")).to_contain_text("doppelt")
        # The evil team's instant kill, then the hunter's shot ends the game.
        wolf.act("ability:instant_kill", giver.seat)
        giver_seat = hunter.page.locator(f'.seat[data-seat="{giver.seat}"]')
        expect(giver_seat).to_have_attribute("data-alive", "false")
        expect(giver_seat).to_have_attribute("data-role", "vote_giver")
        hunter.act("ability:shoot", wolf.seat)
        for player in players:
            player.wait_phase("over")
        expect(villager.page.locator("#sides")).to_contain_text("Dorf")
        for player in players:
            player.assert_no_script_errors()
    finally:
        for player in players:
            player.close()
