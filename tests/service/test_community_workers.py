"""Friends across worker processes (issue 16 "every core", docs/scaling.md "Friends").

The real `vollmond serve --workers 2`, each worker also on a port of its own, so the test puts
each browser on the worker it wants: Anna's page on one, Bert's on the other. Bert, online
only on his worker, is online in Anna's friends list on hers and can be called into a room
from there; the invitation Anna's worker made is listed on Bert's, and he enters the room by
it there (the room owned by Anna's worker). An invitation to Anna's table is listed and taken
on Bert's worker too. And a person's private rooms open at once meet one ceiling
(`[rooms] private_per_person`), wherever he opens them. A real baresip caller signed in on
the other worker's SIP port is online for Anna's page, and her call reaches his announcer:
`8` puts him into her room. Each fails with one process's community per worker: Bert (or the
caller) counts as away on Anna's worker, the invitations are not listed on Bert's (`8` finds
none), and Anna opens two rooms on each worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.needs import need
from tests.phone.e2e.support import phones
from vollmond.store import create_phone_identity, open_store
from vollmond.store.community import accept_friend, request_friend
from vollmond.store.owners import Owner

from .process import Browser, WorkerPort, free_ports, workers_server
from .support import PASSWORD

WORKERS = 2
PRIVATE_PER_PERSON = 2  # [rooms] private_per_person (the default)
PIN = "2468"
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


async def until(
    ask: Callable[[], Awaitable[Any]], done: Callable[[Any], bool], within_s: float = 10.0
) -> Any:
    """`ask` again until its answer is `done` (the page asks every few seconds)."""
    deadline = time.monotonic() + within_s
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


@pytest.mark.slow
@pytest.mark.rule("X2", "X4")
async def test_a_caller_on_one_worker_is_called_into_a_room_from_a_page_on_the_other(
    tmp_path: Path,
) -> None:
    """The telephone's side: a real baresip caller signed in on worker 1's SIP port is online
    for Anna's page on worker 0, her call into a room reaches his announcer there, and his
    `8` puts him into her room (owned by worker 0)."""
    need("baresip", "espeak-ng", "sox")
    sip = free_ports(WORKERS, socket.SOCK_DGRAM)
    config = tmp_path / "vollmond.toml"
    config.write_text(CONFIG)
    server, workers = workers_server(tmp_path / "data", WORKERS, sip_port=sip, config=config)
    anna = Browser(workers[0])
    try:
        await server.start(ready=workers)
        await anna.signup("anna")
        assert anna.account_id is not None
        async with open_store(server.store_url) as sessions:  # the service's own store
            caller_id = (await create_phone_identity(sessions, pin=PIN)).id
            await request_friend(sessions, Owner.account(anna.account_id), Owner.phone(caller_id))
            await accept_friend(sessions, Owner.phone(caller_id), Owner.account(anna.account_id))

        async def caller_is(place: str) -> bool:
            (friend,) = (await anna.http.get("/api/friends")).json()["friends"]
            return bool(friend["where"]["place"] == place)

        assert await caller_is("offline")
        async with phones(tmp_path / "phones", {"caller": None}) as lines:
            caller = lines["caller"]
            await caller.dial(sip + 1)  # worker 1
            await asyncio.sleep(3.0)  # keys cut the prompts short, each menu comes up first
            await caller.keys("1")  # sign in with a phone ID
            await asyncio.sleep(2.5)
            await caller.keys(f"{caller_id}#", gap=0.15)
            await asyncio.sleep(2.5)
            await caller.keys(f"{PIN}#", gap=0.15)
            await until(lambda: caller_is("online"), bool)
            called = await anna.post("/api/rooms/call", {"who": f"p:{caller_id}"})
            assert called.status_code == 200, called.text
            token = called.json()["token"]

            async def members() -> list[dict[str, Any]]:
                found: list[dict[str, Any]] = (
                    await anna.http.get(f"/api/rooms/member/{token}")
                ).json()["members"]
                return found

            deadline = time.monotonic() + 20.0
            while len(await members()) < 2:  # `8` takes the invitation once it is there
                assert time.monotonic() < deadline, await members()
                await caller.keys("8")
                with contextlib.suppress(AssertionError):
                    await until(members, lambda found: len(found) == 2, within_s=3.0)
            assert [m["channel"] for m in await members()] == ["web", "phone"]
            await caller.hangup()
        await until(lambda: caller_is("offline"), bool)
    finally:
        await anna.close()
        server.kill(signal.SIGTERM)
