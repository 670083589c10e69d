"""Issue 8 (web): sessions the server can end, rotated at sign-in and sign-out, cookies and
headers for HTTPS, and a Content-Security-Policy the browser client works under.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import AsyncIterator, Callable

import httpx
import pytest
from sqlalchemy import select

from vollmond.service.config import Settings
from vollmond.service.policy import Policy
from vollmond.service.web.auth import CSRF_COOKIE, SESSION_COOKIE
from vollmond.settings import WebSettings

from .support import PASSWORD, ApiClient, Service, running_service


def copy_of(client: ApiClient) -> ApiClient:
    """A second browser holding a copy of the first one's cookies (a stolen cookie)."""
    thief = ApiClient(client.service)
    for name, value in client.http.cookies.items():
        thief.http.cookies.set(name, value)
    return thief


async def me(client: ApiClient) -> object:
    return (await client.get("/api/me")).json()["account"]


async def test_logout_ends_the_session_on_the_server(api: Callable[[], ApiClient]) -> None:
    alice = api()
    await alice.signup("Alice")
    thief = copy_of(alice)
    try:
        assert await me(thief) is not None
        assert (await alice.post("/api/logout")).status_code == 200
        assert await me(alice) is None
        # The copied cookie no longer signs anybody in.
        assert await me(thief) is None
        refused = await thief.post("/api/games", {"size": 5})
        assert refused.status_code == 401
    finally:
        await thief.close()


async def test_sign_in_rotates_the_session_and_the_csrf_token(
    api: Callable[[], ApiClient],
) -> None:
    bob = api()
    await bob.signup("Bob")
    first_session = bob.http.cookies[SESSION_COOKIE]
    first_csrf = bob.http.cookies[CSRF_COOKIE]
    old_copy = copy_of(bob)
    try:
        again = await bob.post("/api/login", {"name": "Bob", "password": PASSWORD})
        assert again.status_code == 200
        assert bob.http.cookies[SESSION_COOKIE] != first_session
        assert bob.http.cookies[CSRF_COOKIE] != first_csrf
        assert await me(bob) is not None
        # The session brought to the sign-in is over (no fixation).
        assert await me(old_copy) is None
        await bob.post("/api/logout")
        assert bob.http.cookies.get(CSRF_COOKIE) not in (None, first_csrf)
    finally:
        await old_copy.close()


async def test_the_store_keeps_only_a_hash_of_the_session(
    api: Callable[[], ApiClient], service: Service
) -> None:
    from vollmond.store.models import WebSessionRow  # noqa: PLC0415 - new in this change

    carol = api()
    await carol.signup("Carol")
    token = carol.http.cookies[SESSION_COOKIE]
    async with service.hub.sessions() as session:
        rows = (await session.scalars(select(WebSessionRow))).all()
    assert [r.token_hash for r in rows] == [hashlib.sha256(token.encode()).hexdigest()]
    assert all(token not in (r.token_hash,) for r in rows)
    assert rows[0].account_id == carol.account_id


async def test_a_forged_or_junk_session_cookie_signs_nobody_in(
    api: Callable[[], ApiClient],
) -> None:
    client = api()
    for junk in ("eyJhIjoxfQ.forged.signature", "x" * 5000, "%00"):
        client.http.cookies.set(SESSION_COOKIE, junk)
        response = await client.get("/api/me")
        assert response.status_code == 200
        assert response.json()["account"] is None


async def test_every_answer_carries_the_security_headers(service: Service) -> None:
    async with httpx.AsyncClient(base_url=service.base_url) as http:
        for path in ("/", "/app.js", "/api/me", "/api/games/nothing", "/healthz"):
            response = await http.get(path)
            csp = response.headers["content-security-policy"]
            assert "frame-ancestors 'none'" in csp, path
            assert "script-src 'self'" in csp and "unsafe-inline" not in csp, path
            assert response.headers["x-content-type-options"] == "nosniff", path
            # Plain HTTP without the https setting: no HSTS (browsers would ignore it anyway).
            assert "strict-transport-security" not in response.headers, path


@pytest.fixture
async def https_service(
    settings_for: Callable[[Policy], Settings], database: tuple[str, str | None]
) -> AsyncIterator[Service]:
    """A service whose operator says it is served over HTTPS (a TLS proxy in front)."""
    settings = dataclasses.replace(settings_for(Policy()), web=WebSettings(https=True))
    async with running_service(database[0], settings) as running:
        yield running


async def test_over_https_cookies_are_secure_and_hsts_is_sent(https_service: Service) -> None:
    async with httpx.AsyncClient(base_url=https_service.base_url) as http:
        first = await http.get("/api/me")
        assert "max-age=" in first.headers["strict-transport-security"]
        csrf = first.cookies[CSRF_COOKIE]
        signup = await http.post(
            "/api/signup",
            json={"name": "Secure", "password": PASSWORD},
            # A Secure cookie is not sent back over plain HTTP; the test speaks for the proxy.
            headers={"X-CSRF-Token": csrf, "Cookie": f"{CSRF_COOKIE}={csrf}"},
        )
        assert signup.status_code == 200, signup.text
        cookies = signup.headers.get_list("set-cookie")
        session = [c for c in cookies if c.startswith(SESSION_COOKIE + "=")]
        assert session and all("secure" in c.lower() for c in cookies), cookies
        assert "httponly" in session[0].lower() and "samesite=strict" in session[0].lower()
