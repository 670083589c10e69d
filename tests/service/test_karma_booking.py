"""A game that ends in the running service books its players' karma once (P3), before the
game is marked finished, and only for people with an account (bots and guests earn nothing)."""

from __future__ import annotations

import asyncio
import time

import pytest

from vollmond.community.karma import KarmaReason
from vollmond.engine.standard.options import decode_options
from vollmond.settings.karma import KarmaSettings
from vollmond.store import karma_history
from vollmond.store.games import get_game
from vollmond.store.models import AccountRow, GameStatus

from .support import ServiceFactory
from .test_release import POLICY, QUICK


@pytest.mark.rule("P3")
async def test_a_game_that_ends_books_karma_for_its_accounts(
    start_service: ServiceFactory,
) -> None:
    async with start_service(POLICY) as service:
        hub = service.hub
        hub.karma.rules = KarmaSettings(min_humans=4)
        accounts = []
        async with hub.sessions.begin() as session:
            for name in ("Anke", "Bodo", "Carl"):
                row = AccountRow(name=name, name_key=name.lower(), password_hash="-")
                session.add(row)
                accounts.append(row)
        ids = [row.id for row in accounts]
        options = decode_options(
            {
                "players": 4,
                "deck": "custom",
                "custom_roles": [["evil", 1], ["seer", 1], ["filler", 2]],
                "durations": QUICK,
                "stalemate_rounds": 1,
            }
        )
        founded = await hub.found(options, private=False, host_account_id=ids[0], host_name="Anke")
        await hub.join(founded.game.id, account_id=ids[1], name="Bodo")
        await hub.join(founded.game.id, account_id=ids[2], name="Carl")
        await hub.join(founded.game.id, account_id=None, name="Gast")  # a guest: no ledger
        game_id = founded.game.id

        # Booked before the status changes: once the game reads as finished, karma is there.
        deadline = time.monotonic() + 20
        while (await get_game(hub.sessions, game_id)).status is not GameStatus.FINISHED:
            assert time.monotonic() < deadline, "the game was not marked finished"
            await asyncio.sleep(0.02)
        for account_id in ids:
            history = await karma_history(hub.sessions, account_id)
            assert history, account_id
            assert {e.game_id for e in history} == {game_id}
            assert KarmaReason.STAY.value in {e.reason for e in history}
