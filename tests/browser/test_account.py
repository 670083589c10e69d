"""Issue 10: the account's standing on the web — karma with its history and reasons, premium
and credit — as an operator's grants (the real `vollmond admin` command against the running
service's data directory) make it, in German and in English."""

from __future__ import annotations

import asyncio
import secrets
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from vollmond.store import create_phone_identity, karma_change
from vollmond.store.db import create_engine, make_sessionmaker, resolve_database_url
from vollmond.store.owners import Owner

from .players import Player

pytestmark = pytest.mark.slow

VOLLMOND = str(Path(sys.executable).with_name("vollmond"))  # the operators' command


def admin(server_data: Path, command: list[str], *args: str) -> None:
    """`vollmond admin COMMAND --data-dir DIR ARGS...` against the test service's data."""
    subprocess.run(
        [VOLLMOND, "admin", *command, "--data-dir", str(server_data), *args],
        check=True,
        capture_output=True,
        timeout=60,
    )


def test_karma_premium_and_credit_show_with_their_history(
    browser: Browser, server: str, server_data: Path
) -> None:
    tag = secrets.token_hex(3)
    player = Player.open(browser, server, f"Konto{tag}")
    try:
        player.signup()
        page = player.page
        expect(page.locator("#standing-summary")).to_have_text(
            "Karma: 0 · Premium: nein · Guthaben: 0"
        )
        page.click("#karma-history-button")
        expect(page.locator("#karma-history")).to_have_text("Noch keine Buchungen.")

        boss = f"Chef{tag}"
        admin(server_data, ["create-admin"], boss, "--password", "mondschein-42-chef")
        name = f"Konto{tag}"
        for kind, *grant in (
            ["karma", "--reason", "Turnierpreis", name, "12"],
            ["karma", "--reason", "Zu laut", name, "--", "-2"],
            ["premium", "--reason", "Dank", "--days", "3", name],
            ["credit", "--reason", "Gutschein", name, "5"],
        ):
            admin(server_data, ["grant", kind], "--by", boss, *grant)
        page.reload()
        expect(page.locator("#standing-summary")).to_have_text(
            "Karma: 10 · Premium: ja · Guthaben: 5"
        )
        page.click("#karma-history-button")
        rows = page.locator("#karma-history li")
        expect(rows).to_have_count(2)
        expect(rows.nth(0)).to_contain_text("-2 · Buchung der Betreiber: Zu laut")
        expect(rows.nth(1)).to_contain_text("+12 · Buchung der Betreiber: Turnierpreis")
        page.click("#lang-button")
        expect(page.locator("#standing-summary")).to_have_text(
            "Karma: 10 · Premium: yes · Credit: 5"
        )
        player.assert_no_script_errors()
    finally:
        player.close()


def _phone_only_with_karma(server_data: Path, pin: str, karma: int) -> int:
    """A phone ID made by keypad (no account) that earned karma, in the service's database."""

    async def make() -> int:
        engine = create_engine(resolve_database_url(server_data, environ={}))
        try:
            sessions = make_sessionmaker(engine)
            identity = await create_phone_identity(sessions, pin=pin)
            await karma_change(sessions, Owner.phone(identity.id), karma, "game_won")
            return identity.id
        finally:
            await engine.dispose()

    # Playwright's sync API runs a loop in this thread: the store's own loop gets another one.
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, make()).result(timeout=60)


def test_a_phone_id_without_account_is_taken_over_with_its_karma(
    browser: Browser, server: str, server_data: Path
) -> None:
    """Issue 10: "Telefon-Kennung übernehmen" with the phone ID's PIN moves its karma into the
    account once; the history names the move."""
    tag = secrets.token_hex(3)
    phone_id = _phone_only_with_karma(server_data, "9753", 17)
    player = Player.open(browser, server, f"Kennung{tag}")
    try:
        player.signup()
        page = player.page
        page.click("text=Telefon verknüpfen")
        page.fill("#phone-take-form input[name=link_id]", str(phone_id))
        page.fill("#phone-take-form input[name=link_pin]", "1111")
        page.click("#phone-take-form button")
        expect(page.get_by_text("Telefon-Kennung und PIN passen nicht zusammen.")).to_be_visible()
        page.fill("#phone-take-form input[name=link_id]", str(phone_id))
        page.fill("#phone-take-form input[name=link_pin]", "9753")
        page.click("#phone-take-form button")
        expect(
            page.get_by_text(f"Telefon-Kennung {phone_id} gehört jetzt zu deinem Konto.")
        ).to_be_visible()
        page.reload()
        expect(page.locator("#standing-summary")).to_have_text(
            "Karma: 17 · Premium: nein · Guthaben: 0"
        )
        page.click("#karma-history-button")
        rows = page.locator("#karma-history li")
        expect(rows).to_have_count(1)
        expect(rows.nth(0)).to_contain_text("+17 · Telefon-Kennung ins Konto übernommen")
        player.assert_no_script_errors()
    finally:
        player.close()
