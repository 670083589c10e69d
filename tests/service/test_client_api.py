"""The browser client's endpoints (web/client_api.py) over real HTTP and WebSockets: world
texts, the phase clock, the per-seat history behind the replay (no secret of another seat in
it), the operator alarm (O1). Linking a phone: test_phone_link.py.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from vollmond.worlds import ROLE_KEYS

from .support import ApiClient, Service, WsClient, hello, open_ws, seated_table

FOUR_DECK = [["evil", 1], ["seer", 1], ["filler", 2]]
NIGHT_S = 120.0


async def _until(ws: WsClient, kind: str) -> dict[str, Any]:
    deadline = time.monotonic() + 20
    while True:
        frame = await ws.recv(max(0.01, deadline - time.monotonic()))
        if frame["type"] == kind:
            return frame


async def _seated(
    api: Callable[[], ApiClient], service: Service
) -> tuple[str, list[ApiClient], dict[str, str], dict[str, WsClient]]:
    """A running four-seat game; tokens, sockets and seats by role ("evil", "seer", "filler")."""
    game, clients, tokens = await seated_table(
        api,
        4,
        f"Api{time.monotonic_ns() % 100000}_",
        deck="custom",
        custom_roles=FOUR_DECK,
        durations={"night_s": NIGHT_S},
    )
    by_role: dict[str, str] = {}
    sockets: dict[str, WsClient] = {}
    for token in tokens:
        ws = await open_ws(service)
        welcome = await hello(ws, game, token)
        role = welcome["view"]["me"]["role"]
        by_role[role] = token
        sockets[role] = ws
    return game, clients, by_role, sockets


async def test_world_text_names_and_explains_every_role(api: Callable[[], ApiClient]) -> None:
    client = api()
    response = await client.get("/api/worlds/werwolf/text", lang="en")
    assert response.status_code == 200
    data = response.json()
    assert data["roles"]["seer"] == "Seer"
    assert data["night_room"] == "Wolf Den"
    assert set(data["help"]) == set(ROLE_KEYS)
    assert all(data["help"][key] for key in ROLE_KEYS)
    german = (await client.get("/api/worlds/werwolf/text", lang="de")).json()
    assert german["roles"]["seer"] == "Seherin"
    assert (await client.get("/api/worlds/atlantis/text")).status_code == 404


@pytest.mark.rule("X6")
async def test_history_holds_only_what_the_seat_may_see(
    api: Callable[[], ApiClient], service: Service
) -> None:
    game, clients, tokens, sockets = await _seated(api, service)
    try:
        secret = "Heute die Seherin"
        await sockets["evil"].send(
            {"type": "command", "id": 1, "command": {"type": "Say", "text": secret}}
        )
        assert (await _until(sockets["evil"], "ack"))["id"] == 1

        async def history(token: str | None) -> list[dict[str, Any]]:
            body: dict[str, Any] = {"lang": "de"}
            if token is not None:
                body["token"] = token
            response = await clients[0].post(f"/api/games/{game}/history", body)
            assert response.status_code == 200, response.text
            events: list[dict[str, Any]] = response.json()["events"]
            return events

        evil = await history(tokens["evil"])
        assert any(e["code"] == "chat" and e["params"]["text"] == secret for e in evil)
        for viewer in (tokens["seer"], tokens["filler"], None):
            events = await history(viewer)
            assert secret not in str(events)
            assert not any(e["code"] in ("team_revealed", "evil_vote_cast") for e in events)
            assigned = [e["params"]["role"] for e in events if e["code"] == "role_assigned"]
            assert assigned == (
                [] if viewer is None else [next(r for r, t in tokens.items() if t == viewer)]
            )
        assert all(e["text"] for e in evil)
        bad = await clients[0].post(f"/api/games/{game}/history", {"token": "nope"})
        assert bad.status_code == 403
    finally:
        for ws in sockets.values():
            await ws.close()


async def test_clock_tells_the_seconds_left(api: Callable[[], ApiClient], service: Service) -> None:
    game, clients, _, sockets = await _seated(api, service)
    try:
        clock = (await clients[0].get(f"/api/games/{game}/clock")).json()
        assert clock["phase"] == "night"
        assert 0 < clock["remaining"] <= NIGHT_S
        assert (await clients[0].get("/api/games/nothing/clock")).status_code == 404
    finally:
        for ws in sockets.values():
            await ws.close()


@pytest.mark.rule("O1")
async def test_operator_alarm_needs_a_seat_and_a_known_reason(
    api: Callable[[], ApiClient], service: Service
) -> None:
    game, clients, tokens, sockets = await _seated(api, service)
    try:
        path = f"/api/games/{game}/operator"
        ok = await clients[0].post(path, {"token": tokens["seer"], "reason": 1, "player": 2})
        assert ok.status_code == 200
        assert {k: ok.json()[k] for k in ("ok", "reason", "player")} == {
            "ok": True,
            "reason": 1,
            "player": 2,
        }
        plain = await clients[0].post(path, {"token": tokens["seer"]})
        assert plain.status_code == 200
        assert (await clients[0].post(path, {"token": "x"})).status_code == 403
        bad_reason = {"token": tokens["seer"], "reason": 5}
        assert (await clients[0].post(path, bad_reason)).status_code == 400
        bad_player = {"token": tokens["seer"], "player": 99}
        assert (await clients[0].post(path, bad_player)).status_code == 400
    finally:
        for ws in sockets.values():
            await ws.close()
