"""Issue 12, point 8: the spectators' room (a signed-in spectator writes, the dead read it, the
living never), every room's chat shown to everyone after the end ("Alle Gespräche"), and a
rematch: one player founds the same setup with one click, another sees the offer and joins.
"""

from __future__ import annotations

import re
import secrets
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from .players import Player

pytestmark = pytest.mark.slow

# Long enough for the wolf to write and vote on a loaded machine.
DURATIONS = {"night_s": 18, "morning_s": 3, "day_s": 5, "vote_s": 30}


def seat_four(browser: Browser, server: str, players: list[Player]) -> tuple[str, Player]:
    """Four players at a new table (the host first) and a signed-in spectator watching it."""
    tag = secrets.token_hex(3)
    host = Player.open(browser, server, f"Rev{tag}")
    players.append(host)
    host.signup()
    watcher = Player.open(browser, server, f"Zaun{tag}")
    players.append(watcher)
    watcher.signup()
    game_id = host.found(4, DURATIONS)
    for index in range(1, 4):
        player = Player.open(browser, server, f"Mit{index}{tag}")
        players.append(player)
        player.signup()
        player.join(game_id)
    watcher.page.goto(f"/#/game/{game_id}/spectate")
    players.remove(watcher)
    players.append(watcher)  # the spectator last: players[:4] are seated
    return game_id, watcher


def rematch(founder: Player, joiner: Player, game_id: str) -> None:
    """The founder clicks "Revanche"; the joiner sees the offer and joins the new round."""
    founder.page.click("#rematch-button")
    expect(founder.page).not_to_have_url(re.compile(game_id))
    new_game = founder.page.url.rsplit("/", 1)[1]
    expect(joiner.page.locator("#rematch-offer")).not_to_be_empty(timeout=15_000)
    joiner.page.click("#rematch-button")
    expect(joiner.page).to_have_url(re.compile(f"#/game/{new_game}$"))
    expect(founder.page.locator("main")).to_contain_text(joiner.name, timeout=15_000)


def test_spectators_room_reveal_and_rematch(browser: Browser, server: str, artifacts: Path) -> None:
    everyone: list[Player] = []
    try:
        game_id, watcher = seat_four(browser, server, everyone)
        players = everyone[:4]
        for player in players:
            player.wait_for_role()
        role: dict[str, list[Player]] = {}
        for player in players:
            role.setdefault(player.role, []).append(player)
        wolf, seer = role["evil"][0], role["seer"][0]
        victim, last = role["filler"]

        wolf.wait_phase("night")
        wolf.say("Nachtgeflüster")
        wolf.act("ability:evil_vote", victim.seat)
        victim.wait_phase("morning", timeout_ms=40_000)
        expect(watcher.page.locator("#chat-room")).to_have_attribute("data-room", "spectators")
        watcher.say("Hallo aus dem Zuschauerraum")
        dead_line = victim.page.locator('#chat-list .chat-line[data-room="spectators"]')
        expect(dead_line).to_contain_text("Hallo aus dem Zuschauerraum")
        expect(dead_line).to_contain_text(watcher.name)

        for player in (wolf, seer, last):
            player.wait_phase("day", timeout_ms=30_000)
        seer.act("Nominate", wolf.seat)
        for player in (wolf, seer, last):
            player.wait_phase("vote", timeout_ms=30_000)
        # Before the end nobody outside a room got its words (events, views, side chat).
        for player in (seer, last):
            assert "Nachtgeflüster" not in "".join(player.frames), player.name
        for player in (wolf, seer, last):
            assert "Zuschauerraum" not in "".join(player.frames), player.name
        assert "Nachtgeflüster" not in "".join(watcher.frames + victim.frames)
        for player in (seer, last):
            player.act("Vote", wolf.seat)
        wolf.act("Vote", None)
        seer.wait_phase("over", timeout_ms=30_000)

        # After the end: all conversations, the night room's too, for a villager.
        last.wait_phase("over")
        last.page.click("#all-chats-load")
        night = last.page.locator('#all-chats .chat-line[data-room="night_room"]')
        expect(night).to_contain_text("Nachtgeflüster")
        last.page.screenshot(path=str(artifacts / "after-game-chats.png"))

        # Rematch: the seer founds it; the wolf is offered it and joins.
        rematch(seer, wolf, game_id)
        for player in everyone:
            player.assert_no_script_errors()
    finally:
        for player in everyone:
            player.close()
