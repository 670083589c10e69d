"""Conference rooms in the browser (X2, X5, O5): the real service (uvicorn, SQLite and
PostgreSQL), httpx as the browser, and a real phone session on the service's hub.

A browser and a caller meet in a world's room: the browser sees the caller in the list, the
caller hears the browser's chat line read out. Private rooms by code, the size limit, a ban of
the area "conference", listeners who may not write, and the web's operator call are answered
with clear errors or their effect.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from datetime import timedelta
from typing import Any

import httpx
import pytest

from tests.phone.session.support import call_in, heard, press, wait_until
from tests.service.support import ApiClient, Service, running_service
from vollmond.moderation import CONFERENCE, SanctionKind, Subject
from vollmond.moderation.alarms import list_alarms
from vollmond.phone.session.codes import phone_code
from vollmond.service.config import Settings
from vollmond.service.policy import Policy
from vollmond.settings.rooms import RoomSettings
from vollmond.store import Role
from vollmond.store.models import AccountRow

GERMAN_UNTIL = re.compile(r"bis \d\d\.\d\d\.\d{4} um \d\d:\d\d Uhr \(UTC\)")


@pytest.fixture
async def service(
    database: tuple[str, str | None], settings_for: Callable[[Policy], Settings]
) -> AsyncIterator[Service]:
    """The service with rooms of three people at most."""
    settings = replace(settings_for(Policy()), rooms=RoomSettings(max_members=3))
    async with running_service(database[0], settings) as running:
        yield running


async def member(client: ApiClient, name: str, **enter: object) -> dict[str, Any]:
    await client.signup(name)
    response = await client.post("/api/rooms/enter", enter)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


@pytest.mark.rule("X2", "X5")
async def test_a_browser_and_a_caller_meet_in_a_room_and_the_caller_hears_the_chat(
    api: Callable[[], ApiClient], service: Service
) -> None:
    listing = (await api().get("/api/rooms", lang="en")).json()
    assert listing["rooms"][0] == {
        "id": "public-werwolf",
        "world": "werwolf",
        "name": "Werewolf",
        "count": 0,
        "size": 3,
    }
    assert listing["words"]["title"] == "Conference rooms"

    browser = api()
    entered = await member(browser, "Wilma", room="public-werwolf")
    token = entered["token"]
    assert entered["you"] == {
        "slot": 1,
        "name": "Wilma",
        "channel": "web",
        "listening": False,
        "muted": False,
    }

    caller = await call_in(service.hub, "anonymous", enforcer=service.enforcer)
    await press(caller, "2")
    await press(caller, "5")
    assert heard(caller, "1 Werwolf, eine Person")
    await press(caller, "1#")
    assert heard(caller, "Hier sind: 1 Wilma")

    state = (await browser.get(f"/api/rooms/member/{token}")).json()
    assert [(m["slot"], m["name"], m["channel"]) for m in state["members"]] == [
        (1, "Wilma", "web"),
        (2, caller.name, "phone"),
    ]
    said = await browser.post(f"/api/rooms/member/{token}/chat", {"text": "Hallo  Telefon!"})
    assert said.status_code == 200
    assert said.json()["chat"] == [{"seq": 1, "slot": 1, "name": "Wilma", "text": "Hallo Telefon!"}]
    await wait_until(lambda: heard(caller, "Wilma schreibt: Hallo Telefon!"))
    assert (await browser.get(f"/api/rooms/member/{token}", after="1")).json()["chat"] == []

    # Voice: the state names the browser voice's configuration; an offer that is no SDP is
    # refused with its reason (tests/voice/test_conference_chromium.py opens a real one).
    assert state["voice"]["enabled"] is True
    bad = await browser.post(f"/api/rooms/member/{token}/voice", {"sdp": "v=0 nonsense"})
    assert bad.status_code == 400 and bad.json()["error"] == "bad_offer"

    # Chat lines: empty and too long are refused with the reason.
    empty = await browser.post(f"/api/rooms/member/{token}/chat", {"text": "   "})
    assert empty.status_code == 400 and empty.json()["message"] == "Die Nachricht ist leer."
    long = await browser.post(f"/api/rooms/member/{token}/chat", {"text": "x" * 301})
    assert long.json()["message"] == "Die Nachricht ist zu lang, höchstens 300 Zeichen."
    # A listener does not write.
    await browser.post(f"/api/rooms/member/{token}/listen", {"listening": True})
    refused = await browser.post(f"/api/rooms/member/{token}/chat", {"text": "psst"})
    assert refused.json()["message"] == "Wer nur zuhört, schreibt nicht mit."

    # The web's operator call names the room (O1); leaving takes the browser out.
    called = await browser.post(f"/api/rooms/member/{token}/operator", {"reason": 2, "accused": 2})
    assert called.json()["message"].startswith("Die Moderation ist gerufen: Grund 2")
    [alarm] = await list_alarms(service.hub.sessions)
    assert alarm.conference == "public-werwolf" and alarm.accused_house == 2
    # The room is warned (O2): the caller hears it, the page's state carries the notice.
    await wait_until(lambda: heard(caller, "in diesem Raum nach dem Ton aufgezeichnet"))
    notice = (await browser.get(f"/api/rooms/member/{token}")).json()["recording"]
    assert notice["active"] is True and notice["stage"] == "warning"
    assert notice["max_s"] == 300
    left = await browser.post(f"/api/rooms/member/{token}/leave")
    assert left.json() == {"left": True}
    await wait_until(lambda: heard(caller, "Wilma ist gegangen"))
    gone = await browser.get(f"/api/rooms/member/{token}")
    assert gone.status_code == 404
    await caller.close()


@pytest.mark.rule("X2")
async def test_private_rooms_by_code_full_rooms_and_sign_in_are_answered(
    api: Callable[[], ApiClient], service: Service
) -> None:
    anonymous = await api().post("/api/rooms/enter", {"room": "public-werwolf"})
    assert anonymous.status_code == 401
    assert anonymous.json()["message"] == "Für Konferenzräume im Browser melde dich an."

    opener = api()
    await opener.signup("Olga")
    opened = (await opener.post("/api/rooms/private")).json()
    code = opened["room"]["code"]
    assert opened["room"]["digits"] == phone_code(code)
    assert opened["room"]["kind"] == "private" and opened["you"]["slot"] == 1

    unknown = await member_refused(api(), "Udo", code="AAAAAAAAAA")
    assert unknown.status_code == 404
    assert unknown.json()["message"] == "Zu diesem Code ist kein Raum offen."

    # A caller types the 16 digits the page shows.
    caller = await call_in(service.hub, "anonymous", enforcer=service.enforcer)
    await press(caller, "2")
    await press(caller, "5")
    await press(caller, f"{opened['room']['digits']}#")
    assert heard(caller, "Du bist im Raum privater Raum, als Nummer 2")
    third = await member(api(), "Tina", code=code.lower())
    assert third["you"]["slot"] == 3
    full = await member_refused(api(), "Fritz", code=code)
    assert full.status_code == 409
    assert full.json()["message"] == "Dieser Raum ist voll: 3 Personen sind drin."
    await caller.close()


async def member_refused(client: ApiClient, name: str, **enter: object) -> httpx.Response:
    await client.signup(name)
    return await client.post("/api/rooms/enter", enter)


@pytest.mark.rule("X2", "O5")
async def test_a_conference_ban_refuses_the_browser_with_reason_and_expiry(
    api: Callable[[], ApiClient], service: Service
) -> None:
    client = api()
    account = await client.signup("Bodo")
    row = AccountRow(name="Mo", name_key="mo", password_hash="-", role=Role.MODERATOR)
    async with service.hub.sessions.begin() as session:
        session.add(row)
    assert service.enforcer is not None
    await service.enforcer.moderation.impose(
        by=row.id,
        subject=Subject.account(account["id"]),
        kind=SanctionKind.BAN,
        area=CONFERENCE,
        reason="Pöbeleien",
        duration=timedelta(hours=3),
    )
    refused = await client.post("/api/rooms/enter", {"room": "public-vampir"})
    assert refused.status_code == 403
    body = refused.json()
    assert body["error"] == "banned" and body["area"] == "conference"
    assert body["reason"] == "Pöbeleien" and GERMAN_UNTIL.search(body["message"])
    opened = await client.post("/api/rooms/private")
    assert opened.status_code == 403
    # The room stays empty, and a ban of rooms is no ban of the lobby.
    listing = (await client.get("/api/rooms")).json()
    assert all(room["count"] == 0 for room in listing["rooms"])
    assert (await client.get("/api/me")).status_code == 200
