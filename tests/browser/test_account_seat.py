"""Issue 12: the seat belongs to the account. A player signs in on a second browser context
(another device: no seat token in its storage), finds the game under "Meine Spiele" from the
server, and is back at its own seat with its role; what it writes there reaches the table."""

from __future__ import annotations

import secrets

import pytest
from playwright.sync_api import Browser, expect

from .players import PASSWORD, Player

pytestmark = pytest.mark.slow

DURATIONS = {"night_s": 60, "morning_s": 3, "day_s": 30, "vote_s": 30}


def test_a_second_device_of_the_account_gets_its_seat(browser: Browser, server: str) -> None:
    tag = secrets.token_hex(3)
    players: list[Player] = []
    try:
        host = Player.open(browser, server, f"Wirt{tag}")
        players.append(host)
        host.signup()
        game_id = host.found(4, DURATIONS)
        for index in range(1, 4):
            player = Player.open(browser, server, f"Gast{index}{tag}")
            players.append(player)
            player.signup()
            player.join(game_id)
        for player in players:
            player.wait_for_role()
        first = players[2]

        second = Player.open(browser, server, first.name)
        players.append(second)
        page = second.page
        page.fill("#auth-name", first.name)
        page.fill("#auth-password", PASSWORD)
        page.click("#signin-button")
        mine = page.locator(f'#my-games li[data-game="{game_id}"] a')
        expect(mine).to_be_visible()
        mine.click()
        second.wait_for_role()
        assert (second.seat, second.role) == (first.seat, first.role)
        # A stranger without a seat who opens the table only watches.
        stranger = Player.open(browser, server, f"Fremd{tag}")
        players.append(stranger)
        stranger.signup()
        stranger.page.goto(f"/#/game/{game_id}")
        expect(stranger.page.locator("#no-actions")).to_be_visible()
        expect(stranger.page.locator("#my-role")).to_have_count(0)
        for player in players:
            player.assert_no_script_errors()
    finally:
        for player in players:
            player.close()
