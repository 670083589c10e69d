"""Issue 12, dependable moves: a player whose connection drops for seven seconds mid-day keeps
playing. Its chat message and its nomination are queued with a visible state ("wartet auf
Verbindung"), sent after the reconnect and confirmed; the others see both arrive; the chosen
target stays highlighted. Seven players, as the issue asks.
"""

from __future__ import annotations

import re
import secrets

import pytest
from playwright.sync_api import Browser, expect

from .players import Player

pytestmark = pytest.mark.slow

DURATIONS = {"night_s": 3, "morning_s": 2, "day_s": 90, "vote_s": 30}
DROP_MS = 7000


def test_moves_made_while_offline_arrive_after_the_reconnect(
    browser: Browser, server: str, artifacts: object
) -> None:
    tag = secrets.token_hex(3)
    players: list[Player] = []
    try:
        host = Player.open(browser, server, f"Wirtin{tag}")
        players.append(host)
        host.signup()
        game_id = host.found(7, DURATIONS)
        for index in range(1, 7):
            player = Player.open(browser, server, f"Gast{index}{tag}")
            players.append(player)
            player.signup()
            player.join(game_id)
        for player in players:
            player.wait_for_role()
        for player in players:
            player.wait_phase("day", timeout_ms=30_000)
        alive = [
            p for p in players if p.page.locator(".seat.me").get_attribute("data-alive") == "true"
        ]
        dropper, watcher = alive[0], alive[1]
        target = alive[2]
        page = dropper.page

        page.evaluate("ms => window.vollmondDebug.drop(ms)", DROP_MS)
        expect(page.locator("#conn")).to_have_attribute("data-state", "down")
        text = f"Bin gleich wieder da {tag}"
        page.fill("#chat-input", text)
        page.click("#chat-send")
        dropper.act("Nominate", target.seat)
        queued = page.locator('#outbox .move[data-state="queued"]')
        expect(queued).to_have_count(2)
        expect(page.locator('#outbox .move[data-type="Say"]')).to_contain_text(text)
        chosen = page.locator(f'[data-group="Nominate"] button[data-target="{target.seat}"]')
        expect(chosen).to_have_attribute("aria-pressed", "true")
        # Nothing reached the others while the socket was down.
        expect(watcher.page.locator("#chat-list")).not_to_contain_text(text)
        page.screenshot(path=str(artifacts) + "/moves-queued.png")

        expect(page.locator("#conn")).to_have_attribute("data-state", "up", timeout=15_000)
        expect(page.locator('#outbox .move[data-state="confirmed"]')).to_have_count(2)
        expect(watcher.page.locator("#chat-list")).to_contain_text(text)
        nominee = watcher.page.locator(f'.seat[data-seat="{target.seat}"]')
        expect(nominee).to_have_class(re.compile(r"\bnominee\b"))
        # One nomination per day: the group is gone, the nomination is listed.
        expect(page.locator("#nominations")).to_contain_text(f"{dropper.seat} ")
        chats = [
            m
            for m in watcher.messages()
            if m["type"] == "event" and m["code"] == "chat" and m["params"]["text"] == text
        ]
        assert len(chats) == 1, chats  # arrived once
        for player in players:
            player.assert_no_script_errors()
    finally:
        for player in players:
            player.close()
