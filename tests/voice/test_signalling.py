"""Voice signalling at the edge: bad offers and candidates, limits, the operator's [voice] table.

Real service (uvicorn, SQLite), real WebSocket and aiortc clients; nothing mocked.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from tests.service.support import Service, running_service
from tests.voice.client import open_voice
from vollmond.engine.standard import GameOptions
from vollmond.service.config import Settings, read_config
from vollmond.settings.toml import ConfigError
from vollmond.settings.voice import IceServer, VoiceSettings
from vollmond.voice.browser import BrowserVoice
from vollmond.voice.rooms import VoiceRooms


@pytest.fixture
async def limited(tmp_path: Path) -> AsyncIterator[Service]:
    settings = Settings(data_dir=tmp_path / "data", voice=VoiceSettings(max_peers=1))
    async with running_service("sqlite", settings) as service:
        yield service


async def game_with_tokens(service: Service, players: int = 5) -> tuple[str, list[str]]:
    hub = service.hub
    founded = await hub.found(
        GameOptions(players=players), private=False, host_account_id=None, host_name="p1"
    )
    assert founded.token is not None
    tokens = [founded.token]
    for i in range(2, players + 1):
        tokens.append((await hub.join(founded.game.id, account_id=None, name=f"p{i}")).token)
    return founded.game.id, tokens


async def ask(ws: ClientConnection, message: dict[str, Any] | str) -> dict[str, Any]:
    await ws.send(message if isinstance(message, str) else json.dumps(message))
    while True:
        frame: dict[str, Any] = json.loads(await ws.recv())
        if frame["type"] in ("error", "voice_answer"):
            return frame


async def test_bad_signalling_is_answered_with_a_code_and_the_socket_lives(
    limited: Service,
) -> None:
    game, tokens = await game_with_tokens(limited)
    async with connect(limited.ws_url) as ws:
        assert (await ask(ws, {"type": "voice_offer", "sdp": "v=0"}))["code"] == "hello_first"
        await ws.send(json.dumps({"type": "hello", "game": game, "token": tokens[0]}))
        ice = {"type": "voice_ice", "candidate": "candidate:1 1 udp 1 10.0.0.1 9 typ host"}
        assert (await ask(ws, ice))["code"] == "voice_not_open"
        assert (await ask(ws, {"type": "voice_offer", "sdp": "nonsense"}))["code"] == "bad_offer"
        big = {"type": "ping", "pad": "x" * 5000}
        assert (await ask(ws, big))["code"] == "too_large"
        huge = {"type": "voice_offer", "sdp": "x" * 8050}  # under the 8 KiB frame limit
        assert (await ask(ws, huge))["code"] == "too_large"
        assert limited.app is not None
        assert not limited.app.state.voice.peers  # nothing was left open
        await ws.send(json.dumps({"type": "ping"}))
        assert json.loads(await ws.recv())["type"] == "pong"


async def test_beyond_max_peers_an_offer_is_refused(limited: Service) -> None:
    game, tokens = await game_with_tokens(limited)
    first = await open_voice(limited.ws_url, game, tokens[0], None)
    try:
        async with connect(limited.ws_url) as ws:
            await ws.send(json.dumps({"type": "hello", "game": game, "token": tokens[1]}))
            offer = first.pc.localDescription.sdp  # any valid offer: refused before it is read
            frame = await ask(ws, {"type": "voice_offer", "sdp": offer})
            assert frame["code"] == "voice_full"
            assert "Browser" in frame["message"]  # the catalogue's sentence, in German
    finally:
        await first.close()


async def test_a_service_without_browser_voice_says_so(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", voice=VoiceSettings(enabled=False))
    async with running_service("sqlite", settings) as service:
        game, tokens = await game_with_tokens(service)
        async with connect(service.ws_url) as ws:
            await ws.send(json.dumps({"type": "hello", "game": game, "token": tokens[0]}))
            welcome = json.loads(await ws.recv())
            assert welcome["voice"]["enabled"] is False
            frame = await ask(ws, {"type": "voice_offer", "sdp": "v=0"})
            assert frame["code"] == "voice_disabled"


def test_the_operator_file_sets_address_and_ice_servers(tmp_path: Path) -> None:
    path = tmp_path / "vollmond.toml"
    path.write_text(
        '[voice]\npublic_address = "203.0.113.7"\n\n[[voice.ice_servers]]\n'
        'urls = ["turn:turn.example.org:3478"]\nusername = "v"\ncredential = "s"\n'
    )
    voice = read_config(path)["voice"]
    assert voice == VoiceSettings(
        public_address="203.0.113.7",
        ice_servers=(IceServer(("turn:turn.example.org:3478",), "v", "s"),),
    )
    path.write_text('[voice]\npublic_address = "not-an-address"\n')
    with pytest.raises(ConfigError):
        read_config(path)
    path.write_text('[[voice.ice_servers]]\nurls = ["http://x"]\n')
    with pytest.raises(ConfigError):
        read_config(path)


def test_a_public_address_is_offered_beside_every_host_candidate() -> None:
    voice = BrowserVoice(VoiceRooms(_NoGames()), VoiceSettings(public_address="203.0.113.7"))
    answer = (
        "v=0\r\na=candidate:abc 1 udp 2130706431 192.0.2.2 41000 typ host\r\na=end-of-candidates"
    )
    published = voice.publish(answer).split("\r\n")
    assert "a=candidate:abc 1 udp 2130706431 192.0.2.2 41000 typ host" in published
    assert (
        "a=candidate:natabc 1 udp 2130706431 203.0.113.7 41000 typ srflx raddr 192.0.2.2 "
        "rport 41000"
    ) in published
    assert BrowserVoice(VoiceRooms(_NoGames())).publish(answer) == answer


class _NoGames:
    actors: dict[str, Any] = {}  # noqa: RUF012 - a stand-in hub without games
