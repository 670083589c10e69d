"""Conference rooms in Chromium (X2, X5): two signed-in browsers meet in the Werwolf room on
/rooms.html and read each other's chat lines; one opens a private room, the other enters it by
the code the page shows; listening only disables writing; a friend called into a room from
the friends list (X4) goes in from the invitation. Every word on the page comes from the
server's catalogue."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Route, expect

from .axe import describe, serious_violations
from .players import Player
from .untranslated import untranslated

pytestmark = pytest.mark.slow


@pytest.fixture
def anna_and_bert(browser: Browser, server: str) -> Iterator[tuple[Player, Player]]:
    """Two players of this test only (their names tagged: the server lives for the session),
    closed after it."""
    tag = secrets.token_hex(3)
    anna = Player.open(browser, server, f"Anna{tag}")
    bert = Player.open(browser, server, f"Bert{tag}")
    try:
        yield anna, bert
    finally:
        anna.close()
        bert.close()


@pytest.mark.rule("X2", "X5")
def test_two_browsers_chat_in_a_room_and_meet_in_a_private_room_by_code(
    anna_and_bert: tuple[Player, Player],
) -> None:
    anna, bert = anna_and_bert
    for player in (anna, bert):
        player.signup()
        player.page.click("#rooms-link")  # from the lobby's header
        expect(player.page.locator("#rooms-title")).to_have_text("Konferenzräume")
        player.page.click('li[data-room="public-werwolf"] button.enter')
        expect(player.page.locator("#room-title")).to_have_text("Raum Werwolf")
    for player in (anna, bert):
        expect(player.page.locator("#members")).to_contain_text(anna.name)
        expect(player.page.locator("#members")).to_contain_text(bert.name)
    in_room = serious_violations(anna.page)
    assert not in_room, describe(in_room)
    anna.page.fill("#chat-text", "Guten Abend!")
    anna.page.click("#chat-form button[type=submit]")
    expect(anna.page.locator("#chat")).to_contain_text(f"{anna.name}: Guten Abend!")
    expect(bert.page.locator("#chat")).to_contain_text(f"{anna.name}: Guten Abend!")

    anna.page.fill("#chat-text", "Halb geschrieben")  # typing, not sent yet
    bert.page.click("#listen-toggle")  # listen only: no writing
    expect(bert.page.locator("#chat-text")).to_be_disabled()
    expect(anna.page.locator("#members")).to_contain_text(f"{bert.name} (im Browser, hört zu)")
    # Anna's page was drawn again for Bert's change (as at every poll): her half-written line
    # and her cursor are still there (a redraw took them, and a line sent then was empty).
    expect(anna.page.locator("#chat-text")).to_have_value("Halb geschrieben")
    expect(anna.page.locator("#chat-text")).to_be_focused()
    anna.page.fill("#chat-text", "")

    for player in (anna, bert):
        player.page.click("#leave")
        expect(player.page.locator("#rooms-title")).to_be_visible()
    listing = serious_violations(anna.page)
    assert not listing, describe(listing)
    anna.page.click("#open-private")
    code = anna.page.locator("#room-code")
    expect(code).to_contain_text("am Telefon nach Taste 5")
    letters = code.inner_text().split("Code: ")[1].split(" ")[0]
    bert.page.fill("#room-code-input", "XXXXXXXXXX")
    bert.page.click("#code-form button[type=submit]")
    refused = bert.page.locator("#rooms-error")
    expect(refused).to_have_text("Zu diesem Code ist kein Raum offen.")
    bert.page.fill("#room-code-input", letters)
    bert.page.click("#code-form button[type=submit]")
    expect(bert.page.locator("#room-title")).to_have_text("Privater Raum")
    expect(anna.page.locator("#members")).to_contain_text(bert.name)
    anna.assert_no_script_errors()
    bert.assert_no_script_errors()


@pytest.mark.rule("X2", "X4", "X5")
def test_a_friend_called_into_a_room_from_the_friends_list_goes_in_from_the_invitation(
    anna_and_bert: tuple[Player, Player],
) -> None:
    anna, bert = anna_and_bert
    anna.signup()
    bert.signup()
    a, b = anna.page, bert.page
    a.click("#friends-button")
    a.fill("#friend-form input[name=who]", bert.name)
    a.click("#friend-form button[type=submit]")
    expect(b.locator("#friends-button")).to_have_text("Freunde (1 Anfragen)", timeout=15_000)
    b.click("#friends-button")
    b.click("#friend-list .accept-friend")
    a.click("#friends-button")  # closed and opened again: Bert is a friend, online
    a.click("#friends-button")
    a.click("#friend-list li[data-state=friend] .call-friend")
    expect(a.locator("#room-title")).to_have_text("Privater Raum")
    expect(a.locator("#room-note")).to_contain_text(f"{bert.name} ist eingeladen.")
    invitation = b.locator("#invitations p[data-kind=room]")
    expect(invitation).to_contain_text(
        f"{anna.name} ruft dich in einen privaten Konferenzraum.", timeout=15_000
    )
    assert untranslated(b) == []
    invitation.locator(".accept-invitation").click()
    expect(b.locator("#room-title")).to_have_text("Privater Raum")
    expect(b.locator("#members")).to_contain_text(anna.name)
    expect(a.locator("#members")).to_contain_text(bert.name)
    anna.assert_no_script_errors()
    bert.assert_no_script_errors()


@pytest.mark.rule("X2")
def test_a_room_page_polls_on_after_requests_that_failed(
    anna_and_bert: tuple[Player, Player],
) -> None:
    """A phone browser in a tunnel: the room's poll fails a few times (the network, a busy
    server). The page used to stop polling for good at the first failure and never showed
    another line; it asks again on its next tick and the chat arrives once the network is
    back. Only the server saying the membership is over (404, 403) ends the polling."""
    anna, bert = anna_and_bert
    failed: list[str] = []

    def tunnel(route: Route) -> None:
        if route.request.method == "GET" and len(failed) < 3:
            failed.append(route.request.url)
            route.abort("internetdisconnected")
        else:
            route.continue_()

    for player in (anna, bert):
        player.signup()
        player.page.goto("/rooms.html")
        player.page.click('li[data-room="public-werwolf"] button.enter')
        expect(player.page.locator("#room-title")).to_have_text("Raum Werwolf")
    bert.page.route("**/api/rooms/member/**", tunnel)
    for _ in range(100):  # the page's own polls, one a second, run into the tunnel
        if len(failed) == 3:
            break
        bert.page.wait_for_timeout(200)
    assert len(failed) == 3, failed
    anna.page.fill("#chat-text", "Wieder da?")
    anna.page.click("#chat-form button[type=submit]")
    # Anna's line is in the room (her own page shows the server's answer) before Bert's
    # page is asked to have polled it: a failure below is then Bert's polling alone.
    expect(anna.page.locator("#chat")).to_contain_text(f"{anna.name}: Wieder da?")
    expect(bert.page.locator("#chat")).to_contain_text(f"{anna.name}: Wieder da?", timeout=20_000)
    expect(bert.page.locator("#room-title")).to_have_text("Raum Werwolf")
