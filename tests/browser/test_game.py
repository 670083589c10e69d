"""Complete games played in Chromium through the UI only (issue 4's proof).

Seven browser contexts found and join a "Selbst gemischt" game (two evil, seer, doctor, witch,
two plain villagers) and play it to the end: night actions, a night call with its chat, the
night room's chat and votes, nominations, the evening vote and the end screen with replay.
The test knows every role only by reading each player's own page, as a person at that screen
would. The doctor's page is then checked for secrets in its DOM and in every frame it received.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from .players import Player

pytestmark = pytest.mark.slow

DURATIONS = {
    "steal_s": "5",
    "night_s": "30",
    "morning_s": "3",
    "day_s": "40",
    "vote_s": "40",
    "floor_s": "5",
}


def found_custom_game(host: Player, size: int) -> str:
    page = host.page
    page.select_option("#found-world", "werwolf")
    page.fill('#found-form input[name="size"]', str(size))
    page.select_option("#found-deck", "custom")
    expect(page.locator("#custom-deck")).to_be_visible()
    # The editor starts with evil 1, seer 1, filler 2; make it evil 2, seer, doctor, witch,
    # filler 2.
    page.fill("#custom-count-0", "2")
    page.click("#custom-add")
    page.select_option("#custom-role-3", "doctor")
    page.click("#custom-add")
    page.select_option("#custom-role-4", "witch")
    page.locator("#durations summary").click()
    for name, value in DURATIONS.items():
        page.fill(f'#found-form input[name="{name}"]', value)
    page.click("#found-submit")
    expect(page).to_have_url(re.compile(r"#/game/[\w-]+$"))
    game_id = page.url.rsplit("/", 1)[1]
    expect(page.locator("#waiting-count")).to_contain_text("1")
    return game_id


def by_role(players: list[Player], role: str) -> list[Player]:
    return [p for p in players if p.role == role]


def hidden_roles_ok(observer: Player) -> None:
    """Before the end, the observer's seats show no role but its own and the dead's."""
    for seat in observer.page.locator(".seat").all():
        number = int(seat.get_attribute("data-seat") or 0)
        if number == observer.seat or seat.get_attribute("data-alive") == "false":
            continue
        assert seat.get_attribute("data-role") == "", f"seat {number} shows a hidden role"


def check_frames(observer: Player, secrets_: list[str]) -> None:
    """Every frame the observer received: no secret text; before the game is over, no other
    living player's role, no night room, no witch's victim, no private events of others."""
    over = False
    for raw in observer.frames:
        for secret in secrets_:
            assert secret not in raw, f"secret {secret!r} reached the observer"
    for message in observer.messages():  # those of `batch` frames one by one
        view = message.get("view")
        if isinstance(view, dict):
            over = over or view["phase"] == "over"
            assert view["night_room"] is None
            assert view["witch_victim"] is None
            if not over:
                for seat in view["seats"]:
                    if seat["seat"] != observer.seat and seat["alive"]:
                        assert seat["role"] is None, f"view leaks the role of {seat['seat']}"
        if message.get("type") == "event":
            code = message["code"]
            assert code not in {"team_revealed", "evil_vote_cast", "evil_votes_complete"}
            if code == "chat":
                assert message["params"]["room"] != "night_room"
                assert message["params"]["room"] != "call", "the observer is in no call"
            if code == "role_assigned":
                assert message["params"]["role"] == observer.role


@dataclass
class Table:
    """Who is who, as each player's own page says."""

    game_id: str
    players: list[Player]
    tag: str

    def one(self, role: str) -> Player:
        return by_role(self.players, role)[0]

    @property
    def night_secret(self) -> str:
        return f"Nachtraum-Geheimnis-{self.tag}"

    @property
    def call_secret(self) -> str:
        return f"Anruf-Geheimnis-{self.tag}"


def gather(browser: Browser, server: str, artifacts: Path, tag: str, players: list[Player]) -> str:
    host = Player.open(browser, server, f"Gruenderin{tag}")
    players.append(host)
    host.signup()
    game_id = found_custom_game(host, 7)
    for index in range(1, 7):
        player = Player.open(browser, server, f"Spieler{index}{tag}")
        players.append(player)
        player.signup()
        expect(player.page.locator(f'li[data-game="{game_id}"]')).to_be_visible()
        if index == 1:
            player.page.screenshot(path=artifacts / "lobby.png", full_page=True)
        player.join(game_id)
    for player in players:
        player.wait_for_role()
        player.wait_phase("night")
    return game_id


def play_night(table: Table, artifacts: Path) -> None:
    wolf_a, wolf_b = by_role(table.players, "evil")
    seer, doctor, witch = (table.one(r) for r in ("seer", "doctor", "witch"))
    caller, callee = by_role(table.players, "filler")
    # Roles are shown in the world's names with an explanation.
    expect(seer.page.locator("#my-role")).to_have_text("Seherin")
    expect(seer.page.locator("#role-help")).to_contain_text("prüfst")
    # The evil team sees its night room; villagers see none.
    expect(wolf_a.page.locator("#night-room")).to_be_visible()
    expect(doctor.page.locator("#night-room")).to_be_hidden()

    # Night room: chat and individual votes with the live tally.
    wolf_a.say(table.night_secret)
    expect(wolf_b.page.locator("#chat-list")).to_contain_text(table.night_secret)
    victim = seer.seat
    wolf_a.act("ability:evil_vote", victim)
    expect(wolf_b.page.locator("#night-tally")).to_contain_text(f"{victim}")
    wolf_b.act("ability:evil_vote", victim)
    expect(wolf_a.page.locator("#night-victim")).to_contain_text(str(victim))
    # The witch learns the victim once all evil voted (N7); she poisons wolf B instead.
    expect(witch.page.locator("#witch-victim")).to_contain_text(str(victim))
    witch.act("ability:poison", wolf_b.seat)
    # The doctor protects the victim; the seer checks wolf A and learns the answer at once.
    doctor.act("ability:protect", victim)
    seer.act("ability:check", wolf_a.seat)
    expect(seer.page.locator("#facts")).to_contain_text(str(wolf_a.seat))

    # A night call: ringing, accept, the call's chat, hang up.
    caller.act("PlaceCall", callee.seat)
    expect(callee.page.locator("#call-status")).to_have_attribute("data-status", "ringing")
    callee.page.click("#call-accept")
    expect(caller.page.locator("#call-status")).to_have_attribute("data-status", "active")
    expect(caller.page.locator("#chat-room")).to_have_attribute("data-room", "call")
    caller.say(table.call_secret)
    expect(callee.page.locator("#chat-list")).to_contain_text(table.call_secret)
    wolf_a.page.screenshot(path=artifacts / "night.png", full_page=True)
    callee.page.click("#call-hangup")
    expect(caller.page.locator("#call-panel")).to_contain_text("Anrufen")
    hidden_roles_ok(doctor)
    expect(doctor.page.locator("#timer")).to_have_text(re.compile(r"\d+:\d\d"))


def play_day(table: Table, browser: Browser, server: str, artifacts: Path) -> None:
    wolf_a, wolf_b = by_role(table.players, "evil")
    seer, doctor = table.one("seer"), table.one("doctor")
    caller = by_role(table.players, "filler")[0]
    # Morning: wolf B died of poison, the protected seer lives. Then the market opens.
    for player in table.players:
        player.wait_phase("day")
    expect(doctor.page.locator(f'.seat[data-seat="{wolf_b.seat}"]')).to_have_attribute(
        "data-alive", "false"
    )
    expect(doctor.page.locator(f'.seat[data-seat="{seer.seat}"]')).to_have_attribute(
        "data-alive", "true"
    )
    doctor.say("Guten Morgen, Eichenhain!")
    expect(seer.page.locator("#chat-list")).to_contain_text("Guten Morgen")
    seer.act("Nominate", wolf_a.seat)
    expect(doctor.page.locator("#nominations")).to_contain_text(str(wolf_a.seat))
    caller.page.click("#interject")
    expect(doctor.page.locator("#log")).to_contain_text("Einspruch")
    hidden_roles_ok(doctor)
    phone = Player.open(browser, server, f"Zuschauer{table.tag}", phone=True)
    try:
        phone.page.goto(f"/#/game/{table.game_id}/spectate")
        expect(phone.page.locator("#game")).to_have_attribute("data-phase", "day")
        phone.page.screenshot(path=artifacts / "day-phone.png", full_page=True)
        # A spectator (X6) reads the market place, never the night room or a private call.
        expect(phone.page.locator("#chat-list")).to_contain_text("Guten Morgen")
        phone.page.click("#tab-button-talk")  # the phone layout's tabs (issue 12)
        expect(phone.page.locator("#log li").first).to_be_visible()
        check_frames(phone, [table.night_secret, table.call_secret])
        assert table.night_secret not in phone.page.content()
        assert table.call_secret not in phone.page.content()
        phone.assert_no_script_errors()
    finally:
        phone.close()
    doctor.page.screenshot(path=artifacts / "day.png", full_page=True)


def vote_and_end(table: Table, artifacts: Path) -> None:
    wolf_a, wolf_b = by_role(table.players, "evil")
    doctor = table.one("doctor")
    # Evening vote: everyone alive votes for wolf A; wolf A abstains.
    living = [p for p in table.players if p is not wolf_b]
    for player in living:
        player.wait_phase("vote")
    for player in living:
        player.act("Vote", None if player is wolf_a else wolf_a.seat)
    # The end: the village wins, every role is shown, and the replay plays from the log.
    for player in table.players:
        player.wait_phase("over")
    expect(doctor.page.locator("#over")).to_be_visible()
    expect(doctor.page.locator("#sides")).to_contain_text("Dorf")
    expect(doctor.page.locator("#all-roles")).to_contain_text("Werwolf")
    expect(doctor.page.locator("#winners")).to_contain_text(str(doctor.seat))
    doctor.page.click("#replay-load")
    expect(doctor.page.locator("#replay-list li").first).to_be_visible()
    expect(doctor.page.locator("#replay-list")).to_contain_text("Dorf")
    doctor.page.screenshot(path=artifacts / "end.png", full_page=True)


@pytest.mark.rule(
    "X5", "X6", "W4", "N1", "N2", "N7", "S1", "S2", "S3", "C1", "C2", "C4", "D2", "D3", "S19", "V1"
)
def test_seven_players_play_a_full_game(browser: Browser, server: str, artifacts: Path) -> None:
    tag = secrets.token_hex(3)
    players: list[Player] = []
    try:
        game_id = gather(browser, server, artifacts, tag, players)
        table = Table(game_id, players, tag)
        roles = sorted(p.role for p in players)
        assert roles == sorted(["evil", "evil", "seer", "doctor", "witch", "filler", "filler"])
        play_night(table, artifacts)
        play_day(table, browser, server, artifacts)

        # Secrecy at the browser level, while the game runs: a villager's DOM and every frame
        # it received (after the end every room's chat is shown to everyone, issue 12).
        observer = table.one("doctor")
        html = observer.page.content()
        assert table.night_secret not in html
        assert table.call_secret not in html
        check_frames(observer, [table.night_secret, table.call_secret])
        vote_and_end(table, artifacts)
        check_frames(observer, [table.night_secret, table.call_secret])  # no live reveal
        expect(observer.page.locator("#replay-list")).to_contain_text(table.night_secret)
        # ... while the secrets really were sent to those who may read them.
        wolf_b = by_role(players, "evil")[1]
        callee = by_role(players, "filler")[1]
        assert any(table.night_secret in f for f in wolf_b.frames)
        assert any(table.call_secret in f for f in callee.frames)
        for player in players:
            player.assert_no_script_errors()
    finally:
        for player in players:
            player.close()
