"""Private rounds (P1) and the unlocks of larger ones (P2) over the real HTTP API."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from vollmond.service.hub import INVITATION_ALPHABET
from vollmond.service.policy import PRIVATE_SEATS_GRANT, CreditPath, KarmaPath, Policy, UnlockPath
from vollmond.store import (
    add_grant,
    credit_balance,
    credit_change,
    credit_history,
    grant_premium,
    list_games,
    revoke_grant,
)
from vollmond.store import karma_change as add_karma
from vollmond.store.models import GameStatus

from .support import ApiClient, Service, ServiceFactory


async def signed_in(api: Callable[[], ApiClient], name: str) -> ApiClient:
    client = api()
    await client.signup(name)
    return client


async def found_private(client: ApiClient, size: int, **options: Any) -> Any:
    return await client.post("/api/games", {"size": size, "private": True, **options})


def account(client: ApiClient) -> int:
    assert client.account_id is not None
    return client.account_id


@pytest.mark.rule("P1")
async def test_invitation_codes_are_long_random_and_distinct(
    api: Callable[[], ApiClient],
) -> None:
    host = await signed_in(api, "Host")
    codes = []
    for _ in range(5):
        response = await found_private(host, 6, join=False)
        assert response.status_code == 201
        codes.append(response.json()["invitation_code"])
    pattern = re.compile(f"[{INVITATION_ALPHABET}]{{10}}")
    assert all(pattern.fullmatch(code) for code in codes), codes
    assert len(set(codes)) == 5
    # 10 symbols of 32 = 50 bits; no look-alikes (0/O, 1/I) to misread on a phone.
    assert len(set(INVITATION_ALPHABET)) == 32
    assert not set("01OI") & set(INVITATION_ALPHABET)


@pytest.mark.rule("P1")
async def test_private_rounds_are_joined_only_by_code_and_never_listed(
    api: Callable[[], ApiClient],
) -> None:
    host = await signed_in(api, "Host")
    response = await found_private(host, 5)
    assert response.status_code == 201
    founded = response.json()
    game_id, code = founded["game"], founded["invitation_code"]
    guest = await signed_in(api, "Guest")

    assert (await guest.get("/api/games")).json()["games"] == []
    assert (await guest.get(f"/api/games/{game_id}")).status_code == 404
    by_id = await guest.post(f"/api/games/{game_id}/join")
    assert by_id.status_code == 404

    wrong = await guest.post("/api/join", {"code": "ABCDEFGHJK"})
    assert wrong.status_code == 404
    assert wrong.json()["error"] == "bad_code"

    # Codes read over the phone come back in lower case or with dashes.
    spoken = f"{code[:5].lower()}-{code[5:]}"
    joined = await guest.post("/api/join", {"code": spoken})
    assert joined.status_code == 201, joined.text
    assert joined.json()["game"] == game_id
    seen = (await guest.get(f"/api/games/{game_id}")).json()["game"]
    assert seen["private"] is True
    assert [p["name"] for p in seen["players"]] == ["Host", "Guest"]
    assert (await host.get(f"/api/games/{game_id}")).status_code == 200


@pytest.mark.rule("P1")
async def test_code_attempts_are_rate_limited(api: Callable[[], ApiClient]) -> None:
    host = await signed_in(api, "Host")
    code = (await found_private(host, 5)).json()["invitation_code"]
    guesser = await signed_in(api, "Guesser")
    statuses = [
        (await guesser.post("/api/join", {"code": f"WRONG{i:05d}"})).status_code for i in range(10)
    ]
    assert statuses == [404] * 10
    limited = await guesser.post("/api/join", {"code": code})
    assert limited.status_code == 429
    assert limited.json()["error"] == "rate_limited"


@pytest.mark.rule("P1", "P2")
async def test_private_rounds_are_limited_to_nine_without_an_unlock(
    api: Callable[[], ApiClient],
) -> None:
    host = await signed_in(api, "Host")
    assert (await found_private(host, 9)).status_code == 201
    refused = await found_private(host, 10)
    assert refused.status_code == 409
    assert refused.json()["error"] == "private_size_locked"


@pytest.mark.rule("P2", "X7")
async def test_premium_unlocks_larger_private_rounds(
    api: Callable[[], ApiClient], service: Service
) -> None:
    host = await signed_in(api, "Host")
    now = datetime.now(UTC)
    await grant_premium(
        service.hub.sessions, account(host), until=now + timedelta(days=1), reason="test"
    )
    assert (await found_private(host, 30)).status_code == 201
    too_big = await found_private(host, 31)
    assert too_big.status_code == 409
    assert too_big.json()["error"] == "private_size_locked"


@pytest.mark.rule("P2", "X7")
async def test_expired_premium_unlocks_nothing(
    api: Callable[[], ApiClient], service: Service
) -> None:
    host = await signed_in(api, "Host")
    then = datetime.now(UTC) - timedelta(days=10)
    await grant_premium(
        service.hub.sessions,
        account(host),
        until=then + timedelta(days=1),
        now=then,
        reason="test",
    )
    assert (await found_private(host, 10)).status_code == 409


@pytest.mark.rule("P2")
async def test_a_personal_grant_unlocks_up_to_its_value(
    api: Callable[[], ApiClient], service: Service
) -> None:
    host = await signed_in(api, "Host")
    grant = await add_grant(
        service.hub.sessions, account(host), PRIVATE_SEATS_GRANT, value=14, reason="club"
    )
    assert (await found_private(host, 14)).status_code == 201
    assert (await found_private(host, 15)).status_code == 409
    await revoke_grant(service.hub.sessions, grant.id)
    assert (await found_private(host, 10)).status_code == 409


@pytest.mark.rule("P2")
async def test_karma_above_the_threshold_unlocks_up_to_its_size(
    api: Callable[[], ApiClient], service: Service
) -> None:
    host = await signed_in(api, "Host")
    await add_karma(service.hub.sessions, account(host), 499, "games")
    assert (await found_private(host, 12)).status_code == 409
    await add_karma(service.hub.sessions, account(host), 1, "one more game")
    assert (await found_private(host, 15)).status_code == 201
    assert (await found_private(host, 16)).status_code == 409
    assert await credit_balance(service.hub.sessions, account(host)) == 0


@pytest.mark.rule("P2", "X7")
async def test_credit_is_charged_at_founding_and_refunded_when_aborted(
    api: Callable[[], ApiClient], service: Service
) -> None:
    sessions = service.hub.sessions
    host = await signed_in(api, "Host")
    await credit_change(sessions, account(host), 70, "bought credit")
    response = await found_private(host, 20)
    assert response.status_code == 201
    game_id = response.json()["game"]
    assert await credit_balance(sessions, account(host)) == 20
    assert (await host.get("/api/me")).json()["account"]["credit"] == 20

    # Not enough left for a second large round; a small one stays free.
    assert (await found_private(host, 12)).status_code == 409
    assert (await found_private(host, 9)).status_code == 201
    assert await credit_balance(sessions, account(host)) == 20

    assert (await host.post(f"/api/games/{game_id}/abort")).status_code == 200
    assert await credit_balance(sessions, account(host)) == 70
    history = await credit_history(sessions, account(host))
    assert [(e.amount, e.game_id) for e in reversed(history)] == [  # newest first
        (70, None),
        (-50, game_id),
        (50, game_id),
    ]
    # Aborting twice refunds once.
    assert (await host.post(f"/api/games/{game_id}/abort")).status_code == 409
    assert await credit_balance(sessions, account(host)) == 70


@pytest.mark.rule("P2")
async def test_a_started_round_keeps_its_charge(
    api: Callable[[], ApiClient], service: Service
) -> None:
    sessions = service.hub.sessions
    host = await signed_in(api, "Host")
    await credit_change(sessions, account(host), 50, "bought credit")
    founded = (await found_private(host, 10)).json()
    for i in range(3):
        guest = await signed_in(api, f"G{i}")
        assert (await guest.post("/api/join", {"code": founded["invitation_code"]})).is_success
    assert (await host.post(f"/api/games/{founded['game']}/start")).status_code == 200
    assert (await host.post(f"/api/games/{founded['game']}/abort")).status_code == 409
    assert await credit_balance(sessions, account(host)) == 0


@pytest.mark.rule("P2")
async def test_operators_choose_the_active_paths_and_their_sizes(
    start_service: ServiceFactory,
) -> None:
    """Credit off, karma up to 11 at a threshold of 10: then only karma unlocks, to 11."""
    policy = Policy(
        premium=UnlockPath(enabled=False, max_size=30),
        credit=CreditPath(enabled=False, max_size=20),
        karma=KarmaPath(enabled=True, max_size=11, threshold=10),
    )
    async with start_service(policy) as service:
        host = ApiClient(service)
        try:
            await host.signup("Host")
            sessions = service.hub.sessions
            now = datetime.now(UTC)
            await credit_change(sessions, account(host), 500, "bought credit")
            await grant_premium(
                sessions, account(host), until=now + timedelta(days=1), reason="test"
            )
            assert (await found_private(host, 10)).status_code == 409
            await add_karma(sessions, account(host), 10, "games")
            assert (await found_private(host, 11)).status_code == 201
            assert (await found_private(host, 12)).status_code == 409
            assert await credit_balance(sessions, account(host)) == 500
        finally:
            await host.close()


@pytest.mark.rule("P2", "X7")
async def test_racing_requests_cannot_mint_or_skip_credit(
    api: Callable[[], ApiClient], service: Service
) -> None:
    """Two aborts at once refund once; two large rounds at once on credit for one: one charge."""
    sessions = service.hub.sessions
    host = await signed_in(api, "Host")
    await credit_change(sessions, account(host), 50, "bought credit")
    game_id = (await found_private(host, 10)).json()["game"]
    aborts = await asyncio.gather(*(host.post(f"/api/games/{game_id}/abort") for _ in range(4)))
    assert sorted(r.status_code for r in aborts) == [200, 409, 409, 409]
    assert await credit_balance(sessions, account(host)) == 50

    founds = await asyncio.gather(*(found_private(host, 10) for _ in range(4)))
    assert sorted(r.status_code for r in founds) == [201, 409, 409, 409]
    assert await credit_balance(sessions, account(host)) == 0
    lobbies = await list_games(sessions, statuses=(GameStatus.LOBBY,))
    assert [g.id for g in lobbies] == [r.json()["game"] for r in founds if r.status_code == 201]
