"""Issue 8 (web): what once reached a handler or a query in the wrong shape and ended in a 500.

Every request here is one a probe sent to the service; each must now get a JSON error with a
code (or succeed), on SQLite and on PostgreSQL, and the service must keep serving.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from vollmond.service.config import Settings
from vollmond.service.policy import Policy

from .support import PASSWORD, ApiClient, Service, hello, running_service, ws_client
from .wsplay import FOUR_DECK, SLOW, table


async def signed_in(api: Callable[[], ApiClient], name: str) -> ApiClient:
    client = api()
    await client.signup(name)
    return client


def assert_json_error(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error"] == code, body
    assert "Traceback" not in response.text


@pytest.mark.parametrize(
    ("options", "status", "code"),
    [
        ({"size": 4, "durations": None}, 201, None),
        ({"size": 4, "calls": None}, 201, None),
        ({"size": 4, "calls": 5}, 400, "invalid_options"),
        ({"size": 4, "calls": ["enabled"]}, 400, "invalid_options"),
        ({"size": 4, "durations": "fast"}, 400, "invalid_options"),
        ({"size": 4, "durations": {"night_s": 1e300}}, 400, "invalid_options"),
        ({"size": 4, "custom_roles": [["evil", 2**70]], "deck": "custom"}, 400, "invalid_options"),
        ({"size": 2**70}, 400, "size_required"),
        ({"size": 4, "world": "wer\x00wolf"}, 400, "invalid_options"),
        ({"size": 4, "stalemate_rounds": 2**40}, 400, "invalid_options"),
    ],
)
async def test_junk_founding_options_get_a_json_answer(
    api: Callable[[], ApiClient], options: dict[str, Any], status: int, code: str | None
) -> None:
    host = await signed_in(api, "Host")
    response = await host.post("/api/games", options)
    if code is None:
        assert response.status_code == status, response.text
    else:
        assert_json_error(response, status, code)


async def test_nul_in_path_query_or_login_name_is_refused(
    api: Callable[[], ApiClient], service: Service
) -> None:
    client = api()
    assert_json_error(await client.http.get("/api/games/ab%00cd"), 400, "bad_url")
    assert_json_error(
        await client.http.get("/api/games", params={"world": "x\x00"}), 400, "bad_url"
    )
    token = await client.csrf()
    assert_json_error(
        await client.http.post("/api/games/ab%00cd/join", headers={"X-CSRF-Token": token}, json={}),
        400,
        "bad_url",
    )
    for path in ("/api/login", "/api/signup"):
        response = await client.post(path, {"name": "al\x00ice", "password": PASSWORD})
        assert_json_error(response, 400, "invalid_request")
    response = await client.post("/api/join", {"code": "AB\x00CD"})
    assert response.status_code in (400, 401), response.text
    assert (await client.get("/healthz")).status_code == 200


@pytest.mark.parametrize("after", [2**31, 2**63, 2**80])
async def test_hello_after_beyond_the_integer_range_is_refused(
    fast_service: Service, after: int
) -> None:
    game_id, tokens = await table(fast_service, 4, FOUR_DECK, SLOW, calls={"enabled": False})
    async with ws_client(fast_service) as client:
        frame = await hello(client, game_id, tokens[0], after=after)
        assert frame["type"] == "error"
        assert frame["code"] == "invalid_message"
        # The socket is still there and still works.
        welcome = await hello(client, game_id, tokens[0], after=0)
        assert welcome["type"] == "welcome"


async def test_chat_with_nul_is_refused_before_the_log(fast_service: Service) -> None:
    """PostgreSQL cannot store NUL in JSON: the command is refused, the game goes on."""
    game_id, tokens = await table(fast_service, 4, FOUR_DECK, SLOW, calls={"enabled": False})
    actor = fast_service.hub.actors[game_id]
    async with ws_client(fast_service) as client:
        assert (await hello(client, game_id, tokens[0]))["type"] == "welcome"
        await client.send(
            {"type": "command", "id": 7, "command": {"type": "Say", "text": "a\x00b"}}
        )
        frame = await client.expect("error")
        assert (frame["code"], frame["id"]) == ("bad_command", 7)
    assert not actor.finished.is_set()
    assert fast_service.hub.actors[game_id] is actor


async def test_an_unexpected_error_is_answered_as_json_without_a_traceback(
    settings_for: Callable[[Policy], Settings], database: tuple[str, str | None]
) -> None:
    """The catch-all: a handler bug (a route that raises on purpose) gives a JSON 500."""

    async def broken(request: Request) -> Response:
        raise RuntimeError("secret internal detail")

    route = Route("/api/broken", broken)
    settings = settings_for(Policy())
    async with (
        running_service(database[0], settings, extra_routes=[route]) as svc,
        httpx.AsyncClient(base_url=svc.base_url) as http,
    ):
        response = await http.get("/api/broken", headers={"Accept-Language": "en"})
        assert_json_error(response, 500, "internal")
        assert "secret internal detail" not in response.text
        assert "RuntimeError" not in response.text
        assert (await http.get("/healthz")).status_code == 200


async def raw_request(service: Service, head: bytes, body_chunks: list[bytes]) -> bytes:
    """Send a request over a plain socket, chunk by chunk, never finishing the body; return
    the start of the answer (a server that waits for the whole body never answers)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", service.port)
    try:
        writer.write(head)
        with contextlib.suppress(ConnectionError):
            for chunk in body_chunks:
                writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                await writer.drain()
        return await asyncio.wait_for(reader.read(4096), 10)
    finally:
        writer.close()


async def test_a_huge_body_is_refused_while_it_is_read(
    api: Callable[[], ApiClient], service: Service
) -> None:
    """A chunked body without a length: the 413 comes after the limit, not after the end
    (the client has sent 64 KiB of a body it never finishes; the old server waited for all)."""
    client = api()
    await client.signup("Heavy")
    token = await client.csrf()
    cookies = "; ".join(f"{k}={v}" for k, v in client.http.cookies.items())
    head = (
        b"POST /api/games HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\nX-CSRF-Token: " + token.encode() + b"\r\n"
        b"Cookie: " + cookies.encode() + b"\r\n\r\n"
    )
    answer = await raw_request(service, head, [b'{"size": 5, "pad": "'] + [b"x" * 4096] * 16)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b'"too_large"' in answer
    declared = (
        b"POST /api/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: 1000000000\r\nX-CSRF-Token: " + token.encode() + b"\r\n"
        b"Cookie: " + cookies.encode() + b"\r\n\r\n"
    )
    answer = await raw_request(service, declared, [])
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert (await client.get("/healthz")).status_code == 200


# -- fuzz ------------------------------------------------------------------------------------

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
    | st.sampled_from(["\x00", "a\x00", "ｗｅｒｗｏｌｆ", "custom", "werwolf"])
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner),
    max_leaves=10,
)
option_keys = st.sampled_from(
    [
        "size",
        "private",
        "join",
        "world",
        "deck",
        "custom_roles",
        "lovers",
        "durations",
        "calls",
        "stalemate_rounds",
        "unanimous",
        "name",
        "password",
        "code",
        "token",
        "lang",
        "reason",
        "player",
    ]
)
bodies = st.dictionaries(option_keys, values, max_size=6) | values
ENDPOINTS = [
    "/api/games",
    "/api/login",
    "/api/join",
    "/api/games/{game}/history",
    "/api/games/{game}/operator",
    "/api/games/{game}/leave",
    "/api/games/{game}/join",
]


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(endpoint=st.sampled_from(ENDPOINTS), body=bodies)
# The probe's findings, always tried first.
@example(endpoint="/api/games", body={"size": 4, "durations": None})
@example(endpoint="/api/games", body={"size": 4, "calls": 1})
@example(endpoint="/api/login", body={"name": "a\x00", "password": "p"})
async def test_no_request_body_gets_a_500(
    fast_service: Service, fuzzer: ApiClient, endpoint: str, body: Any
) -> None:
    game_id, _ = await fuzz_game(fast_service)
    client = fuzzer
    token = await client.csrf()
    response = await client.http.post(
        endpoint.replace("{game}", game_id),
        content=json.dumps(body).encode(),
        headers={"X-CSRF-Token": token, "Content-Type": "application/json"},
    )
    assert response.status_code < 500, response.text
    if response.status_code >= 400:
        assert isinstance(response.json()["error"], str)


_games: dict[int, tuple[str, list[str]]] = {}


async def fuzz_game(service: Service) -> tuple[str, list[str]]:
    """One slow-timer game per service (hypothesis runs many examples on one fixture)."""
    key = id(service)
    if key not in _games:
        _games[key] = await table(service, 4, FOUR_DECK, SLOW, calls={"enabled": False})
    return _games[key]


@pytest.fixture
async def fuzzer(fast_service: Service) -> AsyncIterator[ApiClient]:
    """One signed-in client for all examples of a fuzz test."""
    client = ApiClient(fast_service)
    await client.signup("Fuzzer")
    yield client
    await client.close()
