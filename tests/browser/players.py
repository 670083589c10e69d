"""A browser player: one context (own cookies and storage), one page, every WebSocket frame kept.

Everything a player does goes through the page (clicks, typing); the test reads what the page
shows. The frames are kept only to check what reached this browser (secrecy).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from playwright.sync_api import Browser, BrowserContext, Page, ViewportSize, WebSocket, expect

PASSWORD = "mondschein-42"
TIMEOUT_MS = 15_000
# What a page shows after a server round trip: Playwright's 5 s by default were too short on two
# cores under the whole suite (a room's "leave" answered later); a passing check costs no more.
expect.set_options(timeout=10_000)


# Counts the page's audio contexts (`window.__audioContexts`): each one open renders, on a
# thread of its own, until it is closed or suspended.
COUNT_AUDIO_CONTEXTS = """(() => {
  const Base = window.AudioContext;
  if (!Base) return;
  window.__audioContexts = 0;
  window.AudioContext = class extends Base {
    constructor(...args) {
      super(...args);
      window.__audioContexts += 1;
    }
  };
})();"""


@dataclass
class Player:
    name: str
    context: BrowserContext
    page: Page
    frames: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    socket_urls: list[str] = field(default_factory=list)  # every WebSocket the page opened
    seat: int = 0
    role: str = ""

    @classmethod
    def open(cls, browser: Browser, base: str, name: str, *, phone: bool = False) -> Player:
        viewport: ViewportSize = (
            {"width": 390, "height": 844} if phone else {"width": 1360, "height": 900}
        )
        context = browser.new_context(base_url=base, viewport=viewport, locale="de-DE")
        context.set_default_timeout(TIMEOUT_MS)
        context.add_init_script(COUNT_AUDIO_CONTEXTS)
        page = context.new_page()
        player = cls(name, context, page)
        page.on("websocket", player._watch)
        page.on("pageerror", lambda error: player.errors.append(str(error)))
        page.goto("/")
        return player

    def _watch(self, ws: WebSocket) -> None:
        self.socket_urls.append(ws.url)
        ws.on("framereceived", self._frame)

    def _frame(self, payload: str | bytes) -> None:
        self.frames.append(payload if isinstance(payload, str) else payload.decode())

    def messages(self) -> list[dict[str, Any]]:
        """Every message received, those of a `batch` frame (the page asks for them) in turn."""
        out: list[dict[str, Any]] = []
        for frame in map(json.loads, self.frames):
            out.extend(frame["messages"] if frame["type"] == "batch" else [frame])
        return out

    # -- lobby -----------------------------------------------------------------------------
    def signup(self) -> None:
        page = self.page
        page.fill("#auth-name", self.name)
        page.fill("#auth-password", PASSWORD)
        page.click("#signup-button")
        # Sign-up hashes the password (argon2): slow on a loaded machine.
        expect(page.locator("#account-label")).to_contain_text(self.name, timeout=TIMEOUT_MS)

    def signup_by_keyboard(self) -> None:
        """Sign up with the keyboard only: type, Tab to the next control, Enter."""
        page = self.page
        page.focus("#auth-name")
        page.keyboard.type(self.name)
        page.keyboard.press("Tab")
        page.keyboard.type(PASSWORD)
        page.keyboard.press("Tab")  # sign in
        page.keyboard.press("Tab")  # create account
        page.keyboard.press("Enter")
        expect(page.locator("#account-label")).to_contain_text(self.name)

    def found(self, size: int, durations: dict[str, int], deck: str = "auto") -> str:
        page = self.page
        page.select_option("#found-world", "werwolf")
        page.fill('#found-form input[name="size"]', str(size))
        page.select_option("#found-deck", deck)
        page.locator("#durations summary").click()
        for name, value in durations.items():
            page.fill(f'#found-form input[name="{name}"]', str(value))
        page.click("#found-submit")
        expect(page).to_have_url(re.compile(r"#/game/[\w-]+$"))
        return page.url.rsplit("/", 1)[1]

    def found_ruleset(
        self, ruleset: str, size: int, durations: dict[str, int], *, world: str | None = None
    ) -> str:
        """Found a game of a rule set other than the standard one through its own part of the
        form (built from the rule set's options), with short stage lengths."""
        page = self.page
        page.select_option("#found-ruleset", ruleset)
        if world is not None:
            page.select_option("#found-world", world)
        page.fill('#found-form input[name="size"]', str(size))
        page.locator("#ruleset-durations summary").click()
        for name, value in durations.items():
            page.fill(f'#ruleset-options input[name="{name}"]', str(value))
        page.click("#found-submit")
        expect(page).to_have_url(re.compile(r"#/game/[\w-]+$"))
        return page.url.rsplit("/", 1)[1]

    def fill_with_bots(self) -> None:
        """The host fills the free seats with bots; the full table starts."""
        self.page.click("#fill-bots")

    def join(self, game_id: str) -> None:
        button = self.page.locator(f'button[data-join="{game_id}"]')
        button.click()
        expect(self.page).to_have_url(re.compile(f"#/game/{game_id}$"))

    # -- the table -------------------------------------------------------------------------
    def wait_for_role(self) -> None:
        role = self.page.locator("#my-role")
        expect(role).to_have_attribute("data-role", re.compile(r"\w+"), timeout=20_000)
        self.role = role.get_attribute("data-role") or ""
        seat = self.page.locator(".seat.me").get_attribute("data-seat")
        assert seat is not None
        self.seat = int(seat)

    def wait_phase(self, phase: str, timeout_ms: int = 60_000) -> None:
        game = self.page.locator("#game")
        expect(game).to_have_attribute("data-phase", phase, timeout=timeout_ms)

    def act(self, group: str, target: int | None) -> None:
        """Click a target button of one action group (only legal targets are offered)."""
        value = "none" if target is None else str(target)
        self.page.locator(f'[data-group="{group}"] button[data-target="{value}"]').click()

    def say(self, text: str) -> None:
        self.page.fill("#chat-input", text)
        self.page.click("#chat-send")
        expect(self.page.locator("#chat-list")).to_contain_text(text)

    def assert_no_script_errors(self) -> None:
        assert not self.errors, f"{self.name}: uncaught errors in the page: {self.errors}"

    def close(self) -> None:
        self.context.close()
