"""A standard 7-seat game of three people and four bots played to the end in Chromium (issue 11).

The host founds the standard rules with the auto deck, two more people join from the lobby,
the host fills the other four seats with bots, and everyone plays whatever the page offers
(the same random legal clicks as tests/browser/test_rulesets.py) until the end screen. Before
the end no page and no frame showed a living stranger's card: only one's own, the out
players' and one's partners' (the evil team).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from .players import Player
from .test_rulesets import check_end_screen, check_frames, play_to_end

pytestmark = pytest.mark.slow

DURATIONS = {
    "steal_s": 3,
    "night_s": 4,
    "morning_s": 1,
    "day_s": 5,
    "vote_s": 4,
    "floor_s": 3,
}


def test_three_people_and_four_bots_play_a_standard_game_to_the_end(
    browser: Browser, server: str, artifacts: Path
) -> None:
    tag = random.randrange(10**6)
    people = [Player.open(browser, server, f"{name}{tag}") for name in ("Ilse", "Jonas", "Kai")]
    host, *guests = people
    try:
        host.signup()
        game_id = host.found(7, DURATIONS)
        for guest in guests:
            guest.signup()
            guest.join(game_id)
        expect(host.page.locator("#waiting-count")).to_contain_text("3")
        host.fill_with_bots()
        for player in people:
            player.wait_for_role()
        seats = host.page.locator(".seat")
        expect(seats).to_have_count(7)
        (artifacts / "standard-bots-act.png").unlink(missing_ok=True)
        play_to_end(people, random.Random(11), artifacts / "standard-bots-act.png")
        for player in people:
            check_end_screen(player, 7, "Das Spiel ist aus", "The game is over")
            check_frames(player, night_codes=set())
        host.page.screenshot(path=artifacts / "standard-bots-over.png", full_page=True)
    finally:
        for player in people:
            player.close()
