"""Accounts over the real HTTP API: signup, login, logout, cookies, CSRF and login rate limits."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from sqlalchemy import select

from vollmond.service.web.auth import CSRF_COOKIE, SESSION_COOKIE
from vollmond.store import credit_change, grant_premium, karma_change
from vollmond.store.models.accounts import AccountRow

from .support import PASSWORD, ApiClient, Service


def set_cookie(response: httpx.Response, name: str) -> str:
    """The Set-Cookie header for `name` (attributes included), lower-cased."""
    headers = [h for h in response.headers.get_list("set-cookie") if h.startswith(name + "=")]
    assert len(headers) == 1, response.headers.get_list("set-cookie")
    return headers[0].lower()


async def test_signup_signs_in_with_an_httponly_samesite_session_cookie(
    api: Callable[[], ApiClient],
) -> None:
    client = api()
    response = await client.post("/api/signup", {"name": "Anna", "password": PASSWORD})
    assert response.status_code == 200
    cookie = set_cookie(response, SESSION_COOKIE)
    assert "httponly" in cookie
    assert "samesite=strict" in cookie
    assert "path=/" in cookie
    me = (await client.get("/api/me")).json()["account"]
    assert me["name"] == "Anna"
    assert me["role"] == "player"


async def test_csrf_cookie_is_readable_by_the_page_but_same_site(
    api: Callable[[], ApiClient],
) -> None:
    """Double submit: the page must read the token to echo it, so it is not HttpOnly."""
    response = await api().get("/api/me")
    cookie = set_cookie(response, CSRF_COOKIE)
    assert "samesite=strict" in cookie
    assert "httponly" not in cookie
    token = response.cookies[CSRF_COOKIE]
    assert len(token) >= 24


@pytest.mark.parametrize("page", ["/", "/rooms.html"])
async def test_the_page_brings_the_csrf_token_so_its_parallel_first_requests_agree(
    api: Callable[[], ApiClient], page: str
) -> None:
    """A page's first API requests go out in parallel. Had they no cookie yet, each answer
    would hand out a token of its own, and a form sent meanwhile could echo one token while
    its request carried the next: "the page is outdated" on sign-up. The HTML page brings the
    token, so the requests carry it and nothing replaces it."""
    client = api()
    document = await client.get(page)
    assert document.status_code == 200
    assert "samesite=strict" in set_cookie(document, CSRF_COOKIE)
    token = client.http.cookies[CSRF_COOKIE]
    first = await asyncio.gather(
        *(client.get(path) for path in ("/api/me", "/api/games", "/api/worlds", "/api/me"))
    )
    assert [r.headers.get_list("set-cookie") for r in first] == [[], [], [], []]
    assert client.http.cookies[CSRF_COOKIE] == token
    signed_up = await client.http.post(
        "/api/signup", json={"name": "Ida", "password": PASSWORD}, headers={"X-CSRF-Token": token}
    )
    assert signed_up.status_code == 200, signed_up.text
    # A browser that has its token keeps it: the next page load hands out none.
    again = await client.get(page)
    assert CSRF_COOKIE not in " ".join(again.headers.get_list("set-cookie"))


async def test_a_script_or_style_hands_out_no_token(api: Callable[[], ApiClient]) -> None:
    assert (await api().get("/util.js")).headers.get_list("set-cookie") == []


async def test_only_an_argon2_hash_of_the_password_is_stored(
    api: Callable[[], ApiClient], service: Service
) -> None:
    await api().signup("Berta")
    async with service.hub.sessions() as session:
        stored = await session.scalar(
            select(AccountRow.password_hash).where(AccountRow.name == "Berta")
        )
    assert stored is not None
    assert stored.startswith("$argon2id$")
    assert PASSWORD not in stored


async def test_login_logout_and_wrong_password(api: Callable[[], ApiClient]) -> None:
    await api().signup("Carla")
    client = api()
    wrong = await client.post("/api/login", {"name": "Carla", "password": "not the password"})
    assert wrong.status_code == 401
    assert wrong.json()["error"] == "bad_credentials"
    assert SESSION_COOKIE not in client.http.cookies
    assert (await client.get("/api/me")).json()["account"] is None

    unknown = await client.post("/api/login", {"name": "Nobody", "password": PASSWORD})
    assert unknown.status_code == 401
    assert unknown.json()["error"] == "bad_credentials"  # never says which part was wrong

    right = await client.post("/api/login", {"name": "carla", "password": PASSWORD})
    assert right.status_code == 200
    assert "httponly" in set_cookie(right, SESSION_COOKIE)
    assert (await client.get("/api/me")).json()["account"]["name"] == "Carla"

    out = await client.post("/api/logout")
    assert out.status_code == 200
    assert (await client.get("/api/me")).json()["account"] is None


async def test_a_taken_name_or_weak_password_is_refused(api: Callable[[], ApiClient]) -> None:
    await api().signup("Dora")
    again = await api().post("/api/signup", {"name": "DORA", "password": PASSWORD})
    assert again.status_code == 409
    assert again.json()["error"] == "name_taken"
    weak = await api().post("/api/signup", {"name": "Emil", "password": "short"})
    assert weak.status_code == 400
    junk = await api().post("/api/signup", {"name": "Emil"})
    assert junk.status_code == 400
    assert junk.json()["error"] == "invalid_request"


async def test_a_forged_session_cookie_is_not_a_session(api: Callable[[], ApiClient]) -> None:
    client = api()
    client.http.cookies.set(SESSION_COOKIE, "eyJhIjoxfQ.forged.signature")
    assert (await client.get("/api/me")).json()["account"] is None
    refused = await client.post("/api/games", {"size": 5})
    assert refused.status_code == 401


async def test_login_attempts_are_rate_limited(api: Callable[[], ApiClient]) -> None:
    """Policy default: 10 attempts a minute per address, then 429 — also for the right one."""
    await api().signup("Frida")
    client = api()
    codes = [
        (await client.post("/api/login", {"name": "Frida", "password": f"guess {i}"})).status_code
        for i in range(10)
    ]
    assert codes == [401] * 10
    limited = await client.post("/api/login", {"name": "Frida", "password": PASSWORD})
    assert limited.status_code == 429
    assert limited.json()["error"] == "rate_limited"


@pytest.mark.parametrize(
    "headers",
    [{}, {"X-CSRF-Token": "wrong"}, {"X-CSRF-Token": ""}],
    ids=["missing", "wrong", "empty"],
)
async def test_posts_without_the_csrf_token_are_refused(
    api: Callable[[], ApiClient], headers: dict[str, str]
) -> None:
    client = api()
    await client.signup("Gerd")
    await client.csrf()
    for path, body in [
        ("/api/signup", {"name": "Hugo", "password": PASSWORD}),
        ("/api/login", {"name": "Gerd", "password": PASSWORD}),
        ("/api/games", {"size": 5}),
        ("/api/logout", {}),
    ]:
        response = await client.http.post(path, json=body, headers=headers)
        assert response.status_code == 403, path
        assert response.json()["error"] == "csrf"
    # Nothing happened: no account Hugo, Gerd still signed in, no game founded.
    assert (await client.get("/api/me")).json()["account"]["name"] == "Gerd"
    assert (await client.get("/api/games")).json()["games"] == []
    hugo = await api().post("/api/login", {"name": "Hugo", "password": PASSWORD})
    assert hugo.status_code == 401


async def test_a_header_without_the_cookie_is_refused(api: Callable[[], ApiClient]) -> None:
    """A foreign page can invent a header value but cannot set our cookie."""
    client = api()
    response = await client.http.post(
        "/api/signup", json={"name": "Ida", "password": PASSWORD}, headers={"X-CSRF-Token": "x"}
    )
    assert response.status_code == 403


@pytest.mark.rule("X7")
async def test_me_shows_premium_credit_and_karma(
    api: Callable[[], ApiClient], service: Service
) -> None:
    client = api()
    account = await client.signup("Jana")
    me = (await client.get("/api/me")).json()["account"]
    assert (me["premium"], me["credit"], me["karma"]) == (False, 0, 0)
    sessions = service.hub.sessions
    now = datetime.now(UTC)
    await grant_premium(sessions, account["id"], until=now + timedelta(days=30), reason="test")
    await credit_change(sessions, account["id"], 120, "bought credit")
    await karma_change(sessions, account["id"], 7, "stayed to the end")
    me = (await client.get("/api/me")).json()["account"]
    assert (me["premium"], me["credit"], me["karma"]) == (True, 120, 7)


@pytest.mark.rule("P3", "P5")
async def test_a_player_sees_their_karma_history_and_unlock(
    api: Callable[[], ApiClient], service: Service
) -> None:
    client = api()
    account = await client.signup("Kara")
    page = (await client.get("/api/me/karma")).json()
    assert page == {"karma": 0, "unlock_until": None, "history": []}
    sessions = service.hub.sessions
    threshold = service.hub.policy.karma.threshold
    await karma_change(sessions, account["id"], 8, "game_won", game_id=None)
    await karma_change(sessions, account["id"], threshold, "game_stayed")
    page = (await client.get("/api/me/karma")).json()
    assert page["karma"] == threshold + 8
    assert [(e["amount"], e["reason"]) for e in page["history"]] == [
        (threshold, "game_stayed"),
        (8, "game_won"),
    ]
    unlock = datetime.fromisoformat(page["unlock_until"])
    days = service.hub.karma.rules.unlock_days
    assert timedelta(days=days - 1) < unlock - datetime.now(UTC) <= timedelta(days=days)
    me = (await client.get("/api/me")).json()["account"]
    assert me["karma_unlock_until"] == page["unlock_until"]
    assert (await api().get("/api/me/karma")).status_code == 401  # nobody else's
