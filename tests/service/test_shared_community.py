"""Friends' whereabouts and invitations shared by processes (vollmond/service/shards/community.py),
on the local bus of `--workers` and on the real NATS server.

Whereabouts: three processes, so a person's owner can be neither the process where he calls
or browses nor the one that asks; a call is online until it hangs up, a page for
`web_online_s`, a whole list costs one question per owner, and a silent owner leaves each
process its own knowledge. Invitations: two processes on one store; an invitation made on one
is told to the invitee's watcher on the other and listed there, and its use, its withdrawal
(the room closed) and a block end it on both. The real service:
tests/service/test_community_workers.py.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from tests.store.conftest import engine, sessions, target
from vollmond.service.community import CommunityError, Invitation, Named, ToRoom, ToTable
from vollmond.service.community.online import Online
from vollmond.service.shards.community import (
    SharedFriends,
    SharedOnline,
    invitation_json,
    invitation_of,
)
from vollmond.service.shards.ownership import HashOwnership
from vollmond.settings.community import FriendsSettings
from vollmond.store import Sessions, create_account
from vollmond.store.community import accept_friend, request_friend
from vollmond.store.owners import Owner

from .test_shards import Connect, open_bus

__all__ = ["engine", "sessions", "target"]  # the store's fixtures, SQLite and PostgreSQL

THREE = ("w0", "w1", "w2")
TWO = ("w0", "w1")
WEB_ONLINE_S = 30.0


@pytest.fixture(params=["local", "nats"])
async def bus(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Connect]:
    async with open_bus(request.param, tmp_path) as connect:
        yield connect


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def onlines(bus: Connect, clock: Clock) -> AsyncIterator[list[SharedOnline]]:
    ownership = HashOwnership(THREE)
    made = []
    for node in THREE:
        online = SharedOnline(
            WEB_ONLINE_S, node=node, ownership=ownership, transport=await bus(), clock=clock
        )
        await online.start()
        made.append(online)
    yield made
    for online in made:
        await online.close()
        await online.transport.close()


def owned_by(online: SharedOnline, node: str, count: int = 1) -> list[Owner]:
    """`count` people whose owner is `node`."""
    people = (Owner.account(i) for i in itertools.count(1))
    return list(itertools.islice((p for p in people if online.owner_of(p) == node), count))


async def until(done: Callable[[], Awaitable[bool]], within_s: float = 5.0) -> None:
    async with asyncio.timeout(within_s):
        while not await done():
            await asyncio.sleep(0.01)


async def online_on(online: Online, person: Owner) -> bool:
    return person in await online.online_of([person])


@pytest.mark.rule("X4")
async def test_a_caller_is_online_on_every_process_while_the_call_lasts(
    onlines: list[SharedOnline],
) -> None:
    w0, w1, w2 = onlines
    (anna,) = owned_by(w0, "w2")  # calls on w0, asked on w1, her owner is w2
    assert not await online_on(w1, anna)
    hang_up = w0.call_started(anna)
    second = w0.call_started(anna)  # a second call of hers: online until both ended
    await until(lambda: online_on(w1, anna))
    assert await online_on(w2, anna) and await online_on(w0, anna)
    second()
    second()  # ending twice ends once
    await w0.transport.flush()
    assert await online_on(w1, anna)
    hang_up()
    await until(lambda: _not(online_on(w1, anna)))
    assert not await online_on(w0, anna) and not await online_on(w2, anna)


async def _not(answer: Awaitable[bool]) -> bool:
    return not await answer


@pytest.mark.rule("X4")
async def test_a_page_is_online_everywhere_for_its_time_and_a_list_asks_each_owner_once(
    onlines: list[SharedOnline], clock: Clock
) -> None:
    w0, w1, w2 = onlines
    at_w2 = owned_by(w0, "w2", 3)
    (at_w1,) = owned_by(w0, "w1")
    for person in [*at_w2, at_w1]:
        w0.seen(person)  # the pages of four people on w0
    await w0.transport.flush()
    asked = w1.asked
    await until(lambda: _all_online(w1, [*at_w2, at_w1]))
    assert w1.asked - asked >= 1
    asked = w1.asked
    assert await w1.online_of([*at_w2, at_w1]) == {*at_w2, at_w1}
    assert w1.asked - asked == 1  # w2 asked once for its three; w1 knows its own
    # A page asking again within web_online_s / 6 is not told its owner again...
    clock.now += 4.0
    w0.seen(at_w2[0])
    await w0.transport.flush()
    # ... so the owner's time is up to that much older than the page's own process's.
    clock.now += WEB_ONLINE_S - 1.0
    assert await online_on(w0, at_w2[0])
    assert not await online_on(w1, at_w2[1])  # the others stopped asking
    clock.now += 2.0
    assert await w1.online_of([*at_w2, at_w1]) == set()
    assert not await online_on(w2, at_w2[0])


async def _all_online(online: Online, people: list[Owner]) -> bool:
    return await online.online_of(people) == set(people)


@pytest.mark.rule("X4")
async def test_a_silent_owner_leaves_each_process_its_own_knowledge(
    onlines: list[SharedOnline],
) -> None:
    w0, w1, w2 = onlines
    (anna,) = owned_by(w0, "w2")
    w0.call_started(anna)
    await until(lambda: online_on(w1, anna))
    await w2.served.close()  # the owner stops answering
    unanswered = w1.unanswered
    assert not await online_on(w1, anna)
    assert w1.unanswered == unanswered + 1
    assert await online_on(w0, anna)  # where she calls, she is online


# -- invitations -------------------------------------------------------------------------
@pytest.fixture
async def books(bus: Connect, sessions: Sessions) -> AsyncIterator[list[SharedFriends]]:
    ownership = HashOwnership(TWO)
    made = []
    for node in TWO:
        transport = await bus()
        online = SharedOnline(WEB_ONLINE_S, node=node, ownership=ownership, transport=transport)
        book = SharedFriends(
            sessions, FriendsSettings(), online, node=node, nodes=TWO, transport=transport
        )
        await online.start()
        await book.start()
        made.append(book)
    yield made
    for book in made:
        await book.close()
        await book.online.close()
        await book.transport.close()


async def friends(sessions: Sessions) -> tuple[Owner, Owner]:
    anna = Owner.account((await create_account(sessions, "Anna", "password-anna")).id)
    bert = Owner.account((await create_account(sessions, "Bert", "password-bert")).id)
    await request_friend(sessions, anna, bert)
    await accept_friend(sessions, bert, anna)
    return anna, bert


async def listed(book: SharedFriends, person: Owner, ids: list[int]) -> None:
    async def there() -> bool:
        return [i.id for i in book.invitations(person)] == ids

    await until(there)


@pytest.mark.rule("X4")
async def test_an_invitation_made_on_one_process_is_told_and_ends_on_both(
    books: list[SharedFriends], sessions: Sessions
) -> None:
    here, there = books
    anna, bert = await friends(sessions)
    heard: list[Invitation] = []
    unwatch = there.watch(bert, heard.append)  # Bert's call is on the other process
    first = await here.invite_to_room(anna, bert, "private-1")
    await listed(there, bert, [first.id])
    assert heard == there.invitations(bert)
    (copy,) = heard
    assert (copy.inviter.name, copy.inviter.owner, copy.invitee, copy.to) == (
        "Anna",
        anna,
        bert,
        ToRoom("private-1"),
    )
    # Used on the other process: gone on both.
    assert there.take(bert, first.id) == copy
    await listed(here, bert, [])
    # Withdrawn where the room closed: gone on both.
    second = await here.invite_to_room(anna, bert, "private-2")
    await listed(there, bert, [second.id])
    here.withdraw(ToRoom("private-2"))
    await listed(there, bert, [])
    # Numbers never meet: each process has its own series.
    third = await there.invite_to_room(anna, bert, "private-3")
    await listed(here, bert, [third.id])
    assert len({first.id, second.id, third.id}) == 3
    # Bert blocks Anna where he is: her invitations end on both.
    await there.block(bert, anna)
    await listed(here, bert, [])
    with pytest.raises(CommunityError):
        here.invitation(bert, third.id)
    unwatch()
    assert [i.id for i in heard] == [first.id, second.id, third.id]


def test_an_invitation_crosses_the_bus_with_its_time_left() -> None:
    anna = Named(Owner.account(1), "Anna", None)
    for to in (ToTable("g1", "werwolf", True), ToRoom("private-9")):
        sent = Invitation(5, anna, Owner.phone(7), to, expires=130.0)
        copy = invitation_of(invitation_json(sent, now=100.0), now=2000.0)
        assert copy == Invitation(5, anna, Owner.phone(7), to, expires=2030.0)
