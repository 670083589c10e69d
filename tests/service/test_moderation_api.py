"""The moderation console's JSON API and live feed (issue 9), on SQLite and PostgreSQL.

Real uvicorn, real httpx and websockets clients, the app's own `Moderation` (reached through
`app.state`, as the phone and the web button reach it). Roles are set in the store; every
route reads them again, so these tests also show that the page is never trusted.
"""

from __future__ import annotations

import io
import json
import re
import time
import wave
from collections.abc import AsyncIterator
from typing import Any

import pytest
from starlette.routing import Route
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus
from websockets.typing import Origin

from vollmond.engine.core import Viewer
from vollmond.moderation import Caller, Moderation
from vollmond.store import Role, set_role

from .support import ApiClient, Service
from .wsplay import FOUR_DECK, SLOW, table

pytestmark = pytest.mark.slow


def moderation_of(service: Service) -> Moderation:
    assert service.app is not None
    core: Moderation = service.app.state.moderation
    return core


class Staff:
    def __init__(self, admin: ApiClient, moderator: ApiClient, player: ApiClient) -> None:
        self.admin = admin
        self.moderator = moderator
        self.player = player


async def _signed_up(service: Service, name: str, role: Role) -> ApiClient:
    client = ApiClient(service)
    await client.signup(name)
    assert client.account_id is not None
    await set_role(service.hub.sessions, client.account_id, role)
    return client


@pytest.fixture
async def staff(fast_service: Service) -> AsyncIterator[Staff]:
    made = Staff(
        await _signed_up(fast_service, "Ada", Role.ADMIN),
        await _signed_up(fast_service, "Mo", Role.MODERATOR),
        await _signed_up(fast_service, "Pia", Role.PLAYER),
    )
    yield made
    for client in (made.admin, made.moderator, made.player):
        await client.close()


def _mod_routes(service: Service) -> list[Route]:
    assert service.app is not None
    return [
        r
        for r in service.app.router.routes
        if isinstance(r, Route) and r.path.startswith("/api/mod/")
    ]


def _concrete(path: str) -> str:
    return re.sub(r"\{[a-z_]+(:int)?\}", "1", path)


async def test_a_player_is_refused_on_every_console_route(
    fast_service: Service, staff: Staff
) -> None:
    routes = _mod_routes(fast_service)
    assert len(routes) >= 20  # the whole console, so a route added later is covered too
    anonymous = ApiClient(fast_service)
    try:
        for route in routes:
            for method in sorted(route.methods or ()):
                if method == "HEAD":
                    continue
                path = _concrete(route.path)
                for client, allowed in ((staff.player, (403, 404)), (anonymous, (401,))):
                    response = await (
                        client.post(path, {}) if method == "POST" else client.get(path)
                    )
                    assert response.status_code in allowed, (method, path, response.text)
                    assert response.json()["error"] in ("not_staff", "login_required")
    finally:
        await anonymous.close()


@pytest.mark.rule("O1")
async def test_alarm_reaches_the_console_socket_at_once_and_is_taken_and_resolved(
    fast_service: Service, staff: Staff
) -> None:
    game_id, _ = await table(fast_service, 4, FOUR_DECK, SLOW)
    core = moderation_of(fast_service)
    url = fast_service.ws_url + "/mod"
    cookie = "; ".join(f"{k}={v}" for k, v in staff.moderator.http.cookies.items())
    async with connect(url, additional_headers={"Cookie": cookie}) as ws:
        queue = json.loads(await ws.recv())
        assert queue == {"type": "queue", "alarms": []}
        started = time.perf_counter()
        alarm = await core.raise_alarm(
            game_id=game_id,
            round=1,
            phase="night",
            caller=Caller(house=2),
            reason=1,
            accused_house=3,
        )
        pushed = json.loads(await ws.recv())
        latency = time.perf_counter() - started
        assert pushed["type"] == "alarm"
        assert pushed["alarm"]["id"] == alarm.id
        assert pushed["alarm"]["status"] == "open"
        assert pushed["alarm"]["accused_house"] == 3
        assert latency < 1.0, latency

        listed = (await staff.moderator.get("/api/mod/alarms")).json()["alarms"]
        assert [a["id"] for a in listed] == [alarm.id]
        taken = await staff.moderator.post(f"/api/mod/alarms/{alarm.id}/take")
        assert taken.status_code == 200, taken.text
        assert taken.json()["alarm"]["status"] == "taken"
        assert json.loads(await ws.recv())["alarm"]["status"] == "taken"
        # Another moderator's alarm cannot be taken from them.
        assert (await staff.admin.post(f"/api/mod/alarms/{alarm.id}/take")).status_code == 409

        bad = await staff.moderator.post(
            f"/api/mod/alarms/{alarm.id}/resolve", {"outcome": "shrug", "note": ""}
        )
        assert (bad.status_code, bad.json()["error"]) == (400, "invalid_request")
        extra = await staff.moderator.post(
            f"/api/mod/alarms/{alarm.id}/resolve", {"outcome": "warned", "sneaky": 1}
        )
        assert extra.status_code == 400
        done = await staff.moderator.post(
            f"/api/mod/alarms/{alarm.id}/resolve", {"outcome": "warned", "note": "Ermahnt"}
        )
        assert done.status_code == 200, done.text
        assert done.json()["alarm"]["outcome"] == "warned"
        assert json.loads(await ws.recv())["alarm"]["status"] == "resolved"
    assert (await staff.moderator.get("/api/mod/alarms")).json()["alarms"] == []
    every = (await staff.moderator.get("/api/mod/alarms", all="1")).json()["alarms"]
    assert [a["note"] for a in every] == ["Ermahnt"]


async def test_the_console_socket_refuses_players_and_foreign_pages(
    fast_service: Service, staff: Staff
) -> None:
    url = fast_service.ws_url + "/mod"
    cookie = "; ".join(f"{k}={v}" for k, v in staff.player.http.cookies.items())
    async with connect(url, additional_headers={"Cookie": cookie}) as ws:
        assert json.loads(await ws.recv()) == {"type": "error", "error": "not_staff"}
        await ws.wait_closed()
        assert ws.close_code == 4403
    staff_cookie = "; ".join(f"{k}={v}" for k, v in staff.moderator.http.cookies.items())
    with pytest.raises(InvalidStatus, match="403"):
        async with connect(
            url, additional_headers={"Cookie": staff_cookie}, origin=Origin("http://evil.example")
        ) as ws:
            await ws.recv()


async def test_operator_view_of_a_running_game_holds_no_living_role(
    fast_service: Service, staff: Staff
) -> None:
    game_id, _ = await table(fast_service, 4, FOUR_DECK, SLOW)
    games = (await staff.moderator.get("/api/mod/games")).json()["games"]
    assert game_id in [g["id"] for g in games]
    answer = (await staff.moderator.get(f"/api/mod/games/{game_id}")).json()
    view: dict[str, Any] = answer["view"]
    assert view is not None and view["phase"] != "over"
    actor = fast_service.hub.actors[game_id]
    assert actor.state is not None
    living = {p.seat for p in actor.state.players if p.alive and not p.revealed}
    assert len(living) == 4
    for seat in view["seats"]:
        if seat["seat"] in living:
            assert seat["role"] is None, seat
    assert view.get("me") is None and view.get("night_room") is None
    # The same projection the engine makes for an operator, nothing more.
    assert view == json.loads(json.dumps(actor.view_for(Viewer.operator())))
    serialised = json.dumps(answer)
    for player in actor.state.players:
        assert f'"role": "{player.role.value}"' not in serialised


@pytest.mark.rule("O5")
async def test_moderator_ban_limits_are_refused_with_a_clear_code(
    fast_service: Service, staff: Staff
) -> None:
    target = staff.player.account_id
    limit_minutes = fast_service.settings.moderation.moderator_ban_max_hours * 60
    ban = {"kind": "ban", "account": target, "reason": "Beleidigungen", "area": "web"}
    for body, code in (
        ({**ban, "minutes": limit_minutes + 1}, "ban_too_long"),
        ({**ban}, "ban_too_long"),  # permanent
        ({**ban, "area": "all", "minutes": 60}, "area_reserved"),
    ):
        refused = await staff.moderator.post("/api/mod/sanctions", body)
        assert (refused.status_code, refused.json()["error"]) == (403, code), refused.text
    assert (await staff.moderator.get("/api/mod/bans")).json()["bans"] == []

    bad_area = await staff.moderator.post(
        "/api/mod/sanctions", {**ban, "area": "moon", "minutes": 60}
    )
    assert (bad_area.status_code, bad_area.json()["error"]) == (400, "invalid_area")
    ok = await staff.moderator.post("/api/mod/sanctions", {**ban, "minutes": 60})
    assert ok.status_code == 201, ok.text
    permanent = await staff.admin.post("/api/mod/sanctions", {**ban, "area": "all"})
    assert permanent.status_code == 201, permanent.text
    assert permanent.json()["sanction"]["expires_at"] is None
    # A moderator cannot lift the admin's permanent ban; the admin can.
    lift = f"/api/mod/sanctions/{permanent.json()['sanction']['id']}/lift"
    assert (await staff.moderator.post(lift)).json()["error"] == "area_reserved"
    assert (await staff.admin.post(lift)).status_code == 200

    found = (await staff.moderator.get("/api/mod/bans", q="pi")).json()["bans"]
    assert [(b["name"], b["area"]) for b in found] == [("Pia", "web")]
    assert (await staff.moderator.get("/api/mod/bans", q="zz")).json()["bans"] == []
    page = (await staff.moderator.get(f"/api/mod/accounts/{target}")).json()
    assert {s["area"] for s in page["sanctions"]} == {"web", "all"}
    karma = fast_service.settings.moderation.karma_ban
    assert page["karma"] == -2 * karma
    assert [e["amount"] for e in page["karma_history"]] == [-karma, -karma]


@pytest.mark.rule("O3")
async def test_only_an_admin_lists_and_plays_recordings_and_every_access_is_audited(
    fast_service: Service, staff: Staff
) -> None:
    game_id, _ = await table(fast_service, 4, FOUR_DECK, SLOW)
    core = moderation_of(fast_service)
    writer = await core.start_recording(room="market", game_id=game_id)
    pcm = bytes(range(256)) * 64
    writer.write_audio(pcm)
    writer.write_chat("Pia", "Hallo")
    await core.finish_recording(writer)
    rid = writer.recording_id

    for path in ("/api/mod/recordings", f"/api/mod/recordings/{rid}/audio"):
        refused = await staff.moderator.get(path)
        assert (refused.status_code, refused.json()["error"]) == (403, "not_permitted")
    held = await staff.moderator.post(f"/api/mod/recordings/{rid}/hold", {"reason": "x"})
    assert held.status_code == 403
    # The moderator can read no audit log either; the admin sees the refusals in it.
    assert (await staff.moderator.get("/api/mod/audit")).status_code == 403
    actions = [
        (e["actor"], e["action"])
        for e in (await staff.admin.get("/api/mod/audit")).json()["entries"]
    ]
    mo = staff.moderator.account_id
    for action in ("recording.list.refused", "recording.play.refused", "recording.hold.refused"):
        assert (mo, action) in actions

    listed = (await staff.admin.get("/api/mod/recordings")).json()["recordings"]
    assert [r["id"] for r in listed] == [rid]
    audio = await staff.admin.get(f"/api/mod/recordings/{rid}/audio")
    assert audio.status_code == 200
    assert audio.headers["content-type"] == "audio/wav"
    with wave.open(io.BytesIO(audio.content)) as wav:
        assert (wav.getframerate(), wav.getnchannels(), wav.getsampwidth()) == (8000, 1, 2)
        assert wav.readframes(wav.getnframes()) == pcm
    chat = (await staff.admin.get(f"/api/mod/recordings/{rid}/chat")).json()
    assert [(c["speaker"], c["text"]) for c in chat["chat"]] == [("Pia", "Hallo")]
    hold = await staff.admin.post(f"/api/mod/recordings/{rid}/hold", {"reason": "Anzeige 4711"})
    assert hold.json()["recording"]["hold_reason"] == "Anzeige 4711"
    assert (await staff.admin.post(f"/api/mod/recordings/{rid}/release")).status_code == 200
    assert (await staff.admin.post(f"/api/mod/recordings/{rid}/delete")).status_code == 200
    gone = await staff.admin.get(f"/api/mod/recordings/{rid}/audio")
    assert (gone.status_code, gone.json()["error"]) == (410, "recording_deleted")

    log = (await staff.admin.get("/api/mod/audit", target_kind="recording")).json()["entries"]
    ada = staff.admin.account_id
    mine = [e["action"] for e in log if e["actor"] == ada]
    for action in ("recording.list", "recording.play", "recording.hold", "recording.release"):
        assert action in mine
    assert mine[0] == "recording.delete"  # newest first


async def test_admin_makes_a_moderator_and_grants_and_a_moderator_cannot(
    fast_service: Service, staff: Staff
) -> None:
    pia = staff.player.account_id
    role = f"/api/mod/accounts/{pia}/role"
    refused = await staff.moderator.post(role, {"role": "moderator"})
    assert (refused.status_code, refused.json()["error"]) == (403, "not_permitted")
    assert (await staff.admin.post(role, {"role": "wizard"})).status_code == 400
    assert (await staff.admin.post(role, {"role": "moderator"})).status_code == 200
    # Read from the store at the next call: Pia is staff now, without signing in again.
    me = (await staff.player.get("/api/mod/me")).json()
    assert (me["role"], me["powers"]["recordings"]) == ("moderator", False)

    grants = f"/api/mod/accounts/{pia}/grants"
    body = {"kind": "credit", "amount": 40, "reason": "Überweisung"}
    assert (await staff.moderator.post(grants, body)).status_code == 403
    assert (await staff.admin.post(grants, body)).status_code == 200
    premium = {"kind": "premium", "days": 30, "reason": "Spende"}
    assert (await staff.admin.post(grants, premium)).status_code == 200
    page = (await staff.moderator.get(f"/api/mod/accounts/{pia}")).json()
    assert page["credit"] == 40
    assert [(e["amount"], e["reason"]) for e in page["credit_history"]] == [(40, "Überweisung")]
    assert page["premium_until"] is not None
    found = (await staff.moderator.get("/api/mod/accounts", q="PI")).json()["accounts"]
    assert [a["name"] for a in found] == ["Pia"]
    # The last admin cannot be demoted, not even by herself.
    myself = f"/api/mod/accounts/{staff.admin.account_id}/role"
    last = await staff.admin.post(myself, {"role": "player"})
    assert (last.status_code, last.json()["error"]) == (403, "not_permitted")
