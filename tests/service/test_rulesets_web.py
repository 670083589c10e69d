"""What the browser needs to found and play a round of any rule set (issue 14): the rule
sets with their founding options, every world with its rule set, a further rule set's role
names and help, and the host's "fill with bots" for a lobby."""

from __future__ import annotations

from collections.abc import Callable

from vollmond.bots.table import BotSeat

from .support import ApiClient, Service


async def signed_in(api: Callable[[], ApiClient], name: str) -> ApiClient:
    client = api()
    await client.signup(name)
    return client


async def test_the_rule_sets_describe_their_founding_options(
    api: Callable[[], ApiClient],
) -> None:
    data = (await api().get("/api/rulesets")).json()
    rulesets = {r["id"]: r for r in data["rulesets"]}
    assert set(rulesets) == {"standard", "classic", "mayor"}
    classic, mayor = rulesets["classic"], rulesets["mayor"]
    assert classic["worlds"] == ["duesterwald"] and mayor["worlds"] == ["thueringer_wald"]
    assert classic["defaults"]["captain"] is True
    assert "night_step_s" in classic["defaults"]["durations"]
    assert mayor["defaults"]["nazis"] is None
    assert "defence_s" in mayor["defaults"]["durations"]
    assert classic["min_players"] == 5 and mayor["min_players"] == 4
    # Who may type: the mayor rules have a chat (B6), the classic ones do not.
    assert (classic["chat"], mayor["chat"], rulesets["standard"]["chat"]) == (False, True, True)


async def test_every_world_names_its_rule_set(api: Callable[[], ApiClient]) -> None:
    worlds = {w["id"]: w for w in (await api().get("/api/worlds")).json()["worlds"]}
    assert worlds["werwolf"]["ruleset"] == "standard"
    assert worlds["duesterwald"]["ruleset"] == "classic"
    assert worlds["thueringer_wald"]["ruleset"] == "mayor"
    assert worlds["duesterwald"]["names"]["de"]["decks"]["classic"] == "Schwarzseel"


async def test_a_further_world_names_and_explains_its_own_roles(
    api: Callable[[], ApiClient],
) -> None:
    client = api()
    german = (await client.get("/api/worlds/duesterwald/text", lang="de")).json()
    assert german["ruleset"] == "classic"
    assert german["roles"]["herb_witch"] == "Kräuterhexe"
    assert "Wolfsrunde" in german["help"]["werewolf"]  # the world's name for the night room
    assert german["help"]["lovers"] == ""  # not a card: no help of its own
    english = (await client.get("/api/worlds/thueringer_wald/text", lang="en")).json()
    assert english["roles"]["citizen"] == "Democratic citizen"
    assert "Back Room" in english["help"]["nazi"]


async def test_the_host_fills_a_lobby_with_bots_and_it_starts(
    api: Callable[[], ApiClient], service: Service
) -> None:
    host = await signed_in(api, "Host")
    founded = await host.found(size=5, ruleset="classic", world="duesterwald")
    game_id = founded["game"]
    guest = await signed_in(api, "Guest")
    refused = await guest.post(f"/api/games/{game_id}/bots")
    assert (refused.status_code, refused.json()["error"]) == (409, "only_host_starts")

    response = await host.post(f"/api/games/{game_id}/bots")
    assert response.status_code == 200, response.text
    assert response.json()["bots"] == 4
    table = (await host.get(f"/api/games/{game_id}")).json()["game"]
    assert table["status"] == "running"
    houses = {p["name"]: p["house"] for p in table["players"]}
    assert set(houses) == {"Host", "Bot 1", "Bot 2", "Bot 3", "Bot 4"}
    actor = service.hub.actors[game_id]
    bots = {s.seat for s in actor.subscribers if isinstance(s, BotSeat)}
    assert bots == set(range(1, 6)) - {houses["Host"]}  # each bot plays its own seat
    again = await host.post(f"/api/games/{game_id}/bots")
    assert (again.status_code, again.json()["error"]) == (409, "already_started")
