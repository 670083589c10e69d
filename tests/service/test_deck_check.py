"""Issue 12: custom decks are checked at a web founding, with a reason: at least one evil
card, evil below half of the seats, twins in pairs. (Before, the engine silently repaired an
all-village deck and accepted 4 evil of 7, a game decided at the start.)"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from .support import ApiClient


def deck(size: int, roles: list[list[Any]]) -> dict[str, Any]:
    return {"size": size, "deck": "custom", "custom_roles": roles}


@pytest.mark.parametrize(
    ("options", "code"),
    [
        (deck(7, [["seer", 1], ["filler", 6]]), "deck_no_evil"),
        (deck(7, [["evil", 4], ["filler", 3]]), "deck_evil_majority"),
        (deck(6, [["evil", 3], ["filler", 3]]), "deck_evil_majority"),
        (deck(7, [["evil", 2], ["twin", 1], ["filler", 4]]), "deck_twins_unpaired"),
    ],
)
async def test_unfair_custom_decks_are_refused_with_a_reason(
    api: Callable[[], ApiClient], options: dict[str, Any], code: str
) -> None:
    client = api()
    await client.signup(f"Mischer{id(options) % 100000}")
    response = await client.post("/api/games", options)
    assert response.status_code == 400
    assert response.json()["error"] == code


async def test_a_fair_custom_deck_is_founded(api: Callable[[], ApiClient]) -> None:
    client = api()
    await client.signup("Fairmischer")
    fair = deck(7, [["evil", 3], ["twin", 2], ["filler", 2]])
    assert (await client.post("/api/games", fair)).status_code == 201
