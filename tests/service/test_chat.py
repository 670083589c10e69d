"""Text chat (issue 3): the market place, the night room and private calls, for players without
voice. Every line is stored with the game (the event log) and reaches its audience only, over
real WebSockets: a villager never reads the night room, a call's text reaches only its two,
and a spectator reads the market place alone.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import pytest
from websockets.asyncio.client import connect

from vollmond.engine.core import Audience, AudienceKind, Viewer
from vollmond.service.policy import DurationBounds, Policy
from vollmond.store import read_events

from .support import ApiClient, Service, WsClient, hello, seated_table

SEVEN_DECK = [["evil", 2], ["seer", 1], ["filler", 4]]
POLICY = Policy(durations=DurationBounds(min_s=0.05), login_attempts_per_minute=100)
NIGHT_S = 8.0  # room for the night's lines on a loaded machine
ServiceFactory = Callable[[Policy], AbstractAsyncContextManager[Service]]


@pytest.fixture
async def chat_service(start_service: ServiceFactory) -> AsyncIterator[Service]:
    async with start_service(POLICY) as service:
        yield service


@pytest.fixture
async def made() -> AsyncIterator[list[ApiClient | WsClient]]:
    out: list[ApiClient | WsClient] = []
    yield out
    for client in out:
        await client.close()


async def _open_ws(service: Service) -> WsClient:
    """A socket the test closes (through its list of things to close)."""
    return WsClient(await connect(service.ws_url, max_size=2**20, max_queue=None))


async def _until(ws: WsClient, kind: str, code: str | None = None) -> dict[str, Any]:
    deadline = time.monotonic() + 20
    while True:
        frame = await ws.recv(max(0.01, deadline - time.monotonic()))
        if frame["type"] == kind and (code is None or frame.get("code") == code):
            return frame


async def _say(ws: WsClient, seat: int, text: str) -> dict[str, Any]:
    """Send a chat line; returns the ack or the error frame."""
    await ws.send({"type": "command", "command": {"type": "Say", "actor": seat, "text": text}})
    deadline = time.monotonic() + 20
    while True:
        frame = await ws.recv(max(0.01, deadline - time.monotonic()))
        if frame["type"] in ("ack", "error"):
            return frame


async def _command(ws: WsClient, seat: int, **command: Any) -> None:
    await ws.send({"type": "command", "command": {"actor": seat, **command}})
    frame = await _until(ws, "ack")
    assert frame["type"] == "ack"


def _chats(ws: WsClient) -> list[tuple[int, str, int, str]]:
    return [
        (f["seq"], f["params"]["room"], f["params"]["seat"], f["params"]["text"])
        for f in ws.frames
        if f["type"] == "event" and f["code"] == "chat"
    ]


async def test_chat_is_logged_and_reaches_only_its_room(
    chat_service: Service, made: list[ApiClient | WsClient]
) -> None:
    service = chat_service

    def make() -> ApiClient:
        client = ApiClient(service)
        made.append(client)
        return client

    game, _, tokens = await seated_table(
        make,
        7,
        "Chat",
        deck="custom",
        custom_roles=SEVEN_DECK,
        durations={"night_s": NIGHT_S, "morning_s": 30.0},
        calls={"enabled": True, "ring_s": 20.0},
    )
    sockets: dict[int, WsClient] = {}
    roles: dict[int, str] = {}
    for token in tokens:
        ws = await _open_ws(service)
        made.append(ws)
        welcome = await hello(ws, game, token)
        sockets[welcome["seat"]] = ws
        roles[welcome["seat"]] = welcome["view"]["me"]["role"]
    spectator = await _open_ws(service)
    made.append(spectator)
    assert (await hello(spectator, game, spectate=True))["type"] == "welcome"

    evil = sorted(s for s, r in roles.items() if r == "evil")
    village = sorted(s for s in roles if s not in evil)
    caller, callee, outsider = village[:3]

    # Night: the night room, a private call, and a villager whom nobody can hear.
    assert (await _say(sockets[evil[0]], evil[0], "Heute Nacht die Drei?"))["type"] == "ack"
    await _command(sockets[caller], caller, type="PlaceCall", callee=callee)
    await _until(sockets[callee], "event", "call_incoming")
    await _command(sockets[callee], callee, type="AnswerCall", accept=True)
    assert (await _say(sockets[caller], caller, "Ich bin die Seherin."))["type"] == "ack"
    assert (await _say(sockets[callee], callee, "Beweise es."))["type"] == "ack"
    refused = await _say(sockets[outsider], outsider, "Hallo?")
    assert refused["type"] == "error" and refused["code"] == "nobody_hears"

    # Morning: the market place, for everyone and the spectator.
    for ws in [*sockets.values(), spectator]:
        await _until(ws, "event", "morning_report")
    assert (await _say(sockets[outsider], outsider, "Guten Morgen!"))["type"] == "ack"
    for ws in [*sockets.values(), spectator]:
        while not any(room == "market" for _, room, _, _ in _chats(ws)):
            await _until(ws, "event", "chat")
        await ws.quiet(0.3)

    night_line = ("night_room", evil[0], "Heute Nacht die Drei?")
    call_lines = [("call", caller, "Ich bin die Seherin."), ("call", callee, "Beweise es.")]
    market_line = ("market", outsider, "Guten Morgen!")
    for seat, ws in sockets.items():
        lines = [line[1:] for line in _chats(ws)]
        expected = [night_line] if seat in evil else []
        expected += call_lines if seat in (caller, callee) else []
        assert lines == [*expected, market_line], f"seat {seat} ({roles[seat]})"
    assert [line[1:] for line in _chats(spectator)] == [market_line]
    errors = [f for ws in sockets.values() for f in ws.frames if f["type"] == "error"]
    assert [e["code"] for e in errors] == ["nobody_hears"]  # to the outsider only

    # Stored with the game: the log holds each line once, with the audience it was sent to.
    logged = [e for e in await read_events(service.hub.sessions, game) if e.kind == "chat"]
    assert [(e.payload["room"], e.audience) for e in logged if isinstance(e.payload, dict)] == [
        ("night_room", {"kind": "seats", "seats": evil}),
        ("call", {"kind": "seats", "seats": sorted((caller, callee))}),
        ("call", {"kind": "seats", "seats": sorted((caller, callee))}),
        ("market", {"kind": "public", "seats": []}),
    ]
    for seat, ws in sockets.items():
        visible = [e.seq for e in logged if _audience(e.audience).includes(Viewer.player(seat))]
        assert [line[0] for line in _chats(ws)] == visible


def _audience(raw: Any) -> Audience:
    return Audience(AudienceKind(raw["kind"]), frozenset(raw["seats"]))
