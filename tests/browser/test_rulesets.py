"""The classic (seed 003) and the mayor rule set (seed 000) played to the end in Chromium.

One person founds a game of the rule set through the founding form (its own worlds, decks and
options, from `GET /api/rulesets`), fills the free seats with the rule set's bots and plays
whatever the page offers: every button it clicks comes from the view's legal commands, so the
test knows nothing of either rule set's moves. At the end the page shows the end screen with
every card; the log is German, and after switching the language English. Before the end the
player's page and every frame it received showed no role but its own, the out players' and
(in the mayor rules) its own team's.
"""

from __future__ import annotations

import contextlib
import random
import time
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from .players import Player

pytestmark = pytest.mark.slow

GAME_BUDGET_S = 150  # a guard against a game that never ends, not a speed target
"""A guard, not a speed figure: a whole game at these stage lengths takes 15–40 s on a busy
machine (a mayor game may see a few rounds); past this the test fails rather than hang."""

CLASSIC_DURATIONS = {
    "setup_s": 2,
    "election_s": 3,
    "night_step_s": 2,
    "morning_s": 1,
    "day_s": 6,
    "decision_s": 2,
}
# The stages the one person acts in are long enough for a page on a loaded machine (with
# two-second stages the bots had finished a whole game before the page was asked once).
MAYOR_DURATIONS = {
    "candidacy_s": 5,
    "introduction_s": 1,
    "ballot_s": 5,
    "night_s": 2,
    "morning_s": 1,
    "accusations_s": 5,
    "defence_s": 1,
    "vote_s": 5,
}

# The predicate the page is awaited with: the end screen, or a group of buttons this player
# has not answered in this phase yet (`done` holds "phase line|group" keys).
_SOMETHING_TO_DO = """(done) => {
  const over = document.querySelector('#over');
  if (over && !over.hidden) return true;
  const phase = document.querySelector('#phase-name')?.textContent || '';
  return [...document.querySelectorAll('#actions .group')].some(
    (g) => g.querySelector('button.target') && !done.includes(phase + '|' + g.dataset.group));
}"""


def views(player: Player) -> list[dict[str, Any]]:
    return [m["view"] for m in player.messages() if isinstance(m.get("view"), dict)]


def team_of(player: Player) -> set[int]:
    """The seats this player may know the cards of besides its own (the mayor rules' team,
    the standard rules' partners)."""
    team: set[int] = set()
    for view in views(player):
        me = view.get("me") or {}
        team.update(me.get("team") or ())
        team.update(me.get("partners") or ())
    return team


def roles_hidden_on_page(player: Player) -> None:
    """The seats on the page show no living stranger's card (read in one go, so the end of
    the game cannot come between reading the phase and the seats)."""
    allowed = team_of(player) | {player.seat}
    shown = player.page.evaluate(
        """() => ({
          phase: document.querySelector('#game').dataset.phase,
          seats: [...document.querySelectorAll('.seat')].map((s) => [
            Number(s.dataset.seat), s.dataset.alive === 'true', s.dataset.role]),
        })"""
    )
    if shown["phase"] == "over":
        return
    for number, alive, role in shown["seats"]:
        if alive and number not in allowed:
            assert role == "", f"seat {number} shows a hidden card"


def play_to_end(players: list[Player], rng: random.Random, shot: Path) -> dict[str, list[str]]:
    """Each player answers every group of buttons once per phase with a random legal choice
    (a house rather than "nobody" where there is one), until every page shows the end screen;
    returns each player's "phase line|group" answers. `shot` pictures the first choice."""
    done: dict[str, list[str]] = {p.name: [] for p in players}
    playing = list(players)
    deadline = time.monotonic() + GAME_BUDGET_S
    while playing:
        for player in list(playing):
            left_ms = (deadline - time.monotonic()) * 1000
            assert left_ms > 0, "the game did not end in time"
            # With several players, each page is asked in turn; one alone is simply awaited.
            wait_ms = left_ms if len(playing) == 1 else min(left_ms, 500)
            try:
                player.page.wait_for_function(
                    _SOMETHING_TO_DO, arg=done[player.name], timeout=wait_ms
                )
            except PlaywrightTimeoutError:
                continue
            if not answer(player, rng, done[player.name], shot):
                playing.remove(player)
    return done


def answer(player: Player, rng: random.Random, done: list[str], shot: Path) -> bool:
    """Click one button of a group not yet answered in this phase; False once it is over."""
    page = player.page
    if page.locator("#game").get_attribute("data-phase") == "over":
        expect(page.locator("#over")).to_be_visible()
        return False
    roles_hidden_on_page(player)
    phase = page.locator("#phase-name").text_content() or ""
    for group in page.locator("#actions .group").all():
        key = group.get_attribute("data-group") or ""
        if f"{phase}|{key}" in done:
            continue
        if not done and not shot.exists():
            page.screenshot(path=shot, full_page=True)
        done.append(f"{phase}|{key}")
        # Read in one go: the view may be redrawn (buttons replaced) between two reads.
        targets: list[str] = group.locator("button.target").evaluate_all(
            "buttons => buttons.map(b => b.dataset.target)"
        )
        houses = [t for t in targets if t != "none"]
        if not targets:
            break
        # The view may move on (the phase ends) between reading and clicking.
        target = rng.choice(houses or targets)
        with contextlib.suppress(PlaywrightTimeoutError):
            group.locator(f'button.target[data-target="{target}"]').click(
                timeout=2000, no_wait_after=True
            )
        break
    return True


def check_frames(player: Player, *, night_codes: set[str]) -> None:
    """Every view before the end shows no living stranger's card outside the player's team;
    a player outside the night room never received its events."""
    allowed = team_of(player) | {player.seat}
    in_night_room = False
    for view in views(player):
        me = view.get("me") or {}
        in_night_room = in_night_room or bool(me.get("team") or me.get("wolves_room"))
        if view["phase"] == "over":
            continue
        for seat in view["seats"]:
            if seat["role"] is not None and seat["alive"] and seat["seat"] not in allowed:
                raise AssertionError(f"a view leaked the card of seat {seat['seat']}")
    if not in_night_room:
        codes = {m["code"] for m in player.messages() if m.get("type") == "event"}
        assert not codes & night_codes, (
            f"night-room events reached a stranger: {codes & night_codes}"
        )


def check_end_screen(player: Player, size: int, german: str, english: str) -> None:
    page = player.page
    expect(page.locator("#over")).to_be_visible()
    expect(page.locator("#my-result")).to_be_visible()
    expect(page.locator("#all-roles tr")).to_have_count(size)
    final = views(player)[-1]
    assert final["phase"] == "over"
    for cell in page.locator("#all-roles td:nth-child(2)").all():
        assert (cell.text_content() or "").strip(), "the end screen names every card"
    expect(page.locator("#winners li")).to_have_count(len(outcome_winners(final)))
    expect(page.locator("#log")).to_contain_text(german)
    page.click("#lang-button")
    # The history is rendered anew in English over a new socket (slow on a loaded machine).
    expect(page.locator("#log")).to_contain_text(english, timeout=20_000)
    player.assert_no_script_errors()


def outcome_winners(view: dict[str, Any]) -> list[int]:
    outcome = view.get("outcome")
    return list(outcome["winners"] if outcome else view.get("winners") or [])


def found_and_fill(
    host: Player, ruleset: str, size: int, durations: dict[str, int], guests: list[Player]
) -> None:
    """The host founds a round of `ruleset`, the guests join it from the lobby, the host fills
    the rest with bots; every page then shows its own card, explained."""
    host.signup()
    game_id = host.found_ruleset(ruleset, size, durations)
    expect(host.page.locator("#waiting-count")).to_contain_text("1")
    for guest in guests:
        guest.signup()
        guest.join(game_id)
    expect(host.page.locator("#waiting-count")).to_contain_text(str(1 + len(guests)))
    host.fill_with_bots()
    for player in (host, *guests):
        player.wait_for_role()
        expect(player.page.locator("#game")).to_have_attribute("data-ruleset", ruleset)
        expect(player.page.locator("#role-help")).not_to_be_empty()


def test_classic_game_of_two_people_and_bots_in_the_browser(
    browser: Browser, server: str, artifacts: Path
) -> None:
    tag = random.randrange(10**6)
    host = Player.open(browser, server, f"Schwarzseel{tag}")
    guest = Player.open(browser, server, f"Blackmere{tag}")
    try:
        found_and_fill(host, "classic", 5, CLASSIC_DURATIONS, [guest])
        (artifacts / "classic-act.png").unlink(missing_ok=True)
        answered = play_to_end([host, guest], random.Random(3), artifacts / "classic-act.png")
        # Everyone votes by day (A9): each person played moves through the page.
        assert all(answered.values()), f"the page offered a player no move: {answered}"
        for player in (host, guest):
            check_end_screen(player, 5, "Das Spiel ist aus.", "The game is over.")
            check_frames(player, night_codes={"wolf_vote_cast", "wolves_chose", "pack_revealed"})
        host.page.screenshot(path=artifacts / "classic-over.png", full_page=True)
    finally:
        host.close()
        guest.close()


def test_mayor_game_with_bots_in_the_browser(
    browser: Browser, server: str, artifacts: Path
) -> None:
    player = Player.open(browser, server, f"Siebentann{random.randrange(10**6)}")
    try:
        found_and_fill(player, "mayor", 5, MAYOR_DURATIONS, [])
        (artifacts / "mayor-act.png").unlink(missing_ok=True)
        answered = play_to_end([player], random.Random(0), artifacts / "mayor-act.png")
        # The mayor's election asks everyone to stand or not and to vote (B1).
        assert answered[player.name], "the page offered the player no move in the whole game"
        check_end_screen(player, 5, "Die Rollen:", "The roles:")
        check_frames(player, night_codes={"victim_chosen", "team_revealed"})
        player.page.screenshot(path=artifacts / "mayor-over.png", full_page=True)
    finally:
        player.close()
