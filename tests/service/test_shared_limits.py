"""The web's limits counted once for all processes (vollmond/service/shards/shared_limits.py),
on the local bus of `--workers` and on the real NATS server.

Two processes share one budget: a key used from both is allowed as often as from one, its
sockets meet one ceiling and a socket closed on either makes room again; a process whose
key's owner does not answer counts the key itself; a message that cannot be read is answered
no. The real service across two workers: tests/service/test_workers_limits.py.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from vollmond.service.shards.ownership import HashOwnership
from vollmond.service.shards.shared_limits import SharedLimits, limits_subject
from vollmond.service.web.limits import (
    CHAT,
    CODE,
    LOGIN,
    SOCKETS,
    ConnectionCounter,
    LimitTable,
    WebLimits,
)
from vollmond.service.web.ratelimit import RateLimiter
from vollmond.settings import WebSettings

from .test_shards import Connect, open_bus

NODES = ("w0", "w1")
RATE = 3
CEILING = 2


@pytest.fixture(params=["local", "nats"])
async def bus(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Connect]:
    async with open_bus(request.param, tmp_path) as connect:
        yield connect


def _table() -> LimitTable:
    table = LimitTable()
    table.rates["login"] = RateLimiter(RATE, 60.0)
    table.counters["sockets"] = ConnectionCounter(CEILING)
    return table


@pytest.fixture
async def pair(bus: Connect) -> AsyncIterator[list[SharedLimits]]:
    ownership = HashOwnership(NODES)
    shared = [SharedLimits(n, ownership, await bus(), _table()) for n in NODES]
    for limits in shared:
        await limits.start()
    yield shared
    for limits in shared:
        await limits.close()
        await limits.transport.close()


def _keys_owned_by_each() -> dict[str, str]:
    """A key of the limit "login" owned by each process (the hash decides)."""
    ownership = HashOwnership(NODES)
    found: dict[str, str] = {}
    for i in range(100):
        found.setdefault(ownership.owner_of(f"login/addr{i}"), f"addr{i}")
    assert set(found) == set(NODES)
    return found


async def test_a_key_used_from_both_processes_meets_one_budget(pair: list[SharedLimits]) -> None:
    for key in _keys_owned_by_each().values():
        answers = [await pair[i % 2].allow("login", key) for i in range(RATE + 2)]
        assert answers == [True] * RATE + [False, False], key
    # Each key was counted by its owner only: the other process's table never saw it.
    # w1 asked about w0's key twice, w0 about w1's key three times: 5 questions in all.
    assert sum(limits.asked for limits in pair) == RATE + 2
    assert all(limits.unanswered == 0 for limits in pair)
    assert await pair[0].allow("login", "someone else")


async def test_sockets_meet_one_ceiling_and_a_release_anywhere_makes_room(
    pair: list[SharedLimits],
) -> None:
    first, second = pair
    assert await first.acquire("sockets", "10.0.0.1")
    assert await second.acquire("sockets", "10.0.0.1")
    assert not await first.acquire("sockets", "10.0.0.1")
    assert not await second.acquire("sockets", "10.0.0.1")
    second.release("sockets", "10.0.0.1")  # a notice to the owner, no answer
    await second.transport.flush()
    await first.transport.flush()
    assert await first.acquire("sockets", "10.0.0.1")
    assert not await second.acquire("sockets", "10.0.0.1")


async def test_a_silent_owner_leaves_the_key_to_the_asking_process(
    pair: list[SharedLimits],
) -> None:
    keys = _keys_owned_by_each()
    owner, asking = pair
    await owner.close()  # nobody answers for w0's keys any more
    key = keys["w0"]
    answers = [await asking.allow("login", key) for _ in range(RATE + 1)]
    assert answers == [True] * RATE + [False]  # counted here instead, with the same budget
    assert asking.unanswered == RATE + 1
    # A socket counted here is released here, not sent to the silent owner.
    address = next(
        f"10.0.0.{i}"
        for i in range(100)
        if HashOwnership(NODES).owner_of(f"sockets/10.0.0.{i}") == "w0"
    )
    assert await asking.acquire("sockets", address)
    assert await asking.acquire("sockets", address)
    assert not await asking.acquire("sockets", address)
    asking.release("sockets", address)
    assert await asking.acquire("sockets", address)


async def test_a_message_that_cannot_be_read_is_answered_no(pair: list[SharedLimits]) -> None:
    transport = pair[1].transport
    for data in (b"", b"allow\x00login", b"grant\x00login\x00x", b"allow\x00nolimit\x00x"):
        assert await transport.request(limits_subject("w0"), data, 2.0) == b"0", data


def test_the_web_limits_are_the_settings() -> None:
    """Every process builds the same table from the same settings (so any may count a key)."""
    limits = WebLimits(WebSettings(ws_connections_per_address=5))
    assert set(limits.table.rates) == {CHAT, LOGIN, CODE}
    assert limits.table.counters[SOCKETS].per_address == 5
