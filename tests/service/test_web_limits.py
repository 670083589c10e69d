"""Issue 8 (web): operator alarms and chat per seat, WebSockets per address — each limited by
a setting and refused with a code and a sentence the client shows.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator, Callable

import httpx
import pytest
from websockets.exceptions import ConnectionClosed

from vollmond.i18n import text
from vollmond.service.config import Settings
from vollmond.service.policy import Policy
from vollmond.settings import WebSettings
from vollmond.worlds import get_world

from .support import Service, hello, open_ws, running_service, ws_client
from .wsplay import FAST_POLICY, FOUR_DECK, SLOW, table

LIMITS = WebSettings(
    ws_connections_per_address=3,
    chat_messages_per_seat_per_minute=3,
)


@pytest.fixture
async def limited(
    settings_for: Callable[[Policy], Settings], database: tuple[str, str | None]
) -> AsyncIterator[Service]:
    settings = dataclasses.replace(settings_for(FAST_POLICY), web=LIMITS)
    async with running_service(database[0], settings) as running:
        yield running


async def until_connected(service: Service, count: int) -> None:
    """Wait until the server's gauge of open sockets shows `count`."""
    async with httpx.AsyncClient(base_url=service.base_url) as http:
        for _ in range(500):
            metrics = (await http.get("/metrics")).text
            if f"vollmond_players_connected {float(count)}" in metrics:
                return
            await asyncio.sleep(0.01)
    raise AssertionError(f"the server did not see {count} sockets")


async def test_chat_per_seat_is_limited_across_sockets(limited: Service) -> None:
    game, tokens = await table(limited, 4, FOUR_DECK, SLOW, calls={"enabled": False})
    async with ws_client(limited) as first, ws_client(limited) as second:
        assert (await hello(first, game, tokens[0], lang="en"))["type"] == "welcome"
        assert (await hello(second, game, tokens[0], lang="en"))["type"] == "welcome"
        codes = []
        for i in range(LIMITS.chat_messages_per_seat_per_minute + 2):
            sender = first if i % 2 else second  # a second tab does not double the budget
            await sender.send(
                {"type": "command", "id": i, "command": {"type": "Say", "text": f"hallo {i}"}}
            )
            while True:
                frame = await sender.recv()
                if frame["type"] in ("ack", "error") and frame.get("id") == i:
                    codes.append(frame["type"] if frame["type"] == "ack" else frame["code"])
                    break
        limit = LIMITS.chat_messages_per_seat_per_minute
        assert "chat_rate_limited" not in codes[:limit], codes
        assert codes[limit:] == ["chat_rate_limited"] * 2, codes
        refusal = [f for f in first.frames + second.frames if f.get("code") == "chat_rate_limited"]
        assert refusal[0]["message"] == text("web.chat_rate_limited", "en", get_world("werwolf"))
    # Another seat may still talk.
    async with ws_client(limited) as other:
        assert (await hello(other, game, tokens[1]))["type"] == "welcome"
        await other.send({"type": "command", "id": 1, "command": {"type": "Say", "text": "hi"}})
        while True:
            frame = await other.recv()
            if frame.get("id") == 1:
                assert frame.get("code") != "chat_rate_limited", frame
                break


async def test_websockets_per_address_are_limited(limited: Service) -> None:
    game, tokens = await table(limited, 4, FOUR_DECK, SLOW, calls={"enabled": False})
    sockets = [await open_ws(limited) for _ in range(LIMITS.ws_connections_per_address)]
    try:
        for ws in sockets:
            await ws.send({"type": "ping"})
            await ws.expect("pong")
        extra = await open_ws(limited)
        frame = await extra.recv()
        assert frame["type"] == "error" and frame["code"] == "too_many_connections"
        assert frame["message"] == text("web.too_many_connections", "de", get_world("werwolf"))
        with pytest.raises(ConnectionClosed):
            await extra.recv()
        # Closing one makes room again (once the server has seen it go).
        await sockets.pop().close()
        await until_connected(limited, LIMITS.ws_connections_per_address - 1)
        async with ws_client(limited) as again:
            assert (await hello(again, game, tokens[0]))["type"] == "welcome"
    finally:
        for ws in sockets:
            with contextlib.suppress(ConnectionClosed):
                await ws.close()
