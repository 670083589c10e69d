"""Games name their rule set (migration 0007, issue 14): games stored before it are standard
games, and a game founded with another rule set reads back with it."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from vollmond.store import create_game, get_game, list_games, make_sessionmaker, migrate
from vollmond.store.models import GameStatus


async def test_games_stored_before_the_column_are_standard_games(engine: AsyncEngine) -> None:
    await migrate(engine, "0006")
    async with engine.begin() as connection:
        await connection.execute(
            text(
                "INSERT INTO games (id, world, options, seed, status, created_at)"
                " VALUES ('old', 'werwolf', '{}', 7, 'running', CURRENT_TIMESTAMP)"
            )
        )
    await migrate(engine)
    game = await get_game(make_sessionmaker(engine), "old")
    assert (game.ruleset, game.world, game.seed) == ("standard", "werwolf", 7)


async def test_a_game_keeps_the_rule_set_it_was_founded_with(engine: AsyncEngine) -> None:
    await migrate(engine)
    sessions = make_sessionmaker(engine)
    created = await create_game(
        sessions, world="duesterwald", ruleset="classic", options={}, seed=1
    )
    assert created.ruleset == "classic"
    assert (await get_game(sessions, created.id)).ruleset == "classic"
    listed = await list_games(sessions, statuses=(GameStatus.LOBBY,))
    assert [g.ruleset for g in listed] == ["classic"]
