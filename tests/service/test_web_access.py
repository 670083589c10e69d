"""Issue 8 (web): a private round's history and clock are not shown to outsiders (P1), and the
clock answers from memory instead of reading the whole command log on every call.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine

from .support import ApiClient, Service

FOUR_DECK = [["evil", 1], ["seer", 1], ["filler", 2]]
NIGHT_S = 300.0


async def private_round(api: Callable[[], ApiClient]) -> tuple[str, list[ApiClient], list[str]]:
    """A running private four-seat round: the host founds it, three join by code."""
    prefix = f"Priv{time.monotonic_ns() % 100000}_"
    clients = [api() for _ in range(4)]
    for i, client in enumerate(clients):
        await client.signup(f"{prefix}{i}")
    founded = await clients[0].found(
        size=4,
        private=True,
        deck="custom",
        custom_roles=FOUR_DECK,
        durations={"night_s": NIGHT_S},
    )
    tokens = [str(founded["token"])]
    for client in clients[1:]:
        joined = await client.post("/api/join", {"code": founded["invitation_code"]})
        assert joined.status_code == 201, joined.text
        tokens.append(str(joined.json()["token"]))
    return str(founded["game"]), clients, tokens


@pytest.mark.rule("P1")
async def test_a_private_rounds_history_and_clock_are_hidden_from_outsiders(
    api: Callable[[], ApiClient], service: Service
) -> None:
    game, players, tokens = await private_round(api)
    assert service.hub.running_phase(game) is not None
    outsider = api()
    await outsider.signup("Curious")
    anonymous = api()
    for client in (outsider, anonymous):
        history = await client.post(f"/api/games/{game}/history", {"lang": "en"})
        assert history.status_code == 404, history.text
        assert history.json()["error"] == "no_such_game"
        assert "events" not in history.json()
        clock = await client.get(f"/api/games/{game}/clock")
        assert clock.status_code == 404, clock.text
        assert clock.json()["error"] == "no_such_game"
        # The same answer as for the round's page and for a game that does not exist.
        assert (await client.get(f"/api/games/{game}")).status_code == 404
    # Its players see both: by account, or by seat token.
    mine = await players[1].post(f"/api/games/{game}/history", {"lang": "en"})
    assert mine.status_code == 200 and mine.json()["events"]
    by_token = await anonymous.post(f"/api/games/{game}/history", {"token": tokens[2]})
    assert by_token.status_code == 200 and by_token.json()["seat"] is not None
    clock = (await players[0].get(f"/api/games/{game}/clock")).json()
    assert clock["phase"] == "night" and 0 < clock["remaining"] <= NIGHT_S


@pytest.fixture
async def statements(service: Service) -> AsyncIterator[list[str]]:
    """Every SQL statement the service sends while the test runs (observed, not altered)."""
    seen: list[str] = []
    engine: Engine = service.hub.sessions.kw["bind"].sync_engine

    def record(conn: Connection, cursor: Any, sql: str, *args: Any) -> None:
        seen.append(sql)

    event.listen(engine, "before_cursor_execute", record)
    yield seen
    event.remove(engine, "before_cursor_execute", record)


async def test_the_clock_does_not_read_the_command_log(
    api: Callable[[], ApiClient], service: Service, statements: list[str]
) -> None:
    prefix = f"Clock{time.monotonic_ns() % 100000}_"
    clients = [api() for _ in range(4)]
    for i, client in enumerate(clients):
        await client.signup(f"{prefix}{i}")
    founded = await clients[0].found(
        size=4, deck="custom", custom_roles=FOUR_DECK, durations={"night_s": NIGHT_S}
    )
    for client in clients[1:]:
        await client.join(founded["game"])
    game = founded["game"]
    statements.clear()
    for _ in range(3):
        clock = (await clients[0].get(f"/api/games/{game}/clock")).json()
        assert clock["phase"] == "night"
        assert NIGHT_S - 30 < clock["remaining"] <= NIGHT_S
    assert statements, "the clock checks who may see the game"
    assert not [sql for sql in statements if "game_commands" in sql], statements
