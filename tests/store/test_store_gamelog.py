"""Games and their event/command logs: ordered, append-only, never duplicated."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import delete, func, select, update
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine

from vollmond.store import (
    GameExistsError,
    GameNotFoundError,
    GameStatus,
    NewEvent,
    SeqConflictError,
    Sessions,
    append_commands,
    append_events,
    create_engine,
    create_game,
    find_game_by_invitation,
    get_game,
    list_games,
    make_sessionmaker,
    next_command_seq,
    next_event_seq,
    read_commands,
    read_events,
    set_game_status,
)
from vollmond.store.models import GameEventRow

from .support import Target

EVERYONE = {"kind": "everyone"}
OPTIONS: dict[str, Any] = {"size": 8, "deck": "klassisch", "sofort_mord": False}


def _events(*kinds: str) -> list[NewEvent]:
    return [NewEvent(kind, {"n": i}, EVERYONE) for i, kind in enumerate(kinds)]


async def _game(sessions: Sessions, **kwargs: Any) -> str:
    return (await create_game(sessions, world="duesterwald", options=OPTIONS, seed=7, **kwargs)).id


async def _event_count(sessions: Sessions, game_id: str) -> int:
    async with sessions() as session:
        count = await session.scalar(
            select(func.count()).select_from(GameEventRow).where(GameEventRow.game_id == game_id)
        )
    return count or 0


async def test_events_read_back_in_order(sessions: Sessions) -> None:
    game_id = await _game(sessions)
    assert await next_event_seq(sessions, game_id) == 1
    await append_events(sessions, game_id, 1, _events("game_started", "roles_dealt"))
    await append_events(sessions, game_id, 3, _events("night_began"))
    events = await read_events(sessions, game_id)
    assert [(e.seq, e.kind) for e in events] == [
        (1, "game_started"),
        (2, "roles_dealt"),
        (3, "night_began"),
    ]
    assert [e.seq for e in await read_events(sessions, game_id, after_seq=2)] == [3]
    assert [e.seq for e in await read_events(sessions, game_id, after_seq=1, limit=1)] == [2]
    assert await read_events(sessions, game_id, after_seq=3) == []
    assert await next_event_seq(sessions, game_id) == 4


async def test_payload_and_audience_round_trip(sessions: Sessions) -> None:
    game_id = await _game(sessions)
    payload = {"victim": 3, "names": ["Jörg", "Zoë", "狼"], "nested": {"a": [1, 2.5, None, True]}}
    audience = {"kind": "players", "seats": [1, 4]}
    now = datetime(2026, 11, 30, 23, 59, 59, 123456, tzinfo=UTC)
    await append_events(sessions, game_id, 1, [NewEvent("killed", payload, audience)], now=now)
    [event] = await read_events(sessions, game_id)
    assert event.payload == payload
    assert event.audience == audience
    assert event.created_at == now


async def test_seq_conflict_raises_and_writes_nothing(sessions: Sessions) -> None:
    """A restarted actor that re-sends old events must not duplicate any of them."""
    game_id = await _game(sessions)
    await append_events(sessions, game_id, 1, _events("a", "b", "c"))
    with pytest.raises(SeqConflictError) as raised:
        await append_events(sessions, game_id, 2, _events("b2", "c2", "d2"))
    assert raised.value.expected_next_seq == 2
    # The batch overlapped the log only partly, and still nothing of it was written.
    assert [e.kind for e in await read_events(sessions, game_id)] == ["a", "b", "c"]
    assert await _event_count(sessions, game_id) == 3


async def test_gap_in_the_log_is_a_conflict_too(sessions: Sessions) -> None:
    game_id = await _game(sessions)
    await append_events(sessions, game_id, 1, _events("a"))
    with pytest.raises(SeqConflictError):
        await append_events(sessions, game_id, 3, _events("c"))
    with pytest.raises(SeqConflictError):
        await append_events(sessions, await _game(sessions), 2, _events("first"))
    assert await _event_count(sessions, game_id) == 1


async def test_two_actors_racing_for_the_same_seq(sessions: Sessions) -> None:
    """Only one of several concurrent writers at the same position can win."""
    game_id = await _game(sessions)
    await append_events(sessions, game_id, 1, _events("start"))
    results = await asyncio.gather(
        *(append_events(sessions, game_id, 2, _events(f"actor{i}", "x")) for i in range(6)),
        return_exceptions=True,
    )
    failures = [r for r in results if isinstance(r, BaseException)]
    assert len(failures) == 5
    assert all(isinstance(f, SeqConflictError) for f in failures), failures
    events = await read_events(sessions, game_id)
    assert [e.seq for e in events] == [1, 2, 3]
    assert len({e.kind for e in events[1:2]}) == 1


async def test_unknown_game_is_not_a_seq_conflict(sessions: Sessions) -> None:
    with pytest.raises(GameNotFoundError):
        await append_events(sessions, "no-such-game", 1, _events("a"))
    with pytest.raises(GameNotFoundError):
        await append_commands(sessions, "no-such-game", 1, [{"type": "vote"}])
    assert await read_events(sessions, "no-such-game") == []


async def test_bad_sequence_arguments(sessions: Sessions) -> None:
    game_id = await _game(sessions)
    with pytest.raises(ValueError, match="start at 1"):
        await append_events(sessions, game_id, 0, _events("a"))
    with pytest.raises(ValueError, match="negative"):
        await read_events(sessions, game_id, after_seq=-1)
    assert await append_events(sessions, game_id, 1, []) == []


async def test_event_log_is_append_only_in_the_database(sessions: Sessions) -> None:
    game_id = await _game(sessions)
    await append_events(sessions, game_id, 1, _events("a"))
    for statement in (update(GameEventRow).values(kind="forged"), delete(GameEventRow)):
        with pytest.raises(DBAPIError, match="append-only"):
            async with sessions.begin() as session:
                await session.execute(statement)
    assert [e.kind for e in await read_events(sessions, game_id)] == ["a"]


async def test_command_log(sessions: Sessions) -> None:
    game_id = await _game(sessions)
    assert await next_command_seq(sessions, game_id) == 1
    commands: list[Any] = [{"type": "vote", "seat": 2, "target": 5}, {"type": "tick"}]
    stored = await append_commands(sessions, game_id, 1, commands)
    assert [c.seq for c in stored] == [1, 2]
    with pytest.raises(SeqConflictError):
        await append_commands(sessions, game_id, 2, [{"type": "again"}])
    assert [c.command for c in await read_commands(sessions, game_id)] == commands
    assert [c.seq for c in await read_commands(sessions, game_id, after_seq=1)] == [2]
    assert await next_command_seq(sessions, game_id) == 3


async def test_log_survives_a_new_engine(target: Target, sessions: Sessions) -> None:
    """What a restarted server sees: a fresh engine reads the same log and game list."""
    game_id = await _game(sessions, status=GameStatus.RUNNING)
    await append_events(sessions, game_id, 1, _events("a", "b"))
    fresh: AsyncEngine = create_engine(target.url, schema=target.schema)
    try:
        restarted = make_sessionmaker(fresh)
        assert [g.id for g in await list_games(restarted)] == [game_id]
        assert [e.kind for e in await read_events(restarted, game_id)] == ["a", "b"]
        assert await next_event_seq(restarted, game_id) == 3
    finally:
        await fresh.dispose()


async def test_game_life_cycle(sessions: Sessions) -> None:
    game = await create_game(
        sessions, world="duesterwald", options=OPTIONS, seed=2**63 - 1, game_id="g1"
    )
    assert (game.status, game.private, game.finished_at) == (GameStatus.LOBBY, False, None)
    assert await get_game(sessions, "g1") == game
    with pytest.raises(GameExistsError):
        await create_game(sessions, world="duesterwald", options=OPTIONS, seed=1, game_id="g1")
    with pytest.raises(ValueError, match="seed"):
        await create_game(sessions, world="duesterwald", options=OPTIONS, seed=-1)
    running = await set_game_status(sessions, "g1", GameStatus.RUNNING)
    assert running.finished_at is None
    ended_at = datetime(2026, 12, 1, tzinfo=UTC)
    finished = await set_game_status(sessions, "g1", GameStatus.FINISHED, now=ended_at)
    assert finished.finished_at == ended_at
    assert await list_games(sessions) == []
    assert [g.id for g in await list_games(sessions, statuses=[GameStatus.FINISHED])] == ["g1"]
    with pytest.raises(GameNotFoundError):
        await get_game(sessions, "nope")
    with pytest.raises(GameNotFoundError):
        await set_game_status(sessions, "nope", GameStatus.ABORTED)


KEY = b"k" * 32


async def test_private_round_found_by_invitation_code_only(sessions: Sessions) -> None:
    private = await create_game(
        sessions,
        world="kepler7",
        options=OPTIONS,
        seed=1,
        invitation_code="MOND-4711-XQ",
        invitation_key=KEY,
    )
    public = await create_game(sessions, world="kepler7", options=OPTIONS, seed=2)
    assert private.private
    found = await find_game_by_invitation(sessions, " mond 4711 xq ", KEY)
    assert found is not None
    assert found.id == private.id
    assert await find_game_by_invitation(sessions, "MOND-4711-XR", KEY) is None
    assert await find_game_by_invitation(sessions, "  ", KEY) is None
    with pytest.raises(GameExistsError):
        await create_game(
            sessions,
            world="kepler7",
            options=OPTIONS,
            seed=3,
            invitation_code="mond4711xq",
            invitation_key=KEY,
        )
    listed = await list_games(sessions, world="kepler7", include_private=False)
    assert [g.id for g in listed] == [public.id]
