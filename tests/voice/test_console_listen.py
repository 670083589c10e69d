"""A moderator listens in from the console (issue 9, O1), on real WebRTC: an aiortc peer
opened the way the console page opens it (the staff account's cookie, ``hello`` with
``operator: true``, a receive-only offer) hears the market place by day and nothing of the
night room at night; it is refused before the moderator took an alarm of that game. Then the
console page itself in Chromium: its "Listen" button connects, hears nothing at night and the
market place by day.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.async_api import Browser, expect
from websockets.asyncio.client import connect

from tests.phone.e2e.support import level_at, wait_until
from tests.service.support import ApiClient, Service, running_service
from tests.voice.client import VoiceClient, listen_on, open_voice
from tests.voice.test_chromium_voice import RESUME_MS, inbound_energy
from vollmond.engine.core import Rejection
from vollmond.engine.standard import GameOptions
from vollmond.engine.standard.commands import PhaseTimeout
from vollmond.engine.standard.queries import night_room
from vollmond.engine.standard.types import Phase
from vollmond.moderation import Caller
from vollmond.phone.media import Int16Array
from vollmond.service.config import Settings
from vollmond.store.accounts import set_role
from vollmond.store.models import Role

TONE = 1000.0
HEARD = 1500.0
SILENT = 60.0
LISTEN_S = 1.5


@pytest.fixture
async def service(tmp_path: Path) -> AsyncIterator[Service]:
    async with running_service("sqlite", Settings(data_dir=tmp_path / "data")) as running:
        yield running


async def listen(listener: VoiceClient, seconds: float = LISTEN_S) -> Int16Array:
    mark = listener.mark()
    await wait_until(lambda: listener.mark() - mark >= int(seconds * 50), 15)
    return listener.since(mark)


async def refused(service: Service, game: str, cookie: str) -> str:
    """The error code a console's `operator` hello gets (or "welcome")."""
    async with connect(service.ws_url, additional_headers={"Cookie": cookie}) as ws:
        await ws.send(json.dumps({"type": "hello", "game": game, "operator": True}))
        answer = json.loads(await ws.recv())
        return str(answer.get("code", answer["type"]))


@dataclass
class Table:
    """A running eight-seat game at night with an alarm the moderator `mo` has taken."""

    game: str
    tokens: list[str]
    evil: tuple[int, int]
    mo: ApiClient
    cookie: str


async def table_with_taken_alarm(service: Service) -> Table:
    enforcer = service.enforcer
    assert enforcer is not None
    moderation = enforcer.moderation
    mo = ApiClient(service)
    await mo.signup("Mo")
    assert mo.account_id is not None
    await set_role(service.hub.sessions, mo.account_id, Role.MODERATOR)
    cookie = "; ".join(f"{k}={v}" for k, v in mo.http.cookies.items())
    hub = service.hub
    founded = await hub.found(
        GameOptions(players=8), private=False, host_account_id=None, host_name="p1"
    )
    assert founded.token is not None
    game = founded.game.id
    tokens = [founded.token]
    for i in range(2, 9):
        tokens.append((await hub.join(game, account_id=None, name=f"p{i}")).token)
    state = hub.actors[game].state
    assert state is not None and state.phase is Phase.NIGHT
    speaker, partner = sorted(night_room(state))
    alarm = await moderation.raise_alarm(
        game_id=game, round=1, phase="night", caller=Caller(house=3), reason=2
    )
    assert await refused(service, game, cookie) == "not_listening"  # not taken yet
    await moderation.take(alarm.id, by=mo.account_id)
    return Table(game, tokens, (speaker, partner), mo, cookie)


async def to_day(service: Service, game: str) -> None:
    actor = service.hub.actors[game]
    while actor.state is not None and actor.state.phase is not Phase.DAY:
        outcome = await service.hub.submit(game, PhaseTimeout(actor.state.phase_seq))
        assert not isinstance(outcome, Rejection), outcome


@pytest.mark.rule("O1", "X6", "N1")
async def test_the_console_hears_the_market_by_day_and_no_night_room(service: Service) -> None:
    table = await table_with_taken_alarm(service)
    game, tokens = table.game, table.tokens
    speaker, partner = table.evil
    evil = await open_voice(service.ws_url, game, tokens[speaker - 1], TONE)
    accomplice = await open_voice(service.ws_url, game, tokens[partner - 1], None)
    console = await open_voice(service.ws_url, game, None, cookie=table.cookie, operator=True)
    clients = (evil, accomplice, console)
    try:
        for client in clients:
            await listen_on(client)
        # At night the evil speak in their night room: the accomplice hears it, the console not.
        await wait_until(lambda: level_at(accomplice.recording()[-800:], TONE) > HEARD, 20)
        night = await listen(console)
        assert service.hub.actors[game].state.phase is Phase.NIGHT  # type: ignore[union-attr]
        assert len(night) >= LISTEN_S * 8000
        assert level_at(night, TONE) < SILENT, "the console heard the night room"

        await to_day(service, game)
        # By day the same voice is on the market place, and the console hears it.
        await wait_until(lambda: level_at(console.recording()[-800:], TONE) > HEARD, 20)
        assert level_at(await listen(console), TONE) > HEARD
    finally:
        for client in clients:
            await client.close()
        await table.mo.close()


@pytest.mark.slow
@pytest.mark.rule("O1", "N1")
async def test_the_console_page_listens_in_chromium(service: Service, chromium: Browser) -> None:
    table = await table_with_taken_alarm(service)
    game, tokens = table.game, table.tokens
    speaker, partner = table.evil
    evil = await open_voice(service.ws_url, game, tokens[speaker - 1], TONE)
    accomplice = await open_voice(service.ws_url, game, tokens[partner - 1], None)
    base = service.base_url
    context = await chromium.new_context(base_url=base, locale="de-DE")
    await context.add_cookies(
        [{"name": k, "value": v, "url": base} for k, v in table.mo.http.cookies.items()]
    )
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        for client in (evil, accomplice):
            await listen_on(client)
        await page.goto(f"/mod.html#game/{game}")
        await page.click("#listen-start")
        voice = page.locator("#voice")
        await expect(voice).to_have_attribute("data-state", "connected", timeout=RESUME_MS)
        await expect(voice).to_have_attribute("data-mic", "none")  # listen-only
        await wait_until(lambda: level_at(accomplice.recording()[-800:], TONE) > HEARD, 20)
        await asyncio.sleep(LISTEN_S)
        assert await inbound_energy(page) < 1e-4  # nothing of the night room reaches the page
        await to_day(service, game)
        deadline = asyncio.get_running_loop().time() + RESUME_MS / 1000
        while await inbound_energy(page) <= 0.01:  # the market place (the evil tone) by day
            assert asyncio.get_running_loop().time() < deadline, "the market was not heard"
            await asyncio.sleep(0.1)
        assert not errors, errors
    finally:
        await context.close()
        for client in (evil, accomplice):
            await client.close()
        await table.mo.close()
