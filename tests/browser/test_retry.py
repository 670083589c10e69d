"""The browser client retries a command whose answer was lost (issue 8): after the reconnect it
sends the command again under the same client id, and the server answers it without applying
it twice."""

from __future__ import annotations

import json
import secrets
import time

import pytest
from playwright.sync_api import Browser, WebSocket, expect

from .players import Player

pytestmark = pytest.mark.slow

DURATIONS = {"night_s": 60, "morning_s": 3, "day_s": 30, "vote_s": 30}
VOTE_THEN_DROP = """([seat]) => {
  document.querySelector(`[data-group="ability:evil_vote"] button[data-target="${seat}"]`).click();
  window.vollmondDebug.drop(300);  // closed in the same tick: the answer never arrives
}"""


def test_a_vote_whose_answer_was_lost_is_resent_and_counted_once(
    browser: Browser, server: str
) -> None:
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
            player.wait_phase("night")
        wolf = next(p for p in players if p.role == "evil")
        victim = next(p for p in players if p.role != "evil")

        sent: list[dict[str, object]] = []

        def record(ws: WebSocket) -> None:
            ws.on("framesent", lambda payload: sent.append(json.loads(payload)))

        wolf.page.on("websocket", record)  # the socket of the reconnect
        wolf.page.evaluate(VOTE_THEN_DROP, [victim.seat])
        expect(wolf.page.locator("#conn")).to_have_attribute("data-state", "up")
        expect(wolf.page.locator("#night-victim")).to_contain_text(str(victim.seat))
        # The victim shows from the welcome view; the retry's answer may come a moment later.
        # Frames reach the test only while Playwright waits, so poll for it with a deadline.
        deadline = time.monotonic() + 10
        while not (
            acks := [m for m in wolf.messages() if m["type"] == "ack" and m.get("repeated")]
        ):
            assert time.monotonic() < deadline, "no repeated ack within 10 s"
            wolf.page.wait_for_timeout(50)
        retried = [m for m in sent if m["type"] == "command"]
        assert len(retried) == 1, sent
        assert acks and acks[-1]["cid"] == retried[0]["cid"]
        votes = [
            m for m in wolf.messages() if m["type"] == "event" and m["code"] == "evil_vote_cast"
        ]
        # The vote is in the log once. Playwright sees frames as they reach the browser, so a
        # frame that reached the dropped socket after the page closed it is seen again when the
        # reconnect replays it: the same seq twice is one event; a second vote would be a new seq.
        assert len({m["seq"] for m in votes}) == 1, votes
        assert votes[-1]["params"]["tally"] == {str(victim.seat): 1}, votes
        wolf.assert_no_script_errors()
    finally:
        for player in players:
            player.close()
