"""ICE as the operator sets it: the UDP port range of the service's candidates, and TURN with
time-limited credentials (coturn's ``use-auth-secret``) handed to the page.

Real service (uvicorn, SQLite), real WebSocket, real aiortc peers; the credential is checked by
recomputing coturn's HMAC, the ports by reading the candidates the service really answers with.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect

from tests.service.support import running_service
from tests.voice.client import open_voice
from tests.voice.test_signalling import game_with_tokens
from vollmond.service.config import Settings, read_config
from vollmond.settings.toml import ConfigError
from vollmond.settings.voice import VoiceSettings
from vollmond.voice.webrtc import rtc_configuration

SECRET = "a-shared-secret-for-coturn"
TURN = ("turn:turn.example.org:3478?transport=udp", "turns:turn.example.org:5349")


def coturn_accepts(server: dict[str, Any], now: float) -> bool:
    """What coturn with ``use-auth-secret`` and ``static-auth-secret=SECRET`` checks."""
    username: str = server["username"]
    expected = base64.b64encode(
        hmac.new(SECRET.encode(), username.encode(), hashlib.sha1).digest()
    ).decode()
    expiry = int(username.split(":", 1)[0])
    return hmac.compare_digest(expected, server["credential"]) and expiry > now


async def test_the_page_gets_turn_servers_with_a_fresh_time_limited_credential(
    tmp_path: Path,
) -> None:
    stun = {"urls": ["stun:stun.example.org:3478"]}
    voice = read_config(_toml(tmp_path, stun))["voice"]
    assert isinstance(voice, VoiceSettings)
    settings = Settings(data_dir=tmp_path / "data", voice=voice)
    async with running_service("sqlite", settings) as service:
        game, tokens = await game_with_tokens(service)
        async with connect(service.ws_url) as ws:
            await ws.send(json.dumps({"type": "hello", "game": game, "token": tokens[1]}))
            welcome = json.loads(await ws.recv())
        now = time.time()
        servers = welcome["voice"]["ice_servers"]
        assert servers[0] == stun  # the operator's own list first, as it is
        turn = servers[1]
        assert turn["urls"] == list(TURN)
        assert turn["username"].endswith(f":{game}.2")  # one user per seat
        assert coturn_accepts(turn, now)
        assert int(turn["username"].split(":")[0]) <= now + 600 + 1  # turn_ttl_s
        credential = turn["credential"]
        forged = ("y" if credential[0] == "x" else "x") + credential[1:]  # one character off
        assert not coturn_accepts({**turn, "credential": forged}, now)
        assert not coturn_accepts(turn, now + 601)  # expired: coturn refuses it
        # The service's own peer asks the same TURN servers with a credential of its own.
        assert service.app is not None
        own = rtc_configuration(service.app.state.voice).iceServers
        assert own is not None
        assert [s.urls for s in own] == [stun["urls"], list(TURN)]
        assert str(own[1].username).endswith(":vollmond-service")
        assert coturn_accepts({"username": own[1].username, "credential": own[1].credential}, now)


async def test_the_services_candidates_bind_in_the_operators_port_range(tmp_path: Path) -> None:
    voice = VoiceSettings(port_min=41000, port_max=41019)
    async with running_service("sqlite", Settings(data_dir=tmp_path / "data", voice=voice)) as svc:
        game, tokens = await game_with_tokens(svc)
        peers = [await open_voice(svc.ws_url, game, token, None) for token in tokens[:3]]
        try:
            ports = []
            for peer in peers:  # each connected (open_voice waits for it)
                answer = next(f for f in peer.frames if f["type"] == "voice_answer")
                ports += [
                    int(line.split()[5])
                    for line in answer["sdp"].split("\r\n")
                    if line.startswith("a=candidate:")
                ]
            assert ports
            assert all(41000 <= port <= 41019 for port in ports), ports
        finally:
            for peer in peers:
                await peer.close()


def _toml(tmp_path: Path, stun: dict[str, Any]) -> Path:
    path = tmp_path / "vollmond.toml"
    path.write_text(
        "[voice]\n"
        f"turn_urls = {json.dumps(list(TURN))}\n"
        f'turn_secret = "{SECRET}"\n'
        "turn_ttl_s = 600\n\n"
        "[[voice.ice_servers]]\n"
        f"urls = {json.dumps(stun['urls'])}\n"
    )
    return path


@pytest.mark.parametrize(
    "table",
    [
        'turn_urls = ["turn:t.example.org"]',  # without its secret
        'turn_secret = "s"',  # without a server
        'turn_urls = ["stun:t.example.org"]\nturn_secret = "s"',  # not a TURN URL
        "port_min = 40000",  # half a range
        "port_min = 500\nport_max = 600",  # below 1024
        "port_min = 41000\nport_max = 40000",  # upside down
        'turn_urls = ["turn:t.example.org"]\nturn_secret = "s"\nturn_ttl_s = 0',
    ],
)
def test_the_operator_file_refuses_a_broken_ice_setting(tmp_path: Path, table: str) -> None:
    path = tmp_path / "vollmond.toml"
    path.write_text(f"[voice]\n{table}\n")
    with pytest.raises(ConfigError):
        read_config(path)
