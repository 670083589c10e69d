"""Moderation enforced on the web entry paths of a running service (issue 9, O1, O5).

Real uvicorn, real httpx and websockets clients, SQLite and PostgreSQL. Sanctions are imposed
through the service's own :class:`~vollmond.moderation.Moderation` (the core the console and
the command line use); the tests check that every entry path obeys it: login, every API
action, founding, joining, the WebSocket, chat, and the effects of warn, mute, kick and an
admin's abort.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from datetime import timedelta

import pytest
from structlog.testing import capture_logs

from vollmond.moderation import (
    WEB,
    Area,
    BanTooLongError,
    Moderation,
    Sanction,
    SanctionKind,
    Subject,
)
from vollmond.moderation.alarms import list_alarms
from vollmond.moderation.games import abort_game
from vollmond.service.config import Settings
from vollmond.service.enforce import Person
from vollmond.service.policy import Policy
from vollmond.settings.moderation import ModerationSettings
from vollmond.store.db import StoreBusyError
from vollmond.store.models import AccountRow, Role
from vollmond.store.types import utcnow

from .support import ApiClient, Service, WsClient, hello, open_ws, running_service, seated_table

FOUR_DECK = [["evil", 1], ["seer", 1], ["filler", 2]]
FAST = ModerationSettings(enforce_poll_s=0.05, mute_refresh_s=0.2)
GERMAN_UNTIL = re.compile(r"bis \d\d\.\d\d\.\d{4} um \d\d:\d\d Uhr \(UTC\)")
ENGLISH_UNTIL = re.compile(r"until \d{4}-\d\d-\d\d at \d\d:\d\d \(UTC\)")


@pytest.fixture
async def service(
    database: tuple[str, str | None], settings_for: Callable[[Policy], Settings]
) -> AsyncIterator[Service]:
    """The service with a quick enforcement loop (warn/kick/abort arrive within 50 ms)."""
    settings = replace(settings_for(Policy()), moderation=FAST)
    async with running_service(database[0], settings) as running:
        yield running


def moderation(service: Service) -> Moderation:
    assert service.enforcer is not None
    return service.enforcer.moderation


async def staff(service: Service, name: str, role: Role) -> int:
    """A moderator or admin account (inserted: it never logs in here)."""
    row = AccountRow(name=name, name_key=name.casefold(), password_hash="-", role=role)
    async with service.hub.sessions.begin() as session:
        session.add(row)
    return row.id


async def login(client: ApiClient, name: str, lang: str) -> dict[str, object]:
    response = await client.http.post(
        "/api/login",
        json={"name": name, "password": "correct horse battery staple"},
        headers={"X-CSRF-Token": await client.csrf(), "Accept-Language": lang},
    )
    body: dict[str, object] = response.json()
    body["status"] = response.status_code
    return body


@pytest.mark.rule("O5")
async def test_a_banned_account_is_refused_at_login_with_reason_and_expiry_in_de_and_en(
    api: Callable[[], ApiClient], service: Service
) -> None:
    alice = api()
    account = await alice.signup(f"Banned{time.monotonic_ns() % 10**6}")
    mo = await staff(service, "Mo", Role.MODERATOR)
    await moderation(service).impose(
        by=mo,
        subject=Subject.account(account["id"]),
        kind=SanctionKind.BAN,
        area=WEB,
        reason="Beleidigungen im Chat",
        duration=timedelta(hours=24),
    )
    # Already signed in: the next API action is refused too.
    me = await alice.http.get("/api/me")
    assert me.status_code == 403 and me.json()["error"] == "banned"

    german = await login(api(), account["name"], "de")
    assert german["status"] == 403 and german["error"] == "banned"
    assert german["reason"] == "Beleidigungen im Chat"
    message = str(german["message"])
    assert "Grund: Beleidigungen im Chat" in message and "die Webseite" in message
    assert GERMAN_UNTIL.search(message), message
    english = await login(api(), account["name"], "en-GB,en;q=0.8")
    message = str(english["message"])
    assert english["status"] == 403 and "You are banned from the website" in message
    assert ENGLISH_UNTIL.search(message), message
    assert english["expires_at"] is not None


@pytest.mark.rule("O5")
async def test_a_moderators_permanent_ban_is_refused_and_an_admins_is_obeyed(
    api: Callable[[], ApiClient], service: Service
) -> None:
    client = api()
    account = await client.signup(f"Perm{time.monotonic_ns() % 10**6}")
    mo = await staff(service, "Mo", Role.MODERATOR)
    ada = await staff(service, "Ada", Role.ADMIN)
    subject = Subject.account(account["id"])
    with pytest.raises(BanTooLongError):
        await moderation(service).impose(
            by=mo, subject=subject, kind=SanctionKind.BAN, area=WEB, reason="für immer"
        )
    assert (await login(api(), account["name"], "de"))["status"] == 200  # nothing was stored

    await moderation(service).impose(
        by=ada, subject=subject, kind=SanctionKind.BAN, area=WEB, reason="Betrug"
    )
    refused = await login(api(), account["name"], "de")
    assert refused["status"] == 403 and refused["expires_at"] is None
    assert "Die Sperre gilt unbefristet" in str(refused["message"])


@pytest.mark.rule("O5")
async def test_a_world_ban_blocks_founding_and_joining_only_in_that_world(
    api: Callable[[], ApiClient], service: Service
) -> None:
    host, banned = api(), api()
    await host.signup(f"Host{time.monotonic_ns() % 10**6}")
    account = await banned.signup(f"World{time.monotonic_ns() % 10**6}")
    mo = await staff(service, "Mo", Role.MODERATOR)
    await moderation(service).impose(
        by=mo,
        subject=Subject.account(account["id"]),
        kind=SanctionKind.BAN,
        area=Area.in_world("vampir"),
        reason="Spielverderber",
        duration=timedelta(hours=2),
    )
    found = await banned.post("/api/games", {"size": 5, "world": "vampir", "join": True})
    assert found.status_code == 403, found.text
    assert "Spielverderber" in found.json()["message"]
    vampire = (await host.found(size=5, world="vampir"))["game"]
    join = await banned.post(f"/api/games/{vampire}/join")
    assert join.status_code == 403 and join.json()["area"] == "world:vampir"

    werwolf = await banned.post("/api/games", {"size": 5, "world": "werwolf", "join": True})
    assert werwolf.status_code == 201, werwolf.text
    assert (await banned.get("/api/me")).status_code == 200


async def _seated(
    api: Callable[[], ApiClient], service: Service
) -> tuple[str, list[ApiClient], list[str], list[WsClient]]:
    game, clients, tokens = await seated_table(
        api,
        4,
        f"Mod{time.monotonic_ns() % 100000}_",
        deck="custom",
        custom_roles=FOUR_DECK,
        durations={"night_s": 120.0},
    )
    sockets = []
    for token in tokens:
        ws = await open_ws(service)
        await hello(ws, game, token)
        sockets.append(ws)
    return game, clients, tokens, sockets


@pytest.mark.rule("O1")
async def test_the_web_button_raises_a_persisted_alarm_and_misuse_is_refused_with_a_time(
    api: Callable[[], ApiClient], service: Service
) -> None:
    game, clients, tokens, sockets = await _seated(api, service)
    try:
        path = f"/api/games/{game}/operator"
        ok = await clients[2].post(path, {"token": tokens[2], "reason": 1, "player": 4})
        assert ok.status_code == 200, ok.text
        assert ok.json()["message"] == (
            "Die Moderation ist gerufen: Grund 1, wegen Haus 4. Danke für deine Meldung."
        )
        queue = await list_alarms(service.hub.sessions, game_id=game)
        assert len(queue) == 1
        alarm = queue[0]
        assert (alarm.reason, alarm.accused_house, alarm.round, alarm.phase) == (1, 4, 1, "night")
        assert alarm.caller.house == 3 and alarm.caller.account_id == clients[2].account_id

        for _ in range(2):  # the limit is 3 per caller per 10 minutes
            assert (await clients[2].post(path, {"token": tokens[2]})).status_code == 200
        refused = await clients[2].post(path, {"token": tokens[2]})
        assert refused.status_code == 429
        assert refused.json()["retry_at"] is not None
        assert GERMAN_UNTIL.search(refused.json()["message"]), refused.json()
        assert len(await list_alarms(service.hub.sessions, game_id=game)) == 3

        # A signed-in spectator of a public round may call too (no house).
        watcher = api()
        await watcher.signup(f"Watch{time.monotonic_ns() % 10**6}")
        spectator = await watcher.post(path, {"reason": 2})
        assert spectator.status_code == 200, spectator.text
        latest = (await list_alarms(service.hub.sessions, game_id=game))[-1]
        assert latest.caller.house is None and latest.reason == 2
    finally:
        for ws in sockets:
            await ws.close()


@pytest.mark.rule("O5")
async def test_a_muted_players_chat_is_refused_with_reason_and_expiry(
    api: Callable[[], ApiClient], service: Service
) -> None:
    _game, clients, _, sockets = await _seated(api, service)
    try:
        mo = await staff(service, "Mo", Role.MODERATOR)
        assert clients[0].account_id is not None
        await moderation(service).impose(
            by=mo,
            subject=Subject.account(clients[0].account_id),
            kind=SanctionKind.MUTE,
            reason="Spam",
            duration=timedelta(minutes=10),
        )
        told = await sockets[0].expect("moderation")
        assert told["kind"] == "mute" and "Spam" in told["message"]
        await sockets[0].send(
            {"type": "command", "id": 7, "command": {"type": "Say", "actor": 1, "text": "hallo"}}
        )
        error = await sockets[0].expect("error")
        assert error["code"] == "muted" and "Grund: Spam" in error["message"]
        assert GERMAN_UNTIL.search(error["message"])
        # Another player is not muted (at night the engine may still refuse their chat).
        await sockets[1].send(
            {"type": "command", "id": 8, "command": {"type": "Say", "actor": 2, "text": "hi"}}
        )
        answer = await sockets[1].recv()
        while answer.get("id") != 8:
            answer = await sockets[1].recv()
        assert answer.get("code") != "muted"
    finally:
        for ws in sockets:
            await ws.close()


@pytest.mark.rule("O5")
async def test_a_warned_player_is_told_and_a_kicked_one_leaves_with_role_revealed(
    api: Callable[[], ApiClient], service: Service
) -> None:
    game, clients, _, sockets = await _seated(api, service)
    try:
        mo = await staff(service, "Mo", Role.MODERATOR)
        assert clients[1].account_id is not None
        subject = Subject.account(clients[1].account_id)
        await moderation(service).impose(
            by=mo, subject=subject, kind=SanctionKind.WARN, reason="Ton mäßigen"
        )
        warned = await sockets[1].expect("moderation")
        assert warned["kind"] == "warn" and "Ton mäßigen" in warned["message"]

        state = service.hub.actors[game].state
        assert state is not None
        role = state.player(2).role.value
        await moderation(service).impose(
            by=mo, subject=subject, kind=SanctionKind.KICK, reason="Beleidigung", game_id=game
        )
        kicked = await sockets[1].expect("moderation")
        assert kicked["kind"] == "kick" and "Beleidigung" in kicked["message"]
        while True:
            event = await sockets[0].expect("event")
            if event["code"] == "player_left":
                break
        assert event["params"]["seat"] == 2
        assert role in json.dumps(event["params"]["dead"])  # the role is revealed
        state = service.hub.actors[game].state
        assert state is not None and not state.player(2).alive
    finally:
        for ws in sockets:
            await ws.close()


async def test_an_admin_aborts_a_running_game_and_everyone_is_told(
    api: Callable[[], ApiClient], service: Service
) -> None:
    game, _, _, sockets = await _seated(api, service)
    try:
        ada = await staff(service, "Ada", Role.ADMIN)
        await abort_game(service.hub.sessions, FAST, game, by=ada, reason="Test", now=utcnow())
        for ws in sockets:
            told = await ws.expect("moderation")
            assert told["kind"] == "game_aborted"
        assert game not in service.hub.actors
    finally:
        for ws in sockets:
            await ws.close()


async def _mute_for_ten_minutes(service: Service, account_id: int) -> tuple[int, Sanction]:
    """A moderator mutes the account for spam; returns the moderator and the mute."""
    mo = await staff(service, "Mo", Role.MODERATOR)
    mute = await moderation(service).impose(
        by=mo,
        subject=Subject.account(account_id),
        kind=SanctionKind.MUTE,
        reason="Spam",
        duration=timedelta(minutes=10),
    )
    return mo, mute


async def test_a_writers_mutes_are_read_once_and_a_mute_still_arrives_by_the_poll(
    api: Callable[[], ApiClient], service: Service
) -> None:
    """Chat asks for the writer's mute on every line; the store is asked once per person
    (also for lines that arrive together), not again by time while the answer is "not muted"
    — a mute imposed later comes through the poll, and a lifted one ends within
    `mute_refresh_s`. (Before: every line after `mute_refresh_s` read the store again, and at
    a saturated table those reads queued for the store's connections until they timed out.)"""
    _game, clients, _, sockets = await _seated(api, service)
    enforcer = service.enforcer
    assert enforcer is not None and clients[0].account_id is not None
    reads: list[Subject] = []
    read = enforcer.moderation.muted

    async def counted(subject: Subject) -> Sanction | None:
        reads.append(subject)
        return await read(subject)

    enforcer.moderation.muted = counted  # type: ignore[method-assign]
    person = Person(account_id=clients[0].account_id)
    try:
        assert await asyncio.gather(*(enforcer.mute_of(person) for _ in range(20))) == [None] * 20
        assert len(reads) == 1
        await asyncio.sleep(FAST.mute_refresh_s * 2)
        assert await enforcer.mute_of(person) is None
        assert len(reads) == 1  # "not muted" is not read again by time
        mo, mute = await _mute_for_ten_minutes(service, clients[0].account_id)
        await sockets[0].expect("moderation")  # the poll found it and read the person again
        found = await enforcer.mute_of(person)
        assert found is not None and found.id == mute.id
        await moderation(service).lift(mute.id, by=mo)
        await asyncio.sleep(FAST.mute_refresh_s * 2)
        assert await enforcer.mute_of(person) is None  # a mute in force is read again
    finally:
        enforcer.moderation.muted = read  # type: ignore[method-assign]
        for ws in sockets:
            await ws.close()


async def test_a_hello_while_the_store_is_exhausted_is_answered_busy_and_works_after(
    api: Callable[[], ApiClient], service: Service
) -> None:
    """Overload, not a fault: with every connection of the store's pool held, a hello (which
    reads the seat) is answered `busy` with a sentence (in German: no hello has set another
    language yet), the socket
    stays open, and the same hello is welcomed once connections are free again. The moderation
    poll meanwhile warns of the overload; it logged a traceback every 50 ms before, whose
    rendering held the event loop for seconds on a loaded machine (the suite's one failure)."""
    game, _, tokens, sockets = await _seated(api, service)
    engine = service.hub.sessions.kw["bind"]
    pool = engine.sync_engine.pool
    waited = pool._timeout  # the pool's wait (private), shortened for this test only
    pool._timeout = 0.3
    held = []
    ws = await open_ws(service)
    try:
        with capture_logs() as logged:
            with contextlib.suppress(StoreBusyError):
                while True:  # every connection the pool will give (its size and its overflow)
                    held.append(await engine.connect())
            answer = await hello(ws, game, tokens[0])
            assert answer["type"] == "error" and answer["code"] == "busy", answer
            assert "überlastet" in answer["message"]
            async with asyncio.timeout(10):
                while not any(e["event"] == "enforce_poll_store_busy" for e in logged):
                    await asyncio.sleep(FAST.enforce_poll_s)
        # The moderation poll meets the same overload: a warning, not a fault's traceback.
        assert not [e for e in logged if e["log_level"] in ("error", "exception")], logged
        for connection in held:
            await connection.close()
        held.clear()
        welcome = await hello(ws, game, tokens[0])
        assert welcome["type"] == "welcome" and welcome["seat"] == 1
    finally:
        pool._timeout = waited
        for connection in held:
            await connection.close()
        await ws.close()
        for socket in sockets:
            await socket.close()


async def test_a_slow_read_from_before_a_mute_does_not_undo_it(
    api: Callable[[], ApiClient], service: Service
) -> None:
    """A chat line's read of the writer's mutes answers "not muted" but is slow to come back;
    meanwhile a mute is imposed and the poll reads it. The slow answer must not overwrite the
    newer one — "not muted" is never read again by time, so it would stand."""
    _game, clients, _, sockets = await _seated(api, service)
    enforcer = service.enforcer
    assert enforcer is not None and clients[0].account_id is not None
    read = enforcer.moderation.muted
    gate = asyncio.Event()
    calls = 0

    async def first_read_slow(subject: Subject) -> Sanction | None:
        nonlocal calls
        calls += 1
        answer = await read(subject)  # read now, as the store is now ...
        if calls == 1:
            await gate.wait()  # ... and come back late
        return answer

    enforcer.moderation.muted = first_read_slow  # type: ignore[method-assign]
    person = Person(account_id=clients[0].account_id)
    try:
        slow = asyncio.create_task(enforcer.mute_of(person))
        while calls < 1:
            await asyncio.sleep(0.01)
        _, mute = await _mute_for_ten_minutes(service, clients[0].account_id)
        await sockets[0].expect("moderation")  # the poll has read the mute
        gate.set()
        # The waiting line is judged by the newest answer, and so is the next one.
        for found in (await slow, await enforcer.mute_of(person)):
            assert found is not None and found.id == mute.id
    finally:
        gate.set()
        enforcer.moderation.muted = read  # type: ignore[method-assign]
        for ws in sockets:
            await ws.close()
