"""Bots at a real table: three phone callers fill a seven-card deck with four bots by key and
play to the end on a real hub (SQLite), the phases run by the actor's own timers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.phone.session.support import call_in, heard, press, wait_until
from tests.store.templates import seed_sqlite
from vollmond.bots.table import BOT_CHANNEL, BotSeat
from vollmond.engine.standard import Durations, GameOptions
from vollmond.engine.standard.types import DeckId, Phase
from vollmond.phone.session.codes import phone_code
from vollmond.service.actor import GameActor
from vollmond.service.hub import Hub, LobbyError
from vollmond.service.policy import Policy
from vollmond.store import open_store

FAST = Durations(steal_s=1.0, night_s=1.5, morning_s=1.0, day_s=1.5, vote_s=1.5, floor_s=1.0)


@pytest.fixture
async def hub(tmp_path: Path) -> AsyncIterator[Hub]:
    await seed_sqlite(tmp_path / "bots.db")
    async with open_store(f"sqlite+aiosqlite:///{tmp_path / 'bots.db'}") as sessions:
        running = Hub(sessions, Policy())
        try:
            yield running
        finally:
            await running.close()


async def test_three_callers_and_four_bots_play_a_seven_card_deck_to_the_end(hub: Hub) -> None:
    """Founded as the browser founds (short phases), three callers join by code, the host
    fills the rest with bots (the hub call behind the web button and the phone key)."""
    founded = await hub.found(
        GameOptions(players=7, deck=DeckId.STARTER, durations=FAST),
        private=True,
        host_account_id=None,
        channel="web",
    )
    assert founded.invitation_code is not None
    digits = phone_code(founded.invitation_code)
    humans = []
    for n in (1, 2, 3):
        caller = await call_in(hub, f"+493030{n}")
        await press(caller, "2")
        await press(caller, "2")
        await press(caller, digits + "#")
        humans.append(caller)
    await press(humans[0], "2#")  # not the founder: the key is refused
    assert heard(humans[0], "Die Auswahl 2 gibt es hier nicht.")
    with pytest.raises(LobbyError):
        await hub.fill_with_bots(founded.game.id, by_account_id=12345)  # not the host
    assert await hub.fill_with_bots(founded.game.id, by_account_id=None) == 4
    table = await hub.table(founded.game.id)
    bots = [s for s in table.seats if s.channel == BOT_CHANNEL]
    assert [s.name for s in bots] == ["Bot 1", "Bot 2", "Bot 3", "Bot 4"]
    assert all(s.account_id is None for s in bots)  # no account: no karma
    actor = hub.actors[founded.game.id]
    players = actor_bots(actor)
    assert sorted(b.seat for b in players) == sorted(s.house for s in bots if s.house)
    for human in humans:
        await wait_until(lambda h=human: h.seat is not None)  # type: ignore[misc]
    async with asyncio.timeout(90):
        while actor.state is None or actor.state.phase is not Phase.OVER:
            await asyncio.sleep(0.1)
    state = actor.state
    assert state is not None and state.outcome is not None
    acted = [when for b in players for when, _ in b.commands]
    assert acted  # the bots played
    assert min(acted) >= 0.15 * min(FAST.night_s, FAST.day_s, FAST.vote_s) / 3  # never at once
    assert actor_bots(actor) == []  # and left the game when it ended
    for human in humans:
        await wait_until(lambda h=human: h.game_id is None, 10)  # type: ignore[misc]
        assert heard(human, "Das Spiel ist zu Ende")
        await human.close()


def actor_bots(actor: GameActor) -> list[BotSeat]:
    return [s for s in actor.subscribers if isinstance(s, BotSeat)]


async def test_the_founder_fills_the_table_by_key_and_bots_act_within_the_phase(
    hub: Hub,
) -> None:
    host = await call_in(hub, "+4930401")
    await press(host, "2")
    await press(host, "00#")
    await press(host, "1#")  # the standard rules
    await press(host, "1#")
    await press(host, "7#")
    await press(host, "1")  # standard settings
    assert host.announcer.founder and host.announcer.state == "lobby"
    assert heard(host, "2 Raute füllt mit Bots auf")
    await press(host, "2#")
    assert heard(host, "6 Bots sitzen jetzt mit am Tisch.")
    await wait_until(lambda: host.seat is not None)
    game_id = host.game_id
    assert game_id is not None
    actor = hub.actors[game_id]
    bot_seats = actor_bots(actor)
    assert len(bot_seats) == 6
    state = actor.state
    assert state is not None and state.phase is Phase.NIGHT
    # Within the phase, not at once: nothing in the first 15 % of a 120 s night.
    await asyncio.sleep(0.5)
    assert all(not b.commands for b in bot_seats)
    await host.close()
