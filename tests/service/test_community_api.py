"""The mailbox (X3) and friends (X4) through the real web API (uvicorn, httpx, SQLite and
PostgreSQL): sending, reading, replying, keeping and deleting; friends asked by name and
accepted; an invitation taken into a private round; a friend called into a conference room
(X2) who enters it by the invitation; bans of the areas `mailbox` and `friends` (O5) refused
with reason and expiry; bad input answered with a code and a status."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta

import pytest

from tests.service.support import ApiClient, Service
from tests.service.test_moderation_enforce import moderation, staff
from vollmond.moderation import FRIENDS, MAILBOX, SanctionKind, Subject
from vollmond.service.community import community_of
from vollmond.service.hub import Owner
from vollmond.service.web.error_catalogue import error_text
from vollmond.store import create_phone_identity, find_account
from vollmond.store.models import Role


def unique(name: str) -> str:
    return f"{name}{time.monotonic_ns() % 10**7}"


@pytest.mark.rule("X3")
async def test_text_messages_are_sent_read_replied_kept_and_deleted(
    api: Callable[[], ApiClient],
) -> None:
    anna, bert = api(), api()
    await anna.signup(unique("Anna"))
    await bert.signup(unique("Bert"))
    sent = await anna.post("/api/mail", {"to": bert.name, "text": "Spielst du heute?"})
    assert sent.status_code == 201, sent.text
    assert (await bert.get("/api/community")).json()["unread"] == 1
    (message,) = (await bert.get("/api/mail")).json()["messages"]
    assert message["from"]["name"] == anna.name and message["text"] == "Spielst du heute?"
    assert message["unread"] and message["kind"] == "text"
    mail_id = message["id"]
    assert (await bert.post(f"/api/mail/{mail_id}/read")).status_code == 200
    assert (await bert.get("/api/community")).json()["unread"] == 0
    replied = await bert.post(f"/api/mail/{mail_id}/reply", {"text": "Ja, um acht"})
    assert replied.status_code == 201
    (answer,) = (await anna.get("/api/mail")).json()["messages"]
    assert answer["text"] == "Ja, um acht" and answer["reply_to"] == mail_id
    assert (await bert.post(f"/api/mail/{mail_id}/keep", {"kept": True})).status_code == 200
    assert (await bert.get("/api/mail")).json()["messages"][0]["kept"]
    # Someone else's message is not there for anna (no hint it exists).
    assert (await anna.post(f"/api/mail/{mail_id}/delete")).status_code == 404
    assert (await bert.post(f"/api/mail/{mail_id}/delete")).status_code == 200
    assert (await bert.get("/api/mail")).json()["messages"] == []


@pytest.mark.rule("X3", "X4")
async def test_bad_input_gets_a_code_and_a_status(api: Callable[[], ApiClient]) -> None:
    anna, bert = api(), api()
    await anna.signup(unique("Anna"))
    await bert.signup(unique("Bert"))
    cases = [
        ("/api/mail", {"to": "Niemand-hier", "text": "hallo"}, 404, "unknown_person"),
        ("/api/mail", {"to": bert.name, "text": "x" * 1001}, 400, "mail_too_long"),
        ("/api/mail", {"to": bert.name, "text": "   "}, 400, "mail_empty"),
        ("/api/friends", {"who": "Niemand-hier"}, 404, "unknown_person"),
        ("/api/friends", {"who": anna.name}, 400, "friend_self"),
        ("/api/friends/accept", {"who": bert.name}, 409, "friend_no_request"),
        ("/api/friends/invite", {"who": bert.name, "game": "nope"}, 403, "not_friends"),
    ]
    for path, body, status, code in cases:
        response = await anna.post(path, body)
        assert (response.status_code, response.json()["error"]) == (status, code), path
    await bert.post("/api/friends/block", {"who": anna.name})
    blocked = await anna.post("/api/mail", {"to": bert.name, "text": "hallo?"})
    assert (blocked.status_code, blocked.json()["error"]) == (403, "mail_blocked")
    assert (await bert.get("/api/mail")).json()["messages"] == []
    assert (await api().get("/api/mail")).status_code == 401


@pytest.mark.rule("X4")
async def test_friends_by_name_where_they_are_and_an_invitation_into_a_private_round(
    api: Callable[[], ApiClient],
) -> None:
    anna, bert = api(), api()
    await anna.signup(unique("Anna"))
    await bert.signup(unique("Bert"))
    assert bert.name is not None
    asked = await anna.post("/api/friends", {"who": bert.name.upper()})
    assert asked.json()["state"] == "asked"
    (request,) = (await bert.get("/api/friends")).json()["friends"]
    assert request["state"] == "asking" and request["name"] == anna.name
    assert (await bert.get("/api/community")).json()["requests"] == 1
    assert (await bert.post("/api/friends/accept", {"who": request["key"]})).status_code == 200
    founded = await anna.found(size=5, private=True)
    (friend,) = (await bert.get("/api/friends")).json()["friends"]
    assert friend["state"] == "friend"
    assert friend["where"] == {"place": "private", "world": None, "game": None}
    invited = await anna.post("/api/friends/invite", {"who": bert.name, "game": founded["game"]})
    assert invited.status_code == 201
    (invitation,) = (await bert.get("/api/community")).json()["invitations"]
    assert invitation["from"]["name"] == anna.name and invitation["private"]
    seated = await bert.post(f"/api/invitations/{invitation['id']}/accept")
    assert seated.status_code == 201, seated.text
    assert seated.json()["game"] == founded["game"] and seated.json()["token"]
    again = await bert.post(f"/api/invitations/{invitation['id']}/accept")
    assert again.json()["error"] == "invitation_not_found"


@pytest.mark.rule("O5", "X3", "X4")
async def test_bans_of_the_mailbox_and_friends_areas_are_refused_with_reason_and_expiry(
    api: Callable[[], ApiClient], service: Service
) -> None:
    anna, bert = api(), api()
    account = await anna.signup(unique("Anna"))
    await bert.signup(unique("Bert"))
    mo = await staff(service, unique("Mo"), Role.MODERATOR)
    await moderation(service).impose(
        by=mo,
        subject=Subject.account(account["id"]),
        kind=SanctionKind.BAN,
        area=MAILBOX,
        reason="Spam im Postfach",
        duration=timedelta(hours=2),
    )
    refused = await anna.post("/api/mail", {"to": bert.name, "text": "Werbung"})
    body = refused.json()
    assert refused.status_code == 403 and body["error"] == "banned"
    assert "Spam im Postfach" in body["message"] and body["expires_at"] is not None
    assert (await anna.get("/api/mail")).status_code == 403
    # Friends are another area: still open to her.
    assert (await anna.post("/api/friends", {"who": bert.name})).status_code == 201
    await moderation(service).impose(
        by=mo,
        subject=Subject.account(account["id"]),
        kind=SanctionKind.BAN,
        area=FRIENDS,
        reason="Belästigung",
        duration=timedelta(hours=2),
    )
    assert (await anna.get("/api/friends")).json()["error"] == "banned"
    called = await anna.post("/api/rooms/call", {"who": bert.name})  # calling is a friends' act
    assert (called.status_code, called.json()["error"]) == (403, "banned")


def sentence(code: str) -> str:
    return error_text(code, "de")


@pytest.mark.rule("X2", "X4")
async def test_a_friend_called_into_a_room_enters_it_by_the_invitation(
    api: Callable[[], ApiClient], service: Service
) -> None:
    anna, bert, dora = api(), api(), api()
    await anna.signup(unique("Anna"))
    await bert.signup(unique("Bert"))
    await dora.signup(unique("Dora"))
    await anna.post("/api/friends", {"who": bert.name})
    (asking,) = (await bert.get("/api/friends")).json()["friends"]
    await bert.post("/api/friends/accept", {"who": asking["key"]})
    # Cora: a phone-only friend who is not calling now (away).
    cora = await create_phone_identity(service.hub.sessions, pin="1357")
    account = await find_account(service.hub.sessions, anna.name or "")
    assert account is not None
    friends = community_of(service.hub).friends
    await friends.ask(Owner.account(account.id), Owner.phone(cora.id))
    await friends.accept(Owner.phone(cora.id), Owner.account(account.id))
    cases = [
        (f"p:{cora.id}", 409, "friend_offline"),
        (dora.name, 403, "not_friends"),
        ("Niemand-hier", 404, "unknown_person"),
    ]
    for who, status, code in cases:
        refused = await anna.post("/api/rooms/call", {"who": who})
        body = refused.json()
        assert (refused.status_code, body["error"]) == (status, code), who
        assert body["message"] == sentence(code)  # in words, German
    assert friends.invitations(Owner.phone(cora.id)) == []
    # Bert's page asked just now (accepting): he is online. Anna calls him in.
    called = await anna.post("/api/rooms/call", {"who": bert.name})
    assert called.status_code == 200, called.text
    room = called.json()["room"]
    assert room["kind"] == "private" and called.json()["invited"]["name"] == bert.name
    assert [m["name"] for m in called.json()["members"]] == [anna.name]
    (invitation,) = (await bert.get("/api/community")).json()["invitations"]
    assert invitation["kind"] == "room" and invitation["room"] == room["id"]
    assert invitation["from"]["name"] == anna.name
    # Not a table: it is taken on the rooms page.
    at_table = await bert.post(f"/api/invitations/{invitation['id']}/accept")
    assert (at_table.status_code, at_table.json()["error"]) == (409, "invitation_room")
    assert (await dora.post("/api/rooms/enter", {"invitation": invitation["id"]})).json()[
        "error"
    ] == "invitation_not_found"  # somebody else's invitation is nothing to them
    entered = await bert.post("/api/rooms/enter", {"invitation": invitation["id"]})
    assert entered.status_code == 200, entered.text
    assert entered.json()["room"]["id"] == room["id"]
    assert [m["name"] for m in entered.json()["members"]] == [anna.name, bert.name]
    again = await bert.post("/api/rooms/enter", {"invitation": invitation["id"]})
    assert (again.status_code, again.json()["error"]) == (404, "invitation_not_found")
    # Called again, Anna leaves before Bert comes: the room and its invitation are gone.
    await bert.post(f"/api/rooms/member/{entered.json()['token']}/leave")
    second = (await anna.post("/api/rooms/call", {"who": bert.name})).json()
    await anna.post(f"/api/rooms/member/{second['token']}/leave")
    assert (await bert.get("/api/community")).json()["invitations"] == []
