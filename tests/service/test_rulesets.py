"""Founding chooses the rule set (issue 14): the web founds a round of any registered rule
set in one of that rule set's worlds, the games table keeps its id, and the actor as well as
a restarted hub build the game through the registry by that column."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from vollmond.engine.core import Viewer
from vollmond.service.hub import Hub

from .support import ApiClient, Service


async def signed_in(api: Callable[[], ApiClient], name: str) -> ApiClient:
    client = api()
    await client.signup(name)
    return client


@pytest.mark.parametrize(
    ("ruleset", "world", "size", "option"),
    [("classic", "duesterwald", 5, "captain"), ("mayor", "thueringer_wald", 4, "nazis")],
)
async def test_a_round_of_another_rule_set_is_founded_started_and_resumed_by_it(
    api: Callable[[], ApiClient], service: Service, ruleset: str, world: str, size: int, option: str
) -> None:
    host = await signed_in(api, "Host")
    founded = await host.found(size=size, ruleset=ruleset, world=world)
    game_id = founded["game"]
    game = (await host.get(f"/api/games/{game_id}")).json()["game"]
    assert (game["ruleset"], game["world"]) == (ruleset, world)
    assert option in game["options"]  # the rule set's own options, in its own JSON form
    for n in range(1, size):
        guest = await signed_in(api, f"Guest{n}")
        await guest.join(game_id)
    actor = service.hub.actors[game_id]  # the table was full, so the round started
    assert actor.ruleset.id == ruleset
    assert actor.state is not None and not actor.ruleset.is_over(actor.state)
    clock = (await host.get(f"/api/games/{game_id}/clock")).json()
    assert clock["phase"] == actor.ruleset.phase_name(actor.state)

    restarted = Hub(service.hub.sessions, service.settings.policy)
    try:
        await restarted.boot()
        resumed = restarted.actors[game_id]
        assert resumed.ruleset.id == ruleset
        spectator = Viewer.spectator()
        assert resumed.view_for(spectator) == actor.view_for(spectator)
    finally:
        await restarted.close()


async def test_a_standard_round_needs_no_rule_set_and_says_which_it_is(
    api: Callable[[], ApiClient],
) -> None:
    host = await signed_in(api, "Host")
    founded = await host.found(size=4)
    game = (await host.get(f"/api/games/{founded['game']}")).json()["game"]
    assert game["ruleset"] == "standard"


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"ruleset": "classic", "world": "werwolf"}, 409, "unknown_world"),
        ({"ruleset": "standard", "world": "duesterwald"}, 409, "unknown_world"),
        ({"ruleset": "chess"}, 400, "unknown_ruleset"),
        ({"ruleset": "mayor", "durations": {"steal_s": 30}}, 400, "invalid_options"),
        ({"ruleset": "classic", "deck": "no_such_deck"}, 400, "invalid_options"),
    ],
)
async def test_founding_refuses_a_world_or_options_of_another_rule_set(
    api: Callable[[], ApiClient], body: dict[str, object], status: int, code: str
) -> None:
    host = await signed_in(api, "Host")
    response = await host.post("/api/games", {"size": 6, **body})
    assert response.status_code == status, response.text
    assert response.json()["error"] == code
    assert (await host.get("/api/games")).json()["games"] == []
