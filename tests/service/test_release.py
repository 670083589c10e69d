"""Finished games leave memory (issue 8): their actors are released after a short linger.

Before, every finished game's actor stayed until the next restart and `vollmond_games_running`
counted it. Games here run on timers alone (nobody acts, so a quiet round ends in a draw), a few
at a time, and the test counts the GameActor objects that are still alive afterwards.
"""

from __future__ import annotations

import asyncio
import gc
import re
import time
from collections.abc import Awaitable, Callable

from vollmond.engine.standard.options import decode_options as options_from_json
from vollmond.service.actor import GameActor
from vollmond.service.policy import DurationBounds, Policy

from .support import ApiClient, Service, ServiceFactory, hello, ws_client

LINGER_S = 1.0
POLICY = Policy(durations=DurationBounds(min_s=0.02), finished_linger_s=LINGER_S)
QUICK = dict.fromkeys(("steal_s", "night_s", "morning_s", "day_s", "vote_s", "floor_s"), 0.03)


async def until(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    """Wait for a condition the service reaches by itself (a timer, the linger)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.02)


async def quiet_game(service: Service, n: int) -> tuple[GameActor, list[str]]:
    """A public four-seat game of guests that nobody plays: it ends in a draw by itself."""
    options = options_from_json(
        {
            "players": 4,
            "deck": "custom",
            "custom_roles": [["evil", 1], ["seer", 1], ["filler", 2]],
            "durations": QUICK,
            "stalemate_rounds": 1,
        }
    )
    founded = await service.hub.found(
        options, private=False, host_account_id=None, host_name=f"Q{n}P1"
    )
    assert founded.token is not None
    tokens = [founded.token]
    for seat in range(2, 5):
        joined = await service.hub.join(founded.game.id, account_id=None, name=f"Q{n}P{seat}")
        tokens.append(joined.token)
    return service.hub.actors[founded.game.id], tokens  # the last join started it


async def games_running(client: ApiClient) -> float:
    text = (await client.get("/metrics")).text
    match = re.search(r"^vollmond_games_running ([0-9.e+]+)$", text, re.MULTILINE)
    assert match is not None, text
    return float(match.group(1))


def live_actors(game_ids: set[str]) -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, GameActor) and o.game_id in game_ids)


async def play_batch(
    service: Service, first: int, count: int, check: Callable[[], Awaitable[None]]
) -> list[str]:
    actors = [(await quiet_game(service, n))[0] for n in range(first, first + count)]
    await asyncio.wait_for(asyncio.gather(*(a.finished.wait() for a in actors)), 30)
    await check()
    game_ids = [a.game_id for a in actors]
    del actors
    return game_ids


async def test_finished_games_are_released_and_still_readable_from_the_log(
    start_service: ServiceFactory,
) -> None:
    async with start_service(POLICY) as service:
        client = ApiClient(service)
        try:
            await run_release_scenario(service, client)
        finally:
            await client.close()


async def run_release_scenario(service: Service, client: ApiClient) -> None:
    hub = service.hub
    finished: list[str] = []

    async def lingering_do_not_count() -> None:
        await until(lambda: hub.running_games() == 0)
        assert await games_running(client) == 0.0

    async def lingering_now() -> None:
        await lingering_do_not_count()
        assert hub.actors  # the gauge was read while finished actors still lingered

    # Three games, then nine more: what stays in memory does not grow with the number.
    finished += await play_batch(service, 1, 3, lingering_now)
    await until(lambda: not hub.actors)
    after_three = live_actors(set(finished))
    finished += await play_batch(service, 4, 9, lingering_do_not_count)
    await until(lambda: not hub.actors)
    after_twelve = live_actors(set(finished))
    assert (after_three, after_twelve) == (0, 0)
    assert await games_running(client) == 0.0

    # Everything a reader may ask of a finished game still works, from the store.
    game_id = finished[0]
    table = (await client.get(f"/api/games/{game_id}")).json()["game"]
    assert (table["status"], table["phase"]) == ("finished", "over")
    history = await client.post(f"/api/games/{game_id}/history", {"lang": "en"})
    assert history.status_code == 200, history.text
    codes = [e["code"] for e in history.json()["events"]]
    assert codes[0] == "game_started" and "game_over" in codes
    async with ws_client(service) as spectator:
        welcome = await hello(spectator, game_id, spectate=True)
        assert welcome["type"] == "welcome", welcome
        assert welcome["view"]["phase"] == "over"
        assert welcome["view"]["outcome"] is not None
        seen = [(await spectator.expect("event"))["code"] for _ in codes]
        assert seen == codes
    assert hub.actors == {}  # a reader does not bring the actor back

    # Readers of many finished games hold only a bounded number of rebuilt games.
    for other in finished:
        assert (await client.post(f"/api/games/{other}/history", {})).status_code == 200
    assert live_actors(set(finished)) <= POLICY.archived_games_cached


async def test_a_player_of_a_released_game_gets_the_final_view_and_cannot_act(
    start_service: ServiceFactory,
) -> None:
    async with start_service(POLICY) as service:
        actor, tokens = await quiet_game(service, 99)
        game_id = actor.game_id
        await asyncio.wait_for(actor.finished.wait(), 30)
        await until(lambda: game_id not in service.hub.actors)
        async with ws_client(service) as player:
            welcome = await hello(player, game_id, tokens[1], after=0)
            assert welcome["type"] == "welcome", welcome
            assert (welcome["seat"], welcome["view"]["phase"]) == (2, "over")
            assert welcome["view"]["me"]["seat"] == 2
            await player.send(
                {"type": "command", "id": 5, "command": {"type": "Say", "text": "gg"}}
            )
            error = await player.expect("error")
            assert (error["id"], error["code"]) == (5, "not_running")
