"""The lobby over the real HTTP API: listing, founding with every option, join, leave, start."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from .support import ApiClient, Service

EVERY_OPTION: dict[str, Any] = {
    "world": "vampir",
    "private": False,
    "size": 8,
    "deck": "custom",
    "custom_roles": [["evil", 2], ["seer", 1], ["witch", 1], ["vote_giver", 1], ["filler", 3]],
    "unanimous": True,
    "instant_kill": True,
    "lovers": True,
    "durations": {
        "steal_s": 15.0,
        "night_s": 90.0,
        "morning_s": 10.0,
        "day_s": 240.0,
        "vote_s": 45.0,
        "floor_s": 12.0,
    },
    "calls": {
        "enabled": True,
        "max_duration_s": 300.0,
        "per_night": 2,
        "by_day": True,
        "day_modes": "halb",
        "evil_may_call": False,
        "ring_s": 15.0,
    },
    "stalemate_rounds": 4,
}


async def signed_in(api: Callable[[], ApiClient], name: str) -> ApiClient:
    client = api()
    await client.signup(name)
    return client


async def listing(client: ApiClient, world: str | None = None) -> list[dict[str, Any]]:
    params = {"world": world} if world else {}
    response = await client.get("/api/games", **params)
    assert response.status_code == 200
    games: list[dict[str, Any]] = response.json()["games"]
    return games


@pytest.mark.rule("W3", "W6", "W7", "C8", "C9")
async def test_founding_with_every_option_shows_them_in_the_game(
    api: Callable[[], ApiClient],
) -> None:
    host = await signed_in(api, "Host")
    founded = await host.found(**EVERY_OPTION)
    assert founded["invitation_code"] is None
    assert isinstance(founded["token"], str)
    game = (await host.get(f"/api/games/{founded['game']}")).json()["game"]
    options = game["options"]
    assert game["world"] == "vampir"
    assert game["private"] is False
    assert (game["size"], game["taken"], game["free"]) == (8, 1, 7)
    assert options["players"] == 8
    assert options["deck"] == "custom"
    assert options["custom_roles"] == EVERY_OPTION["custom_roles"]
    assert (options["unanimous"], options["instant_kill"], options["lovers"]) == (True,) * 3
    assert options["durations"] == EVERY_OPTION["durations"]
    assert options["calls"] == EVERY_OPTION["calls"]
    assert options["stalemate_rounds"] == 4
    assert game["players"] == [{"name": "Host", "channel": "web", "house": None}]


@pytest.mark.rule("W3")
@pytest.mark.parametrize(
    ("change", "status", "code"),
    [
        ({"world": "atlantis"}, 409, "unknown_world"),
        ({"size": 3}, 409, "size_out_of_range"),
        ({"size": 201}, 409, "size_out_of_range"),
        ({"size": "8"}, 400, "size_required"),
        ({"deck": "poker"}, 400, "invalid_options"),
        ({"custom_roles": [["dragon", 1]]}, 400, "invalid_options"),
        ({"custom_roles": []}, 409, "custom_deck_empty"),
        ({"custom_roles": [["evil", -1], ["seer", 9]]}, 409, "custom_deck_invalid"),
        ({"durations": {"night_s": 0}}, 409, "durations_out_of_bounds"),
        ({"durations": {"dusk_s": 10}}, 400, "invalid_options"),
        ({"calls": {"max_duration_s": 601.0}}, 409, "call_settings_out_of_bounds"),
        ({"calls": {"per_night": 11}}, 409, "call_settings_out_of_bounds"),
        ({"calls": {"day_modes": "loud"}}, 400, "invalid_options"),
    ],
)
async def test_founding_options_outside_the_bounds_are_refused(
    api: Callable[[], ApiClient], change: dict[str, Any], status: int, code: str
) -> None:
    host = await signed_in(api, "Host")
    response = await host.post("/api/games", {**EVERY_OPTION, **change})
    assert response.status_code == status, response.text
    assert response.json()["error"] == code
    assert await listing(host) == []


async def test_founding_needs_an_account(api: Callable[[], ApiClient]) -> None:
    response = await api().post("/api/games", {"size": 5})
    assert response.status_code == 401
    assert response.json()["error"] == "login_required"


@pytest.mark.rule("P1")
async def test_public_games_are_listed_per_world_with_seats_and_phase(
    api: Callable[[], ApiClient],
) -> None:
    host = await signed_in(api, "Host")
    wolf = await host.found(size=4, world="werwolf")
    other = await signed_in(api, "Other")
    mafia = await other.found(size=5, world="mafia", deck="auto")
    third = await signed_in(api, "Third")
    await third.join(mafia["game"])

    everything = {g["id"]: g for g in await listing(third)}
    assert set(everything) == {wolf["game"], mafia["game"]}
    assert [g["id"] for g in await listing(third, "mafia")] == [mafia["game"]]
    assert [g["id"] for g in await listing(third, "werwolf")] == [wolf["game"]]
    assert await listing(third, "vampir") == []
    entry = everything[mafia["game"]]
    assert (entry["size"], entry["taken"], entry["free"]) == (5, 2, 3)
    assert entry["status"] == "lobby"
    assert entry["phase"] is None
    assert entry["watchable"] is False
    assert entry["players"] == []  # names only on the game's own page

    # Fill the werwolf table: it starts by itself and shows its phase.
    for name in ("A", "B", "C"):
        joined = await (await signed_in(api, name)).join(wolf["game"])
    assert joined["started"] is True
    running = {g["id"]: g for g in await listing(third, "werwolf")}[wolf["game"]]
    assert running["status"] == "running"
    assert running["phase"] == "night"
    assert running["watchable"] is True
    assert (running["taken"], running["free"]) == (4, 0)


@pytest.mark.rule("P1")
async def test_public_games_have_no_private_size_limit(api: Callable[[], ApiClient]) -> None:
    host = await signed_in(api, "Host")
    founded = await host.found(size=40)
    game = (await host.get(f"/api/games/{founded['game']}")).json()["game"]
    assert game["size"] == 40


@pytest.mark.rule("P1")
async def test_a_public_game_of_200_can_be_founded(api: Callable[[], ApiClient]) -> None:
    """The operators' default cap is what a 200-player game was measured to hold (the
    benchmark benchmarks/big_game.py; docs/decisions.md), the rules' own limit."""
    host = await signed_in(api, "Host")
    founded = await host.found(size=200)
    game = (await host.get(f"/api/games/{founded['game']}")).json()["game"]
    assert (game["size"], game["private"]) == (200, False)
    rulesets = (await host.get("/api/rulesets")).json()["rulesets"]
    standard = next(r for r in rulesets if r["id"] == "standard")
    assert standard["max_players"] == 200


async def test_join_twice_leave_and_join_again(api: Callable[[], ApiClient]) -> None:
    host = await signed_in(api, "Host")
    founded = await host.found(size=6)
    game_id = founded["game"]
    guest = await signed_in(api, "Guest")
    joined = await guest.join(game_id)
    assert joined["started"] is False
    twice = await guest.post(f"/api/games/{game_id}/join")
    assert twice.status_code == 409
    assert twice.json()["error"] == "already_seated"

    wrong = await guest.post(f"/api/games/{game_id}/leave", {"token": "not-a-seat"})
    assert wrong.status_code == 409
    assert wrong.json()["error"] == "not_seated"
    left = await guest.post(f"/api/games/{game_id}/leave", {"token": joined["token"]})
    assert left.status_code == 200
    game = (await guest.get(f"/api/games/{game_id}")).json()["game"]
    assert [p["name"] for p in game["players"]] == ["Host"]
    again = await guest.join(game_id)
    assert again["token"] != joined["token"]

    missing = await guest.post("/api/games/nope/join")
    assert missing.status_code == 404


async def test_only_the_host_starts_and_only_with_four(api: Callable[[], ApiClient]) -> None:
    host = await signed_in(api, "Host")
    game_id = (await host.found(size=8))["game"]
    guests = [await signed_in(api, f"G{i}") for i in range(3)]
    for guest in guests[:2]:
        await guest.join(game_id)
    too_few = await host.post(f"/api/games/{game_id}/start")
    assert too_few.status_code == 409
    assert too_few.json()["error"] == "too_few_players"
    await guests[2].join(game_id)
    not_host = await guests[0].post(f"/api/games/{game_id}/start")
    assert not_host.status_code == 409
    assert not_host.json()["error"] == "only_host_starts"

    started = await host.post(f"/api/games/{game_id}/start")
    assert started.status_code == 200
    game = (await host.get(f"/api/games/{game_id}")).json()["game"]
    assert game["status"] == "running"
    assert game["phase"] == "night"
    assert sorted(p["house"] for p in game["players"]) == [1, 2, 3, 4]

    again = await host.post(f"/api/games/{game_id}/start")
    assert again.status_code == 409
    assert again.json()["error"] == "already_started"
    late = await signed_in(api, "Late")
    refused = await late.post(f"/api/games/{game_id}/join")
    assert refused.status_code == 409
    assert refused.json()["error"] == "already_started"


async def test_the_host_aborts_a_lobby_and_it_leaves_the_list(
    api: Callable[[], ApiClient],
) -> None:
    host = await signed_in(api, "Host")
    game_id = (await host.found(size=5))["game"]
    guest = await signed_in(api, "Guest")
    await guest.join(game_id)
    refused = await guest.post(f"/api/games/{game_id}/abort")
    assert refused.status_code == 403
    assert refused.json()["error"] == "only_host_aborts"
    assert [g["id"] for g in await listing(guest)] == [game_id]

    assert (await host.post(f"/api/games/{game_id}/abort")).status_code == 200
    assert await listing(guest) == []
    join = await (await signed_in(api, "Late")).post(f"/api/games/{game_id}/join")
    assert join.status_code == 409
    assert join.json()["error"] == "already_started"
    again = await host.post(f"/api/games/{game_id}/abort")
    assert again.status_code == 409


async def test_a_running_game_cannot_be_aborted(api: Callable[[], ApiClient]) -> None:
    host = await signed_in(api, "Host")
    game_id = (await host.found(size=4))["game"]
    for name in ("A", "B", "C"):
        await (await signed_in(api, name)).join(game_id)
    refused = await host.post(f"/api/games/{game_id}/abort")
    assert refused.status_code == 409
    assert refused.json()["error"] == "already_started"


async def test_oversized_and_malformed_bodies_are_refused(
    api: Callable[[], ApiClient], service: Service
) -> None:
    host = await signed_in(api, "Host")
    token = await host.csrf()
    huge = await host.http.post(
        "/api/games",
        content=b'{"size": 5, "pad": "' + b"x" * 20_000 + b'"}',
        headers={"X-CSRF-Token": token, "Content-Type": "application/json"},
    )
    assert huge.status_code == 413
    broken = await host.http.post(
        "/api/games", content=b"{size: 5", headers={"X-CSRF-Token": token}
    )
    assert broken.status_code == 400
    assert broken.json()["error"] == "invalid_request"
    assert (await host.get("/healthz")).status_code == 200
    assert service.hub.actors == {}


async def test_leaving_a_running_game_is_the_leave_command(
    api: Callable[[], ApiClient], service: Service
) -> None:
    host = await signed_in(api, "Host")
    game_id = (await host.found(size=4))["game"]
    guests = [await signed_in(api, name) for name in ("A", "B", "C")]
    tokens = [(await guest.join(game_id))["token"] for guest in guests]
    actor = service.hub.actors[game_id]
    assert actor.state is not None
    assert actor.state.player(4).alive
    left = await guests[2].post(f"/api/games/{game_id}/leave", {"token": tokens[2]})
    assert left.status_code == 200
    assert not actor.state.player(4).alive
    game = (await host.get(f"/api/games/{game_id}")).json()["game"]
    assert game["status"] in ("running", "finished")


async def test_a_host_start_racing_the_last_join_starts_one_game(
    api: Callable[[], ApiClient], service: Service
) -> None:
    host = await signed_in(api, "Host")
    game_id = (await host.found(size=5))["game"]
    guests = [await signed_in(api, name) for name in ("A", "B", "C", "D")]
    for guest in guests[:3]:
        await guest.join(game_id)
    start, last = await asyncio.gather(
        host.post(f"/api/games/{game_id}/start"), guests[3].post(f"/api/games/{game_id}/join")
    )
    # Either order is fine: the host started with four (the join is refused), or the join
    # filled the table and started it (the host's start is refused). Never two games.
    assert sorted([start.status_code, last.status_code]) in ([200, 409], [201, 409])
    game = (await host.get(f"/api/games/{game_id}")).json()["game"]
    houses = sorted(p["house"] for p in game["players"])
    assert houses == list(range(1, len(houses) + 1))
    actor = service.hub.actors[game_id]
    assert actor.state is not None
    assert len(actor.state.players) == len(houses)
