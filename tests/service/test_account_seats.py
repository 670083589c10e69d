"""Issue 12: a seat belongs to the account. `GET /api/my-games` lists the signed-in account's
seats in games not yet finished, and a socket that says hello with `account: true` takes that
seat by the session cookie alone; without a cookie, or from a page of another site, it gets
`no_account_seat`."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from websockets.asyncio.client import connect

from .support import ApiClient, Service

SESSION_COOKIE = "vollmond_session"


async def seated_game(api: Callable[[], ApiClient], size: int = 4) -> tuple[str, list[ApiClient]]:
    players = []
    for index in range(size):
        client = api()
        await client.signup(f"Sitz{index}{id(client) % 100000}")
        players.append(client)
    founded = await players[0].found(size=size)
    for client in players[1:]:
        await client.join(founded["game"])
    return str(founded["game"]), players


async def account_hello(service: Service, game: str, headers: dict[str, str]) -> dict[str, Any]:
    async with connect(service.ws_url, additional_headers=headers) as ws:
        await ws.send(json.dumps({"type": "hello", "game": game, "account": True}))
        while True:
            frame: dict[str, Any] = json.loads(await ws.recv())
            if frame["type"] in ("welcome", "error"):
                return frame


async def test_my_games_lists_the_accounts_running_seat(
    api: Callable[[], ApiClient], service: Service
) -> None:
    game, players = await seated_game(api)
    listed = (await players[2].get("/api/my-games")).json()["games"]
    assert [(g["game"], g["status"]) for g in listed] == [(game, "running")]
    assert listed[0]["house"] is not None
    assert (await api().get("/api/my-games")).status_code == 401


async def test_hello_by_account_takes_the_seat_only_with_the_cookie_of_this_site(
    api: Callable[[], ApiClient], service: Service
) -> None:
    game, players = await seated_game(api)
    me = players[1]
    house = (await me.get("/api/my-games")).json()["games"][0]["house"]
    cookie = f"{SESSION_COOKIE}={me.http.cookies[SESSION_COOKIE]}"
    host = service.base_url.split("//", 1)[1]

    welcome = await account_hello(service, game, {"Cookie": cookie, "Origin": f"http://{host}"})
    assert welcome["type"] == "welcome" and welcome["seat"] == house
    assert welcome["view"]["me"]["seat"] == house

    foreign = await account_hello(service, game, {"Cookie": cookie, "Origin": "http://evil.test"})
    assert foreign["code"] == "no_account_seat"
    nobody = await account_hello(service, game, {})
    assert nobody["code"] == "no_account_seat"
    stranger = api()
    await stranger.signup(f"Fremd{id(stranger) % 100000}")
    other = f"{SESSION_COOKIE}={stranger.http.cookies[SESSION_COOKIE]}"
    assert (await account_hello(service, game, {"Cookie": other}))["code"] == "no_account_seat"
