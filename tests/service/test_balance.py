"""Balance preview (issue 12): the win rates of a custom deck from a few bot games, cached per
deck (world, durations and calls do not matter), a lopsided deck shows as lopsided, an unfair
deck is refused with its founding reason, and only a signed-in page may ask."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from vollmond.engine.ruleset import get_ruleset
from vollmond.engine.standard.options import decode_options
from vollmond.service.balance import MAX_GAMES, MIN_GAMES, BalancePreview, games_for

from .support import ApiClient, Service


def _deck(roles: list[list[Any]], size: int, **extra: Any) -> dict[str, Any]:
    return {"size": size, "deck": "custom", "custom_roles": roles, **extra}


async def test_balance_preview_is_bounded_cached_and_checked(
    service: Service, api: Callable[[], ApiClient]
) -> None:
    client = api()
    anonymous = await client.post("/api/balance", _deck([["evil", 1], ["filler", 5]], 6))
    assert anonymous.status_code == 401
    await client.signup("Waage")

    fair = await client.post("/api/balance?lang=de", _deck([["evil", 1], ["filler", 5]], 6))
    assert fair.status_code == 200, fair.text
    body = fair.json()
    assert body["games"] == games_for(6) == MAX_GAMES
    assert set(body["win_rates"]) == {"village", "evil"}
    assert abs(sum(body["win_rates"].values()) - 1.0) < 0.01
    assert body["sides"]["evil"] and body["sides"]["village"]

    # Three evil of seven with no seer: the evil side wins far more often.
    heavy = await client.post("/api/balance", _deck([["evil", 3], ["filler", 4]], 7))
    assert heavy.json()["win_rates"]["evil"] > body["win_rates"]["evil"]

    # The same deck in another world, with other times: answered from the cache.
    again = await client.post(
        "/api/balance",
        _deck([["evil", 1], ["filler", 5]], 6, world="vampir", durations={"night_s": 90}),
    )
    assert again.json()["win_rates"] == body["win_rates"]

    unfair = await client.post("/api/balance", _deck([["evil", 4], ["filler", 3]], 7))
    assert (unfair.status_code, unfair.json()["error"]) == (400, "deck_evil_majority")


async def test_a_deck_is_simulated_once_whatever_its_world_and_times() -> None:
    rules = get_ruleset("standard")
    preview = BalancePreview(cache_size=2)
    deck = {"players": 6, "deck": "custom", "custom_roles": [["evil", 1], ["filler", 5]]}
    first = await preview.preview(rules, decode_options(deck), 6)
    other = decode_options({**deck, "world": "vampir", "durations": {"night_s": 90}})
    assert await preview.preview(rules, other, 6) == first
    assert preview.simulations == 1
    assert games_for(60) == MIN_GAMES and games_for(4) == MAX_GAMES
