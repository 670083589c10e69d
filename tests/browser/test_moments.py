"""Issue 12, moments: a five-player game played to its end shows a full-width announcement for
the night, the day, a death (with the role), a banishment and the game over with a personal
result ("Du hast gewonnen!" / "Du hast verloren."), a polite live line, a sound switch, and
the tab title when it is the player's turn. A screenshot of each moment goes to
test-artifacts/moment-<kind>.png."""

from __future__ import annotations

import re
import secrets
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from .players import Player

pytestmark = pytest.mark.slow

DURATIONS = {"night_s": 10, "morning_s": 2, "day_s": 10, "vote_s": 20}


# Every moment the page shows, as the page shows it: a banner lasts 3.5 s, and on a loaded
# machine a screenshot or another page's wait can take longer, so the test reads the history
# the page went through instead of hoping to look at the right instant.
RECORD_MOMENTS = """() => {
  window.__moments = [];
  const record = () => {
    const banner = document.querySelector("#moment");
    if (!banner || banner.hidden) return;
    const shown = {
      kind: banner.dataset.kind,
      title: banner.querySelector("#moment-title")?.textContent ?? "",
      live: document.querySelector("#moment-live")?.textContent ?? "",
    };
    const last = window.__moments[window.__moments.length - 1];
    if (!last || last.kind !== shown.kind || last.live !== shown.live) window.__moments.push(shown);
  };
  new MutationObserver(record).observe(document.body, {
    subtree: true, childList: true, attributes: true, attributeFilter: ["data-kind", "hidden"],
  });
  record();
}"""


def record_moments(player: Player) -> None:
    player.page.evaluate(RECORD_MOMENTS)


def moment(player: Player, kind: str, artifacts: Path) -> dict[str, str]:
    """The next moment of `kind` the page showed after the one asked for before (waiting for
    it); a screenshot of the page."""
    found = player.page.wait_for_function(
        """kind => {
          const moments = window.__moments || [];
          const at = moments.findIndex((m, i) => i >= (window.__from || 0) && m.kind === kind);
          if (at < 0) return null;
          window.__from = at + 1;
          return moments[at];
        }""",
        arg=kind,
        timeout=30_000,
    )
    shown: dict[str, str] = found.json_value()
    player.page.screenshot(path=str(artifacts / f"moment-{kind}.png"))
    return shown


def test_the_moments_of_a_whole_game(browser: Browser, server: str, artifacts: Path) -> None:
    tag = secrets.token_hex(3)
    players: list[Player] = []
    try:
        host = Player.open(browser, server, f"Wirt{tag}")
        players.append(host)
        host.signup()
        game_id = host.found(5, DURATIONS)
        for index in range(1, 5):
            player = Player.open(browser, server, f"Gast{index}{tag}")
            players.append(player)
            player.signup()
            player.join(game_id)
        for player in players:
            player.wait_for_role()
            record_moments(player)
        role: dict[str, list[Player]] = {}
        for player in players:
            role.setdefault(player.role, []).append(player)
        wolf, seer, doctor = role["evil"][0], role["seer"][0], role["doctor"][0]
        first, second = role["filler"]
        wolf.wait_phase("night")
        wolf.act("ability:evil_vote", first.seat)
        # The sound can be switched off (kept in this browser).
        doctor.page.click("#sound-toggle")
        expect(doctor.page.locator("#sound-toggle")).to_have_attribute("aria-pressed", "false")

        death = moment(seer, "death", artifacts)
        assert f"Hausnummer {first.seat}" in death["live"], death
        moment(seer, "day", artifacts)
        # Day: a nomination is possible, so the tab says it is this player's turn.
        expect(seer.page).to_have_title(re.compile("Du bist dran"))
        seer.act("Nominate", second.seat)
        # The banner shows for 3.5 s: look at it as soon as the seer's page turns to the vote,
        # before waiting for the other pages (a loaded machine is slow with four).
        seer.wait_phase("vote", timeout_ms=30_000)
        moment(seer, "vote", artifacts)
        for player in (wolf, doctor, second):
            player.wait_phase("vote", timeout_ms=30_000)
        for player in (wolf, seer, doctor):
            player.act("Vote", second.seat)
        second.act("Vote", None)
        moment(seer, "banished", artifacts)
        moment(seer, "night", artifacts)
        expect(seer.page).to_have_title(re.compile("Du bist dran"))  # the seer's check
        wolf.act("ability:evil_vote", seer.seat)
        assert moment(wolf, "over", artifacts)["title"] == "Du hast gewonnen!"
        assert moment(doctor, "over", artifacts)["title"] == "Du hast verloren."
        # The banner lets clicks through to the table (a vote never waits for it); its close
        # button dismisses it.
        expect(doctor.page.locator("#moment")).to_have_css("pointer-events", "none")
        doctor.page.click("#moment .moment-close")
        expect(doctor.page.locator("#moment")).to_be_hidden()
        expect(seer.page).not_to_have_title(re.compile("Du bist dran"))  # nothing left to do
        expect(wolf.page.locator("#my-result")).to_have_text("Du hast gewonnen!")
        expect(doctor.page.locator("#my-result")).to_have_text("Du hast verloren.")
        # The seer heard every chime of the game (night, death, day, vote, banishment, night,
        # the end) from one audio context, not one each.
        assert seer.page.evaluate("window.__audioContexts") == 1
        for player in players:
            player.assert_no_script_errors()
    finally:
        for player in players:
            player.close()
