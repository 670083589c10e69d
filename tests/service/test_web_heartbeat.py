"""Issue 12: the heartbeat. A client that has sent a `ping` and then falls silent (a half-open
connection: a phone that lost its network) is closed by the server after
`ws_heartbeat_timeout_s`, and its seat shows absent; one that keeps pinging stays.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import AsyncIterator, Callable

import pytest
from websockets.exceptions import ConnectionClosed

from vollmond.service.config import Settings
from vollmond.service.policy import Policy
from vollmond.service.web.connection import HEARTBEAT_LOST
from vollmond.settings import WebSettings

from .support import Service, hello, running_service, ws_client
from .wsplay import FAST_POLICY, FOUR_DECK, SLOW, table

TIMEOUT_S = 0.6


@pytest.fixture
async def beating(
    settings_for: Callable[[Policy], Settings], database: tuple[str, str | None]
) -> AsyncIterator[Service]:
    web = WebSettings(ws_heartbeat_timeout_s=TIMEOUT_S)
    settings = dataclasses.replace(settings_for(FAST_POLICY), web=web)
    async with running_service(database[0], settings) as running:
        yield running


async def test_a_silent_client_after_a_ping_is_closed(beating: Service) -> None:
    game, tokens = await table(beating, 4, FOUR_DECK, SLOW, calls={"enabled": False})
    async with ws_client(beating) as client:
        assert (await hello(client, game, tokens[0]))["type"] == "welcome"
        await client.send({"type": "ping"})
        await client.expect("pong")
        started = time.monotonic()
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                await client.recv(timeout=5)
        waited = time.monotonic() - started
        assert closed.value.rcvd is not None and closed.value.rcvd.code == HEARTBEAT_LOST
        assert TIMEOUT_S * 0.9 <= waited < TIMEOUT_S + 2


async def test_a_pinging_client_stays_and_one_that_never_pinged_is_not_timed(
    beating: Service,
) -> None:
    game, tokens = await table(beating, 4, FOUR_DECK, SLOW, calls={"enabled": False})
    async with ws_client(beating) as pinging, ws_client(beating) as plain:
        assert (await hello(pinging, game, tokens[0]))["type"] == "welcome"
        assert (await hello(plain, game, tokens[1]))["type"] == "welcome"
        for _ in range(6):  # three timeouts' worth of time, pinging at half the timeout
            await pinging.send({"type": "ping"})
            await pinging.expect("pong")
            await asyncio.sleep(TIMEOUT_S / 2)
        # Both still answer: the heartbeat kept one alive, the other never promised one.
        for client in (pinging, plain):
            await client.send({"type": "ping"})
            assert (await client.expect("pong"))["type"] == "pong"
