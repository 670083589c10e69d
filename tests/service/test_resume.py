"""GameActor.resume: the exact crash points a SIGKILL test can only hit by luck.

A crash after a command was logged but before its events were (the actor writes the command
log first) must leave a log that `resume` repairs: the missing events are appended once, at the
right seqs, and a second restart finds nothing to repair. Timers resume on their absolute
deadlines: one still ahead fires then, one that passed while the server was down fires at once.
A table of bots goes on being played by its bots after the restart, seated again on the same
houses. Run on SQLite and on the real PostgreSQL.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from tests.store.support import POSTGRES_URL
from vollmond.bots.table import BOT_CHANNEL, BotSeat
from vollmond.engine.ruleset import get_ruleset
from vollmond.engine.standard import GameOptions, Say, UseAbility
from vollmond.engine.standard.options import Durations
from vollmond.engine.standard.queries import night_room
from vollmond.engine.standard.smart_bot import SmartBot
from vollmond.engine.standard.types import ActionKind, DeckId, Phase, RoleId
from vollmond.service import actor as actor_module
from vollmond.service.actor import Accepted, GameActor
from vollmond.service.hub import Hub
from vollmond.store import (
    NewEvent,
    Sessions,
    append_commands,
    create_game,
    next_command_seq,
    open_store,
    read_commands,
    read_events,
)
from vollmond.store.models import GameStatus

SEED = 4711

STANDARD = get_ruleset("standard")


@pytest.fixture
async def store(database: tuple[str, str | None], tmp_path: Path) -> AsyncIterator[Sessions]:
    backend, schema = database
    url = POSTGRES_URL if backend == "postgresql" else f"sqlite+aiosqlite:///{tmp_path / 'db'}"
    async with open_store(url, schema=schema) as sessions:
        yield sessions


class Clock:
    """Wall-clock seconds the test sets; the actor computes deadlines from it."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


async def _game(store: Sessions, options: GameOptions) -> str:
    game = await create_game(
        store,
        world=options.world,
        options={"engine": dict(options.to_json())},
        seed=SEED,
        status=GameStatus.RUNNING,
    )
    return game.id


def _phase(actor: GameActor) -> Phase:
    assert actor.state is not None
    phase: Phase = actor.state.phase
    return phase


def _rows(stored: list[Any]) -> list[tuple[int, str, Any, Any]]:
    return [(e.seq, e.kind, e.payload, e.audience) for e in stored]


async def test_crash_between_command_and_event_append_is_repaired(
    store: Sessions, monkeypatch: pytest.MonkeyPatch
) -> None:
    options = GameOptions(players=8)
    game_id = await _game(store, options)
    first = GameActor(game_id, STANDARD, options, SEED, store)
    await first.start()
    assert first.state is not None
    evil = sorted(night_room(first.state))
    target = next(p.seat for p in first.state.players if p.seat not in evil)
    vote = await first.submit(UseAbility(evil[0], ActionKind.EVIL_VOTE, target))
    assert isinstance(vote, Accepted)
    before_crash = await read_events(store, game_id)

    # The process dies after the command reached the log, before its events did.
    async def crash(*args: object, **kwargs: object) -> list[NewEvent]:
        raise ConnectionError("killed between the command append and the event append")

    with monkeypatch.context() as patch:
        patch.setattr(actor_module, "append_events", crash)
        with pytest.raises(ConnectionError):
            await first.submit(Say(evil[1], "Nummer eins, einverstanden."))
    await first.stop()
    assert _rows(await read_events(store, game_id)) == _rows(before_crash)

    second = GameActor(game_id, STANDARD, options, SEED, store)
    await second.resume()
    repaired = await read_events(store, game_id)
    assert _rows(repaired[: len(before_crash)]) == _rows(before_crash)
    (chat,) = repaired[len(before_crash) :]
    assert (chat.seq, chat.kind, chat.payload, chat.audience) == (
        len(before_crash) + 1,
        "chat",
        {"room": "night_room", "seat": evil[1], "text": "Nummer eins, einverstanden."},
        {"kind": "seats", "seats": evil},
    )
    await second.stop()

    # A second restart finds a whole log: nothing appended, nothing twice.
    third = GameActor(game_id, STANDARD, options, SEED, store)
    await third.resume()
    assert _rows(await read_events(store, game_id)) == _rows(repaired)
    assert third.next_event_seq == len(repaired) + 1
    assert third.state == second.state
    accepted = await third.submit(UseAbility(evil[1], ActionKind.EVIL_VOTE, target))
    assert isinstance(accepted, Accepted) and accepted.first_seq == len(repaired) + 1
    await third.stop()


@pytest.mark.parametrize(("down_s", "fires_within"), [(119.7, (0.1, 1.5)), (500.0, (0.0, 0.5))])
async def test_night_timer_keeps_its_absolute_deadline(
    store: Sessions, down_s: float, fires_within: tuple[float, float]
) -> None:
    """Night of 120 s started at t=1000: restarted at 1000 + `down_s`, the night ends at
    t=1120 (0.3 s later), or at once when that moment passed while the server was down."""
    options = GameOptions(players=6, durations=Durations(night_s=120.0))
    game_id = await _game(store, options)
    clock = Clock(1000.0)
    first = GameActor(game_id, STANDARD, options, SEED, store, clock=clock)
    await first.start()
    await first.stop()

    clock.now = 1000.0 + down_s
    second = GameActor(game_id, STANDARD, options, SEED, store, clock=clock)
    loop = asyncio.get_running_loop()
    resumed = loop.time()
    await second.resume()
    assert _phase(second) is Phase.NIGHT
    while _phase(second) is Phase.NIGHT:
        assert loop.time() - resumed < fires_within[1], "the night timer did not fire in time"
        await asyncio.sleep(0.02)
    assert loop.time() - resumed >= fires_within[0]
    assert _phase(second) is Phase.MORNING
    await second.stop()


async def test_table_started_below_its_size_resumes_with_the_seats_taken(store: Sessions) -> None:
    """The host may start before the table is full: the deal is for the seats taken, and a
    restart must deal for them too, or it would replay a different game."""
    hub = Hub(store)
    founded = await hub.found(
        GameOptions(players=8), private=False, host_account_id=None, host_name="Gastgeber"
    )
    for name in ("Anna", "Bert", "Cleo", "Dora"):
        await hub.join(founded.game.id, account_id=None, name=name)
    actor = await hub.start(founded.game.id, by_account_id=None)
    assert actor.state is not None and len(actor.state.players) == 5
    before = actor.state
    await hub.close()

    restarted = Hub(store)
    await restarted.boot()
    try:
        assert restarted.actors[founded.game.id].state == before
    finally:
        await restarted.close()


async def test_one_unreadable_log_does_not_keep_other_games_down(store: Sessions) -> None:
    hub = Hub(store)
    games = []
    for host in ("Erste", "Zweite"):
        founded = await hub.found(
            GameOptions(players=4), private=False, host_account_id=None, host_name=host
        )
        for name in ("Anna", "Bert", "Cleo"):
            await hub.join(founded.game.id, account_id=None, name=name)
        games.append(founded.game.id)
    await hub.close()
    broken, whole = games
    # A command the rules refuse at this point (a vote at night): the log no longer replays.
    bogus = {"command": {"type": "Vote", "actor": 1, "target": None}, "timers": []}
    await append_commands(store, broken, await next_command_seq(store, broken), [bogus])

    restarted = Hub(store)
    await restarted.boot()
    try:
        assert set(restarted.actors) == {whole}
    finally:
        await restarted.close()


async def _rename_commands_table(store: Sessions, old: str, new: str) -> None:
    """A real store failure on both backends: the command log's table is gone for a while."""
    async with store() as session, session.begin():
        await session.execute(text(f"ALTER TABLE {old} RENAME TO {new}"))


async def test_a_phase_timer_that_fails_to_write_is_tried_again(store: Sessions) -> None:
    """The night ends while the database cannot take the write: the timer's command fails,
    and the actor tries it again (backing off) instead of leaving the game in that night
    until a restart; once the database answers again, the morning comes."""
    options = GameOptions(players=6, durations=Durations(night_s=0.5))
    game_id = await _game(store, options)
    actor = GameActor(game_id, STANDARD, options, SEED, store)
    await actor.start()
    loop = asyncio.get_running_loop()
    try:
        await _rename_commands_table(store, "game_commands", "game_commands_away")
        failing_since = loop.time()
        await asyncio.sleep(1.5)  # the night's timer has fired and failed by now
        assert _phase(actor) is Phase.NIGHT
        await _rename_commands_table(store, "game_commands_away", "game_commands")
        back = loop.time()
        while _phase(actor) is Phase.NIGHT:
            assert loop.time() - back < 10.0, "the failed night timer was not tried again"
            await asyncio.sleep(0.05)
        assert _phase(actor) is Phase.MORNING
        assert loop.time() - failing_since >= 1.5
    finally:
        await actor.stop()


QUICK_BOTS = (0.002, 0.01)
"""Bots that act within the first 1 % of a phase: 0.24-1.2 s into a 120-s night."""


async def test_bots_play_on_after_a_restart(store: Sessions) -> None:
    """A table of six bots, stopped before any bot moved (the first acts 18 s into the night
    at their pace): the restarted hub seats a bot again on every bot seat, the rule set's
    table bot as at the lobby, and they play — the night room's votes fix the victim (N7)
    long before the night's 120 s are up, so no timer did it."""
    hub = Hub(store)
    deck = ((RoleId.EVIL, 2), (RoleId.SEER, 1), (RoleId.FILLER, 3))
    options = GameOptions(players=6, deck=DeckId.CUSTOM, custom_roles=deck)
    founded = await hub.found(options, private=False, host_account_id=None)
    game_id = founded.game.id
    assert await hub.fill_with_bots(game_id, by_account_id=None) == 6
    await hub.close()
    (dealt,) = await read_commands(store, game_id)  # the deal, and no bot's move yet
    assert isinstance(dealt.command, dict) and dealt.command["command"] is None

    restarted = Hub(store)
    restarted.bot_patience = QUICK_BOTS
    await restarted.boot()
    try:
        actor = restarted.actors[game_id]
        async with asyncio.timeout(30):
            while actor.state is None or not (
                actor.state.night and actor.state.night.victim_locked
            ):
                await asyncio.sleep(0.05)
        assert _phase(actor) is Phase.NIGHT and actor.state.round == 1
        room = night_room(actor.state)
        voters = set()
        for logged in await read_commands(store, game_id, 1):  # every move after the deal
            assert isinstance(logged.command, dict)
            move = STANDARD.decode_command(logged.command["command"])
            if isinstance(move, UseAbility) and move.kind is ActionKind.EVIL_VOTE:
                voters.add(move.actor)
        assert voters == set(room)
        bots = [s for s in actor.subscribers if isinstance(s, BotSeat)]
        seats = await restarted.seats(game_id)
        assert sorted(b.seat for b in bots) == sorted(
            s.house for s in seats if s.channel == BOT_CHANNEL and s.house is not None
        )
        assert all(isinstance(b.bot, SmartBot) for b in bots)
    finally:
        await restarted.close()
