"""Issue 12: a waiting round without seated players is called off after
`[web] empty_lobby_grace_s`; a round with a player waits on."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Callable

import pytest

from vollmond.service.config import Settings
from vollmond.service.policy import Policy
from vollmond.settings import WebSettings

from .support import ApiClient, Service, running_service
from .wsplay import FAST_POLICY

GRACE_S = 0.4


@pytest.fixture
async def sweeping(
    settings_for: Callable[[Policy], Settings], database: tuple[str, str | None]
) -> AsyncIterator[Service]:
    web = WebSettings(empty_lobby_grace_s=GRACE_S)
    settings = dataclasses.replace(settings_for(FAST_POLICY), web=web)
    async with running_service(database[0], settings) as running:
        yield running


async def status(client: ApiClient, game: str) -> str:
    return str((await client.get(f"/api/games/{game}")).json()["game"]["status"])


async def test_an_abandoned_lobby_closes_and_a_waiting_one_stays(sweeping: Service) -> None:
    host, other = ApiClient(sweeping), ApiClient(sweeping)
    try:
        await host.signup("Verlasser")
        await other.signup("Wartender")
        abandoned = await host.found(size=5)
        waiting = await other.found(size=5)
        left = await host.post(
            f"/api/games/{abandoned['game']}/leave", {"token": abandoned["token"]}
        )
        assert left.status_code == 200
        for _ in range(100):  # the sweeper runs every GRACE_S / 2
            if await status(host, abandoned["game"]) == "aborted":
                break
            await asyncio.sleep(0.1)
        assert await status(host, abandoned["game"]) == "aborted"
        listed = {g["id"] for g in (await host.get("/api/games")).json()["games"]}
        assert abandoned["game"] not in listed
        assert waiting["game"] in listed
        assert await status(other, waiting["game"]) == "lobby"
    finally:
        await host.close()
        await other.close()
