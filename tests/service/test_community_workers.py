"""Friends across worker processes (issue 16 "every core", docs/scaling.md "Friends").

The real `vollmond serve --workers 2`, each worker also on a port of its own, so the test puts
each browser on the worker it wants: Anna's page on one, Bert's on the other. Bert, online
only on his worker, is online in Anna's friends list on hers and can be called into a room
from there; the invitation Anna's worker made is listed on Bert's, and he enters the room by
it there (the room owned by Anna's worker). An invitation to Anna's table is listed and taken
on Bert's worker too. And a person's private rooms open at once meet one ceiling
(`[rooms] private_per_person`), wherever he opens them. Each fails with one process's
community per worker: Bert counts as away on Anna's worker, the invitations are not listed on
Bert's, and Anna opens two rooms on each worker.
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from .process import Browser, WorkerPort, workers_server
from .support import PASSWORD

WORKERS = 2
PRIVATE_PER_PERSON = 2  # [rooms] private_per_person (the default)
CONFIG = """
[policy]
login_attempts_per_minute = 100
"""


@pytest.fixture
async def workers(tmp_path: Path) -> AsyncIterator[list[WorkerPort]]:
    config = tmp_path / "vollmond.toml"
    config.write_text(CONFIG)
    server, ports = workers_server(tmp_path / "data", WORKERS, config=config)
    try:
        await server.start(ready=ports)
        yield ports
    finally:
        server.kill(signal.SIGTERM)


@pytest.fixture
async def browsers(workers: list[WorkerPort]) -> AsyncIterator[Callable[[int], Browser]]:
    made: list[Browser] = []

    def on(worker: int) -> Browser:
        made.append(Browser(workers[worker]))
        return made[-1]

    yield on
    for browser in made:
        await browser.close()


async def friends(anna: Browser, bert: Browser) -> None:
    await anna.signup("anna")
    await bert.signup("bert")
    assert (await anna.post("/api/friends", {"who": "bert"})).status_code == 201
    assert (await bert.post("/api/friends/accept", {"who": "anna"})).status_code == 200


async def until(ask: Callable[[], Awaitable[Any]], done: Callable[[Any], bool]) -> Any:
    """`ask` again until its answer is `done` (the page asks every few seconds)."""
    deadline = time.monotonic() + 10.0
    while True:
        answer = await ask()
        if done(answer):
            return answer
        assert time.monotonic() < deadline, answer
        await asyncio.sleep(0.1)


async def invitations(browser: Browser) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = (await browser.http.get("/api/community")).json()["invitations"]
    return found


@pytest.mark.slow
@pytest.mark.rule("X2", "X4")
async def test_a_friend_online_on_the_other_worker_is_called_into_a_room(
    browsers: Callable[[int], Browser],
) -> None:
    anna, bert = browsers(0), browsers(1)
    await friends(anna, bert)
    # Bert's page asks on his worker; Anna's friends list on hers shows him there.
    assert (await bert.http.get("/api/friends")).status_code == 200
    (friend,) = (await anna.http.get("/api/friends")).json()["friends"]
    assert (friend["name"], friend["where"]["place"]) == ("bert", "online")
    # Anna calls him into a room from her worker.
    called = await anna.post("/api/rooms/call", {"who": "bert"})
    assert called.status_code == 200, called.text
    room = called.json()["room"]
    assert called.json()["invited"]["name"] == "bert"
    # The invitation her worker made is listed on his.
    (invitation,) = await until(lambda: invitations(bert), lambda found: len(found) == 1)
    assert (invitation["kind"], invitation["room"]) == ("room", room["id"])
    assert invitation["from"]["name"] == "anna"
    # He enters the room by it on his worker: one room, both in it.
    entered = await bert.post("/api/rooms/enter", {"invitation": invitation["id"]})
    assert entered.status_code == 200, entered.text
    assert entered.json()["room"]["id"] == room["id"]
    assert [m["name"] for m in entered.json()["members"]] == ["anna", "bert"]
    # Used: gone on both workers.
    again = await bert.post("/api/rooms/enter", {"invitation": invitation["id"]})
    assert (again.status_code, again.json()["error"]) == (404, "invitation_not_found")
    assert await until(lambda: invitations(bert), lambda found: found == []) == []


@pytest.mark.slow
@pytest.mark.rule("X4")
async def test_an_invitation_to_a_table_made_on_one_worker_is_taken_on_the_other(
    browsers: Callable[[int], Browser],
) -> None:
    anna, bert = browsers(0), browsers(1)
    await friends(anna, bert)
    game, _ = await anna.found(size=5, private=True)
    # Anna is at a private table, her page on her worker: Bert's list on his says so.
    (friend,) = (await bert.http.get("/api/friends")).json()["friends"]
    assert friend["where"] == {"place": "private", "world": None, "game": None}
    invited = await anna.post("/api/friends/invite", {"who": "bert", "game": game})
    assert invited.status_code == 201, invited.text
    (invitation,) = await until(lambda: invitations(bert), lambda found: len(found) == 1)
    assert invitation["id"] == invited.json()["invitation"] and invitation["private"]
    seated = await bert.post(f"/api/invitations/{invitation['id']}/accept")
    assert seated.status_code == 201, seated.text
    assert seated.json()["game"] == game


@pytest.mark.slow
@pytest.mark.rule("X2")
async def test_a_person_meets_one_ceiling_of_private_rooms_on_all_workers(
    browsers: Callable[[int], Browser],
) -> None:
    anna = [browsers(0), browsers(1)]  # her pages on both workers
    await anna[0].signup("anna")
    login = await anna[1].post("/api/login", {"name": "anna", "password": PASSWORD})
    assert login.status_code == 200, login.text
    tokens = []
    for page in anna:  # one room on each worker: her ceiling
        opened = await page.post("/api/rooms/private")
        assert opened.status_code == 200, opened.text
        tokens.append(opened.json()["token"])
    for page in anna:
        refused = await page.post("/api/rooms/private")
        assert (refused.status_code, refused.json().get("error")) == (400, "too_many_private")
        assert str(PRIVATE_PER_PERSON) in refused.json()["message"]
    # She leaves the room on the second worker: it closes, and she may open one again.
    left = await anna[1].post(f"/api/rooms/member/{tokens[1]}/leave")
    assert left.status_code == 200
    reopened = await until(
        lambda: anna[0].post("/api/rooms/private"), lambda r: r.status_code == 200
    )
    assert reopened.json()["room"]["kind"] == "private"
