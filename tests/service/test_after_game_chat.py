"""The rooms of issue 12 point 8, over real WebSockets: the dead talk among themselves, the
spectators have a room of their own that the dead read too, and neither ever reaches the
living (D6, X6); once the game is over the night room's, the calls' and the dead's chat is
shown to everyone in the history (the end screen's "Alle Gespräche").
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from datetime import timedelta
from typing import Any

import pytest
from websockets.asyncio.client import connect

from vollmond.engine.standard import Nominate, PhaseTimeout, Say, UseAbility, Vote
from vollmond.engine.standard.queries import night_room
from vollmond.engine.standard.types import ActionKind
from vollmond.moderation import Area, SanctionKind, Subject
from vollmond.service.actor import Accepted, GameActor
from vollmond.service.web.auth import SESSION_COOKIE
from vollmond.store.models import Role

from .support import ApiClient, Service, WsClient, hello, seated_table
from .test_moderation_enforce import staff
from .wsplay import SLOW, table

SEVEN = [["evil", 2], ["filler", 5]]


@pytest.fixture
async def sockets() -> AsyncIterator[list[WsClient]]:
    made: list[WsClient] = []
    yield made
    for ws in made:
        await ws.close()


async def _ok(actor: GameActor, command: Any) -> None:
    assert isinstance(await actor.submit(command), Accepted), command


async def _timeout(actor: GameActor) -> None:
    assert actor.state is not None
    await _ok(actor, PhaseTimeout(actor.state.phase_seq))


async def _banish_the_wolf(actor: GameActor) -> None:
    """A four-seat game with one wolf to its end: a villager dies, the wolf is banished."""
    assert actor.state is not None
    (wolf,) = night_room(actor.state)
    others = [s for s in range(1, 5) if s != wolf]
    await _ok(actor, UseAbility(wolf, ActionKind.EVIL_VOTE, others[0]))
    await _timeout(actor)  # morning
    await _timeout(actor)  # day
    await _ok(actor, Nominate(others[1], wolf))
    await _timeout(actor)  # the vote
    for seat in (wolf, *others[1:]):
        await _ok(actor, Vote(seat, wolf))
    assert actor.is_over


async def _until(ws: WsClient, test: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    deadline = time.monotonic() + 20
    while True:
        frame = await ws.recv(max(0.01, deadline - time.monotonic()))
        if test(frame):
            return frame


def _texts(ws: WsClient) -> str:
    """Everything a socket received, as one string (events, views, side chat)."""
    return "\n".join(str(frame) for frame in ws.frames)


async def _seat_sockets(
    service: Service, game: str, tokens: list[str], sockets: list[WsClient]
) -> dict[int, WsClient]:
    by_seat: dict[int, WsClient] = {}
    for seat, token in enumerate(tokens, start=1):
        ws = WsClient(await connect(service.ws_url))
        sockets.append(ws)
        assert (await hello(ws, game, token))["type"] == "welcome"
        by_seat[seat] = ws
    return by_seat


async def _spectators(
    service: Service, game: str, viewer: ApiClient, sockets: list[WsClient]
) -> tuple[WsClient, WsClient]:
    """A signed-in spectator (the viewer's cookie) and an anonymous one, both watching."""
    cookie = f"{SESSION_COOKIE}={viewer.http.cookies[SESSION_COOKIE]}"
    spectator = WsClient(await connect(service.ws_url, additional_headers={"Cookie": cookie}))
    anonymous = WsClient(await connect(service.ws_url))
    sockets += [spectator, anonymous]
    for ws in (spectator, anonymous):
        assert (await hello(ws, game, spectate=True))["type"] == "welcome"
    return spectator, anonymous


@pytest.mark.rule("D6", "X6")
async def test_dead_and_spectator_rooms_stay_away_from_the_living_until_the_end(
    service: Service, api: Callable[[], ApiClient], sockets: list[WsClient]
) -> None:
    game, tokens = await table(service, 7, SEVEN, SLOW)
    actor = service.hub.actors[game]
    assert actor.state is not None
    evil = sorted(night_room(actor.state))
    village = [s for s in range(1, 8) if s not in evil]
    first_dead, banished, later_dead, last, other = village

    by_seat = await _seat_sockets(service, game, tokens, sockets)
    viewer = api()
    await viewer.signup("Zaungast")
    spectator, anonymous = await _spectators(service, game, viewer, sockets)

    # Night 1: the night room talks; two villagers die by night and by vote.
    await _ok(actor, Say(evil[0], "Nachtgeheimnis"))
    for wolf in evil:
        await _ok(actor, UseAbility(wolf, ActionKind.EVIL_VOTE, first_dead))
    await _timeout(actor)  # morning
    await _timeout(actor)  # day
    await _ok(actor, Nominate(last, banished))
    await _timeout(actor)  # the vote
    for seat in (*evil, banished, later_dead, last, other):
        await _ok(actor, Vote(seat, banished))
    assert actor.state.phase.value == "night"

    # The dead speak among themselves; a spectator writes in the spectators' room.
    await _ok(actor, Say(first_dead, "Grabesstimme"))
    anonymous_try = {"type": "command", "cid": "a1", "command": {"type": "Say", "text": "x"}}
    await anonymous.send(anonymous_try)
    refused = await _until(anonymous, lambda f: f["type"] == "error")
    assert refused["code"] == "spectator_login" and refused["cid"] == "a1"
    await spectator.send(
        {"type": "command", "cid": "s1", "command": {"type": "Say", "text": "Zuschauergruß"}}
    )
    assert (await _until(spectator, lambda f: f["type"] == "ack"))["cid"] == "s1"
    for seat in (first_dead, banished):
        line = await _until(by_seat[seat], lambda f: f["type"] == "side_chat")
        assert (line["name"], line["text"]) == ("Zaungast", "Zuschauergruß")
    for ws in sockets:
        await ws.quiet(0.3)

    for seat, ws in by_seat.items():
        seen = _texts(ws)
        assert ("Nachtgeheimnis" in seen) == (seat in evil), seat
        assert ("Grabesstimme" in seen) == (seat in (first_dead, banished)), seat
        assert ("Zuschauergruß" in seen) == (seat in (first_dead, banished)), seat
    for ws in (spectator, anonymous):
        seen = _texts(ws)
        assert "Nachtgeheimnis" not in seen and "Grabesstimme" not in seen
        assert "Zuschauergruß" in seen

    before = await viewer.post(f"/api/games/{game}/history", {"lang": "de"})
    assert "Nachtgeheimnis" not in before.text and "Grabesstimme" not in before.text

    # Night 2 ends the game (the evil team is as many as the rest); then all is shown.
    for wolf in evil:
        await _ok(actor, UseAbility(wolf, ActionKind.EVIL_VOTE, later_dead))
    await _timeout(actor)
    assert actor.is_over
    after = (await viewer.post(f"/api/games/{game}/history", {"lang": "de"})).json()["events"]
    rooms = {(e["params"]["room"], e["params"]["text"]) for e in after if e["code"] == "chat"}
    assert {("night_room", "Nachtgeheimnis"), ("out", "Grabesstimme")} <= rooms
    # A socket opened after the end also gets the spectators' room, a living player's too.
    late = WsClient(await connect(service.ws_url))
    sockets.append(late)
    assert (await hello(late, game, tokens[last - 1]))["type"] == "welcome"
    line = await _until(late, lambda f: f["type"] == "side_chat")
    assert line["text"] == "Zuschauergruß"


async def test_rematch_founds_the_same_setup_once_and_the_others_join_it(
    service: Service, api: Callable[[], ApiClient]
) -> None:
    deck = [["evil", 1], ["filler", 3]]
    game, clients, tokens = await seated_table(api, 4, "Rev", deck="custom", custom_roles=deck)
    outsider = api()
    await outsider.signup("RevZaungast")
    path = f"/api/games/{game}/rematch"
    early = await clients[1].post(path, {"token": tokens[1]})
    assert early.status_code == 409 and early.json()["error"] == "not_over"

    await _banish_the_wolf(service.hub.actors[game])

    assert (await outsider.post(path, {})).status_code == 403
    assert (await outsider.get(path)).status_code == 403
    assert (await clients[2].get(path)).json() == {"game": None}
    first = await clients[1].post(path, {"token": tokens[1]})
    assert first.status_code == 201 and first.json()["founded"] is True
    new_game = first.json()["game"]
    assert (await clients[2].get(path)).json() == {"game": new_game}  # the offer
    second = await clients[2].post(path, {})  # by account, without the token
    assert second.status_code == 201
    assert (second.json()["game"], second.json()["founded"]) == (new_game, False)
    again = await clients[2].post(path, {})
    assert again.json() == {"game": new_game, "token": None, "founded": False}

    table = (await clients[1].get(f"/api/games/{new_game}")).json()["game"]
    assert table["private"] is False and table["status"] == "lobby"
    assert sorted(p["name"] for p in table["players"]) == ["Rev2", "Rev3"]
    stored = await service.hub.game(new_game)
    assert stored.options == (await service.hub.game(game)).options


@pytest.mark.rule("O5")
async def test_a_world_ban_holds_for_the_rematch_too(
    service: Service, api: Callable[[], ApiClient]
) -> None:
    """A player banned from the game's world after it ended can neither found its rematch
    nor join it; the others still can."""
    deck = [["evil", 1], ["filler", 3]]
    game, clients, tokens = await seated_table(api, 4, "Ban", deck="custom", custom_roles=deck)
    await _banish_the_wolf(service.hub.actors[game])

    banned = clients[3]
    assert banned.account_id is not None and service.enforcer is not None
    world = (await service.hub.game(game)).world
    await service.enforcer.moderation.impose(
        by=await staff(service, "BanMo", Role.MODERATOR),
        subject=Subject.account(banned.account_id),
        kind=SanctionKind.BAN,
        area=Area.in_world(world),
        reason="Spielverderber",
        duration=timedelta(hours=2),
    )
    path = f"/api/games/{game}/rematch"
    refused = await banned.post(path, {"token": tokens[3]})
    assert refused.status_code == 403 and refused.json()["area"] == f"world:{world}"
    first = await clients[1].post(path, {"token": tokens[1]})
    assert first.status_code == 201 and first.json()["founded"] is True
    again = await banned.post(path, {"token": tokens[3]})
    assert again.status_code == 403 and again.json()["area"] == f"world:{world}"
    table = (await clients[1].get(f"/api/games/{first.json()['game']}")).json()["game"]
    assert [p["name"] for p in table["players"]] == [clients[1].name]
