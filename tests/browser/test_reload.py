"""Reloading the page mid-game brings everything back: role, night room, chat, facts, log,
the countdown; so does a lost connection. Also: keyboard-only sign-up, switching the language
mid-game, the operator button."""

from __future__ import annotations

import re
import secrets

import pytest
from playwright.sync_api import Browser, expect

from .players import Player

pytestmark = pytest.mark.slow

DURATIONS = {"night_s": 60, "morning_s": 3, "day_s": 30, "vote_s": 30}


@pytest.mark.rule("X5", "O1")
def test_reload_mid_game_restores_everything(browser: Browser, server: str) -> None:
    tag = secrets.token_hex(3)
    players: list[Player] = []
    try:
        host = Player.open(browser, server, f"Wirtin{tag}")
        players.append(host)
        host.signup_by_keyboard()
        game_id = host.found(4, DURATIONS)
        for index in range(1, 4):
            player = Player.open(browser, server, f"Gast{index}{tag}")
            players.append(player)
            player.signup()
            player.join(game_id)
        for player in players:
            player.wait_for_role()
            player.wait_phase("night")
        # Each page names its game in the socket's URL, so that a server of several workers
        # hands the socket to the game's owner (docs/scaling.md).
        for player in players:
            assert any(url.endswith(f"/ws?game={game_id}") for url in player.socket_urls)
        wolf = next(p for p in players if p.role == "evil")
        seer = next(p for p in players if p.role == "seer")
        villager = next(p for p in players if p.role == "filler")

        secret = f"Plan-{tag}"
        wolf.say(secret)
        wolf.act("ability:evil_vote", villager.seat)
        expect(wolf.page.locator("#night-victim")).to_contain_text(str(villager.seat))
        seer.act("ability:check", wolf.seat)
        expect(seer.page.locator("#facts")).to_contain_text(str(wolf.seat))
        log_before = wolf.page.locator("#log li").count()

        for player in (wolf, seer):
            player.page.reload()
            player.wait_phase("night")
        # Everything is back after the reload, from the server (seat token in localStorage).
        expect(wolf.page.locator("#my-role")).to_have_attribute("data-role", "evil")
        expect(wolf.page.locator(".seat.me")).to_have_attribute("data-seat", str(wolf.seat))
        expect(wolf.page.locator("#night-votes")).to_contain_text(str(villager.seat))
        expect(wolf.page.locator("#night-victim")).to_contain_text(str(villager.seat))
        expect(wolf.page.locator("#chat-list")).to_contain_text(secret)
        expect(wolf.page.locator("#log li")).to_have_count(log_before)
        expect(seer.page.locator("#facts")).to_contain_text(str(wolf.seat))
        expect(seer.page.locator("#my-role")).to_have_attribute("data-role", "seer")
        timer = wolf.page.locator("#timer")
        expect(timer).to_have_text(re.compile(r"0:[0-5]\d"))
        left = int(timer.get_attribute("data-seconds") or "0")
        assert 0 < left < DURATIONS["night_s"]
        # The seer's action is spent: no check is offered again this night.
        expect(seer.page.locator('[data-group="ability:check"]')).to_have_count(0)
        # Nothing of the night room reached the seer, before or after the reload.
        assert not any(secret in f for f in seer.frames)
        assert secret not in seer.page.content()

        lost_connection(wolf, villager)
        language_and_operator(villager, wolf)
        for player in players:
            player.assert_no_script_errors()
    finally:
        for player in players:
            player.close()


def language_and_operator(villager: Player, wolf: Player) -> None:
    """Switch the language mid-game, then call the operator (O1) from the keyboard."""
    # Switching the language mid-game: the client's words and the server's texts follow.
    villager.page.click("#lang-button")
    expect(villager.page.locator("#role-card")).to_contain_text("Your role")
    expect(villager.page.locator("#log")).to_contain_text("Night 1")
    expect(villager.page.locator("#my-role")).to_have_text("Villager")

    # The operator button (O1) with a reason and a player, from the keyboard.
    villager.page.focus("#operator-button")
    villager.page.keyboard.press("Enter")
    expect(villager.page.locator("#operator-dialog")).to_be_visible()
    villager.page.select_option("#operator-reason", "3")
    villager.page.select_option("#operator-player", str(wolf.seat))
    villager.page.click("#operator-send")
    expect(villager.page.locator("#alert")).to_contain_text("Moderation has been notified")


def lost_connection(wolf: Player, villager: Player) -> None:
    """What happened while the socket was down arrives after the reconnect (after=seq),
    nothing twice: here, a call that rang meanwhile."""
    log_before = wolf.page.locator("#log li").count()
    wolf.page.evaluate("window.vollmondDebug.drop(2500)")
    expect(wolf.page.locator("#conn")).to_have_attribute("data-state", "down")
    villager.act("PlaceCall", wolf.seat)
    expect(wolf.page.locator("#conn")).to_have_attribute("data-state", "up")
    expect(wolf.page.locator("#call-status")).to_have_attribute("data-status", "ringing")
    expect(wolf.page.locator("#log li")).to_have_count(log_before + 1)
    wolf.page.click("#call-decline")
