"""A caller waiting at the table enters the game when it starts, also when the store is slow.

The hub stores a starting game's status (RUNNING) before the game's actor has written its
first events and is followed; a caller's lobby waiter reads that status about once a second.
On a loaded machine those writes take a while (seen as callers without a seat 10-20 s after
the start in a full test run): a waiter that read RUNNING in that moment found no actor yet,
said "not running" and sent the caller back to the menu, so the caller never got the seat.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from vollmond.engine.standard import GameOptions
from vollmond.i18n import text
from vollmond.service.actor import GameActor
from vollmond.service.hub import Hub
from vollmond.service.policy import Policy
from vollmond.store import Game
from vollmond.store.models import GameStatus
from vollmond.worlds import get_world

from .conftest import hub_on_sqlite
from .support import call_in, heard, press, wait_until

NOT_RUNNING = text("phone.lobby.not_running", "de", get_world("werwolf"))


class SlowActor(GameActor):
    """A game actor whose first writes wait until `opened` is set, as on a loaded store."""

    def __init__(self, opened: asyncio.Event, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.opened = opened

    async def start(self) -> None:
        await self.opened.wait()
        await super().start()


class SlowStartHub(Hub):
    """The real hub, its games' actors slow to open; it counts who asked for a game's actor
    while its status said RUNNING and the actor was not open yet."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.opened = asyncio.Event()
        self.asked_before_open = 0

    def _new_actor(self, game: Game, players: int) -> GameActor:
        plain = super()._new_actor(game, players)
        return SlowActor(
            self.opened,
            plain.game_id,
            plain.ruleset,
            plain.options,
            game.seed,
            self.sessions,
            writer=self.log_writer,
        )

    async def running_actor(self, game_id: str) -> GameActor | None:
        if game_id not in self.followed_games() and not self.opened.is_set():
            game = await self.game(game_id)
            if game.status is GameStatus.RUNNING:
                self.asked_before_open += 1
        return await super().running_actor(game_id)


@pytest.fixture
async def slow_hub(tmp_path: Path) -> AsyncIterator[SlowStartHub]:
    async with hub_on_sqlite(tmp_path, lambda s: SlowStartHub(s, Policy())) as running:
        try:
            yield running
        finally:
            running.opened.set()  # a start still held goes on, so the hub can close


@pytest.mark.rule("X1")
async def test_a_waiting_caller_enters_a_game_whose_actor_opens_after_its_status_says_running(
    slow_hub: SlowStartHub,
) -> None:
    hub = slow_hub
    founded = await hub.found(GameOptions(players=5), private=False, host_account_id=None)
    game_id = founded.game.id
    session = await call_in(hub)
    await press(session, "2")  # guest
    await press(session, "1")  # public games
    await press(session, "1#")  # the first world
    await press(session, "1#")  # the first table
    assert session.announcer.state == "lobby" and session.game_id == game_id
    for n in range(2, 5):
        await hub.join(game_id, account_id=None, name=f"p{n}", channel="phone")
    # The fifth seat fills the table: the status says RUNNING, the actor is not open yet.
    last = asyncio.create_task(hub.join(game_id, account_id=None, name="p5", channel="phone"))
    # The caller's waiter reads the status (about once a second) and asks for the game.
    await wait_until(lambda: hub.asked_before_open >= 1 or session.announcer.state != "lobby", 10)
    assert not heard(session, NOT_RUNNING)
    assert session.announcer.state == "lobby" and session.game_id == game_id

    hub.opened.set()  # the actor's writes go through: the game is followed
    await last
    await wait_until(lambda: session.seat is not None, 5)
    assert session.seat == 1
    assert heard(session, "Deine Hausnummer ist 1")
    assert not heard(session, NOT_RUNNING)
    await session.close()


async def test_a_reader_of_a_starting_game_gets_its_actor_once_it_is_open(
    slow_hub: SlowStartHub,
) -> None:
    """What a browser's waiting room and a caller's lobby do when the stored status says
    RUNNING: ask the hub for the game; they get its actor when it is open, not "none"."""
    hub = slow_hub
    founded = await hub.found(GameOptions(players=5), private=False, host_account_id=None)
    game_id = founded.game.id
    for n in range(1, 5):
        await hub.join(game_id, account_id=None, name=f"p{n}", channel="phone")
    last = asyncio.create_task(hub.join(game_id, account_id=None, name="p5", channel="phone"))
    while (await hub.game(game_id)).status is not GameStatus.RUNNING:
        await asyncio.sleep(0.01)
    readers = [
        asyncio.create_task(hub.running_actor(game_id)),
        asyncio.create_task(hub.readable(game_id)),
    ]
    # Not answered while the actor is not open (an answer now could only be "none").
    done, _ = await asyncio.wait(readers, timeout=1.0)
    assert not done, [reader.result() for reader in done]

    hub.opened.set()
    assert (await last).started
    actor = hub.actors[game_id]
    assert actor.state is not None
    assert await asyncio.gather(*readers) == [actor, actor]
