"""`vollmond admin abort-game` through typer's CliRunner (another "process" than the service,
as an operator's script), and the running service's enforcement loop stopping the game."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.moderation.test_cli import Cli, ok, refused
from tests.store.support import Target
from vollmond.engine.standard import GameOptions
from vollmond.moderation import Moderation
from vollmond.moderation.audit import audit_log
from vollmond.service.enforce import Enforcer
from vollmond.service.hub import Hub
from vollmond.service.policy import Policy
from vollmond.settings.moderation import ModerationSettings
from vollmond.store import Sessions, get_game
from vollmond.store.models import GameStatus

from .conftest import People


@pytest.fixture
def cli(target: Target, tmp_path: Path) -> Cli:
    return Cli(target, tmp_path / "data")


@pytest.fixture
async def hub(sessions: Sessions) -> AsyncIterator[Hub]:
    running = Hub(sessions, Policy())
    try:
        yield running
    finally:
        await running.close()


async def test_an_admin_aborts_a_running_game_from_the_command_line(
    cli: Cli, sessions: Sessions, hub: Hub, people: People, tmp_path: Path
) -> None:
    enforcer = Enforcer(Moderation(sessions, ModerationSettings(), tmp_path / "data"), hub)
    founded = await hub.found(GameOptions(players=4), private=False, host_account_id=None)
    game = founded.game.id
    for i in range(4):
        await hub.join(game, account_id=None, name=f"p{i}", channel="web")
    assert game in hub.actors

    refused(await cli("admin", "abort-game", game, "--reason", "x", "--by", "Mo"), "may not")
    await enforcer.poll()
    assert game in hub.actors  # a moderator's attempt changed nothing

    out = ok(await cli("admin", "abort-game", game, "--reason", "Betrug", "--by", "Ada"))
    assert "aborted (was running)" in out
    assert (await get_game(sessions, game)).status is GameStatus.ABORTED
    await enforcer.poll()
    assert game not in hub.actors
    entries = await audit_log(sessions, target_kind="game", target_id=game)
    assert [e.action for e in entries] == ["game.abort"] and entries[
        0
    ].actor_account_id == people.admin
    refused(await cli("admin", "abort-game", game, "--reason", "x", "--by", "Ada"), "aborted")
