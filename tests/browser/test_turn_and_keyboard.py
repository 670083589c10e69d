"""Issue 12: a turn in a hidden tab, and play by keyboard alone.

- Notifications: every page reports itself hidden (the visibility API, overridden before the
  page's scripts run). When a turn begins (a night action, a nomination) the tab title flashes;
  with notifications switched on (a click; Chromium has the permission granted) a system
  notification is made too; a player without a turn gets neither; seeing the tab again stops
  the flashing.
- Keyboard: one player signs up, joins the round, switches notifications on and votes with Tab
  and Enter only (the focus is moved by the Tab key, never by the test).
- A whole game by keyboard: one player does everything its seat offers (join, night action,
  chat, nomination, vote) with Tab, typing and Enter, until its result shows.
"""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from .players import Player

pytestmark = pytest.mark.slow

DURATIONS = {"night_s": 15, "morning_s": 2, "day_s": 15, "vote_s": 40}

# Before any script of the page: a tab that says it is hidden, and a Notification that keeps
# what it was asked to show (it still makes the real one).
HIDDEN_TAB = """
window.__hidden = true;
Object.defineProperty(document, "hidden", { get: () => window.__hidden, configurable: true });
Object.defineProperty(document, "visibilityState", {
  get: () => (window.__hidden ? "hidden" : "visible"), configurable: true });
window.__notes = [];
if (window.Notification) {
  const Real = window.Notification;
  window.Notification = class extends Real {
    constructor(title, options) {
      super(title, options);
      window.__notes.push({ title, body: options && options.body });
    }
  };
}
"""


def open_hidden(browser: Browser, server: str, name: str) -> Player:
    player = Player.open(browser, server, name)
    player.context.grant_permissions(["notifications"], origin=server)
    player.context.add_init_script(HIDDEN_TAB)
    player.page.reload()
    assert player.page.evaluate("document.hidden") is True
    return player


def tab_to(page: Page, selector: str, limit: int = 120) -> None:
    """Press Tab until the focused element matches `selector` (as a keyboard user would)."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate("(s) => document.activeElement?.matches(s) ?? false", selector):
            return
    raise AssertionError(f"Tab never reached {selector}")


def until(condition: Callable[[], bool], page: Page, timeout_s: float = 20.0) -> None:
    """Ask the page again and again (the page's CSP forbids wait_for_function's eval)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        page.wait_for_timeout(100)


def has_notes(player: Player) -> Callable[[], bool]:
    return lambda: len(notes(player)) > 0


def notes(player: Player) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = player.page.evaluate("window.__notes")
    return found


def seat_four(browser: Browser, server: str, players: list[Player]) -> Player:
    """Three players by mouse, then the fourth signs up and joins by keyboard alone."""
    tag = secrets.token_hex(3)
    host = open_hidden(browser, server, f"Tast{tag}")
    players.append(host)
    host.signup()
    game_id = host.found(4, DURATIONS)
    for index in (1, 2):
        player = open_hidden(browser, server, f"Ohr{index}{tag}")
        players.append(player)
        player.signup()
        player.join(game_id)
    keys = open_hidden(browser, server, f"Taste{tag}")
    players.append(keys)
    keys.signup_by_keyboard()
    join = f'button[data-join="{game_id}"]'
    expect(keys.page.locator(join)).to_be_visible()
    tab_to(keys.page, join)
    keys.page.keyboard.press("Enter")
    return keys


def test_turn_notifications_and_keyboard_only_vote(full_browser: Browser, server: str) -> None:
    """In the full Chromium: the headless shell refuses system notifications."""
    browser = full_browser
    players: list[Player] = []
    try:
        keys = seat_four(browser, server, players)
        for player in players:
            player.wait_for_role()
        role = {p.role: p for p in players}
        wolf = role["evil"]

        # Night: the wolf's tab flashes (it was hidden when the turn began).
        expect(wolf.page).to_have_title(re.compile("^🔔"))
        expect(wolf.page.locator("#game")).to_have_attribute("data-flashing", "true")
        for player in players:
            if player is keys:
                tab_to(keys.page, "#notify-toggle")
                keys.page.keyboard.press("Enter")
            else:
                player.page.click("#notify-toggle")
            expect(player.page.locator("#notify-toggle")).to_have_attribute("aria-pressed", "true")
        victim = next(p for p in players if p is not wolf and p is not keys)
        wolf.act("ability:evil_vote", victim.seat)
        wolf.page.evaluate(
            "window.__hidden = false; document.dispatchEvent(new Event('visibilitychange'))"
        )
        expect(wolf.page.locator("#game")).not_to_have_attribute("data-flashing", "true")
        assert not wolf.page.title().startswith("🔔")

        # Day: a nomination is a turn for each living player; the dead one has none.
        keys.wait_phase("day", timeout_ms=40_000)
        living = [p for p in players if p is not victim and p is not wolf]
        nominee = next(p for p in players if p is not victim and p is not keys)
        nominator = next(p for p in players if p not in (victim, keys, nominee))
        nominator.act("Nominate", nominee.seat)
        for player in living:
            until(has_notes(player), player.page)
            assert notes(player)[-1]["title"] == "Du bist dran"
        assert notes(victim) == []

        # Evening: the keyboard player votes with Tab and Enter.
        keys.wait_phase("vote", timeout_ms=30_000)
        vote = f'[data-group="Vote"] button[data-target="{nominee.seat}"]'
        tab_to(keys.page, vote)
        keys.page.keyboard.press("Enter")
        # The vote is confirmed and counted (its buttons are gone: a vote cannot be changed).
        expect(keys.page.locator("#log")).to_contain_text(f"Hausnummer {keys.seat} hat abgestimmt")
        expect(keys.page.locator("#outbox")).to_contain_text("bestätigt")
        for player in players:
            player.assert_no_script_errors()
    finally:
        for player in players:
            player.close()


def press_on(page: Page, selector: str) -> None:
    """Tab to the control and press Enter, as a keyboard user does."""
    tab_to(page, selector)
    page.keyboard.press("Enter")


def living_players(keys: Player, players: list[Player]) -> list[Player]:
    dead = keys.page.locator(".seat.dead").evaluate_all("seats => seats.map(s => s.dataset.seat)")
    return [p for p in players if str(p.seat) not in dead]


def keyboard_round(keys: Player, wolf: Player, players: list[Player], tag: str) -> bool:
    """One night and day; the keyboard player does its part by keyboard, the others click.
    Returns whether the game is over."""
    keys.wait_phase("night", timeout_ms=40_000)
    if keys.page.locator('[data-group^="ability:"] button[data-target]').count():
        press_on(keys.page, '[data-group^="ability:"] button[data-target]')  # its night action
        expect(keys.page.locator("#outbox .move-confirmed")).not_to_have_count(0)
    if wolf is not keys:
        prey = next(p for p in living_players(keys, players) if p not in (wolf, keys))
        wolf.act("ability:evil_vote", prey.seat)
    keys.wait_phase("day", timeout_ms=40_000)
    living = living_players(keys, players)
    tab_to(keys.page, "#chat-input")
    keys.page.keyboard.type(f"Ich war es nicht {tag}")
    keys.page.keyboard.press("Enter")
    expect(keys.page.locator("#chat-list")).to_contain_text(f"Ich war es nicht {tag}")
    suspect = wolf if wolf is not keys else next(p for p in living if p is not keys)
    press_on(keys.page, f'[data-group="Nominate"] button[data-target="{suspect.seat}"]')
    keys.wait_phase("vote", timeout_ms=30_000)
    press_on(keys.page, f'[data-group="Vote"] button[data-target="{suspect.seat}"]')
    for player in living:
        if player is not keys:
            player.act("Vote", suspect.seat if player is not suspect else None)
    game = keys.page.locator("#game")
    expect(game).not_to_have_attribute("data-phase", "vote", timeout=30_000)
    return game.get_attribute("data-phase") == "over"


def test_a_whole_game_by_keyboard_alone(browser: Browser, server: str) -> None:
    """One player signs up, joins, acts at night (whatever its card can do), chats, nominates
    and votes with Tab, typing and Enter only, until the game is over and its result shows.
    The others (by mouse) play along so that the game ends within a few rounds."""
    tag = secrets.token_hex(3)
    players: list[Player] = []
    try:
        host = Player.open(browser, server, f"Maus{tag}")
        players.append(host)
        host.signup()
        game_id = host.found(4, {"night_s": 8, "morning_s": 2, "day_s": 30, "vote_s": 30})
        for index in (1, 2):
            player = Player.open(browser, server, f"Klick{index}{tag}")
            players.append(player)
            player.signup()
            player.join(game_id)
        keys = Player.open(browser, server, f"Tasten{tag}")
        players.append(keys)
        keys.signup_by_keyboard()
        join = f'button[data-join="{game_id}"]'
        expect(keys.page.locator(join)).to_be_visible()
        press_on(keys.page, join)
        for player in players:
            player.wait_for_role()
        wolf = next(p for p in players if p.role == "evil")
        rounds = 0
        while not keyboard_round(keys, wolf, players, f"{tag}{rounds}"):
            rounds += 1
            assert rounds < 4, "the game should be over within four rounds"
        keys.wait_phase("over", timeout_ms=30_000)
        expect(keys.page.locator("#my-result")).to_have_text(
            re.compile("Du hast (gewonnen|verloren)")
        )
        for player in players:
            player.assert_no_script_errors()
    finally:
        for player in players:
            player.close()
