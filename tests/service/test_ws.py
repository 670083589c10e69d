"""The WebSocket protocol v1 against a running service: hello, spectating, authorization,
secrecy over a whole game played by five sockets, and polite answers to bad input."""

from __future__ import annotations

import asyncio
import json
import random
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed

from vollmond.engine.core import Audience, AudienceKind, Viewer
from vollmond.service.protocol import MAX_MESSAGE_BYTES, PROTOCOL_VERSION
from vollmond.store import read_events

from .support import ApiClient, Service, WsClient, hello, open_ws, ws_client
from .wsplay import FAST, FIVE_DECK, FOUR_DECK, SLOW, Player, table

EVIL_ONLY = {"evil_vote_cast", "evil_votes_complete", "team_revealed"}


def events(client: WsClient) -> list[dict[str, Any]]:
    return [f for f in client.frames if f["type"] == "event"]


def command(actor: int, name: str, /, **fields: Any) -> dict[str, Any]:
    return {"type": "command", "id": 7, "command": {"type": name, "actor": actor, **fields}}


def dealt_roles(clients: list[WsClient]) -> dict[int, str]:
    """Each seat's own role, from the welcome view it received (seat = position + 1)."""
    return {i + 1: c.frames[0]["view"]["me"]["role"] for i, c in enumerate(clients)}


async def welcome_all(service: Service, game_id: str, tokens: list[str]) -> list[WsClient]:
    """Open one socket per seat (the caller closes them)."""
    clients = []
    for token in tokens:
        client = await open_ws(service)
        frame = await hello(client, game_id, token)
        assert frame["type"] == "welcome", frame
        clients.append(client)
    return clients


async def close_all(clients: list[WsClient]) -> None:
    for client in clients:
        await client.close()


def roles_of(welcomes: list[dict[str, Any]]) -> dict[int, str]:
    return {w["seat"]: w["view"]["me"]["role"] for w in welcomes}


# -- hello -----------------------------------------------------------------------------------
async def test_hello_with_a_seat_token_welcomes_with_the_players_own_view(
    fast_service: Service,
) -> None:
    game_id, tokens = await table(fast_service, 4, FOUR_DECK, SLOW)
    welcomes = []
    for token in tokens:
        async with ws_client(fast_service) as client:
            welcome = await hello(client, game_id, token, lang="en")
            welcomes.append(welcome)
            assigned = await client.expect("event")
            while assigned["code"] != "role_assigned":
                assigned = await client.expect("event")
            assert assigned["params"] == {"role": welcome["view"]["me"]["role"]}
            assert assigned["text"]  # rendered in the asked language
    assert [w["seat"] for w in welcomes] == [1, 2, 3, 4]
    for welcome in welcomes:
        assert welcome["v"] == PROTOCOL_VERSION
        assert welcome["game"] == game_id
        view = welcome["view"]
        assert view["phase"] == "night"
        assert view["me"]["seat"] == welcome["seat"]
        others = [s["role"] for s in view["seats"] if s["seat"] != welcome["seat"]]
        assert others == [None, None, None]  # one evil player: no teammates to know
    assert sorted(roles_of(welcomes).values()) == ["evil", "filler", "filler", "seer"]


@pytest.mark.parametrize(
    ("message", "code"),
    [
        ({"type": "hello", "game": "GAME", "token": "stolen-or-made-up"}, "bad_token"),
        ({"type": "hello", "game": "GAME"}, "token_or_spectate"),
        ({"type": "hello", "game": "nope", "spectate": True}, "not_running"),
        ({"type": "hello", "game": "GAME", "spectate": True, "v": 2}, "version"),
        ({"type": "hello", "game": "GAME", "spectate": True, "lang": "fr"}, "invalid_message"),
        ({"type": "sync"}, "hello_first"),
        (command(1, "Vote", target=None), "hello_first"),
    ],
)
async def test_a_bad_hello_is_refused_and_the_socket_stays_open(
    fast_service: Service,
    message: dict[str, Any],
    code: str,
) -> None:
    game_id, tokens = await table(fast_service, 4, FOUR_DECK, SLOW)
    async with ws_client(fast_service) as client:
        await client.send(json.loads(json.dumps(message).replace("GAME", game_id)))
        error = await client.expect("error")
        assert error["code"] == code
        assert error["message"]
        welcome = await hello(client, game_id, tokens[0])
        assert welcome["type"] == "welcome"
        assert welcome["seat"] == 1


async def test_a_token_of_another_game_is_a_bad_token(
    fast_service: Service,
) -> None:
    _, first_tokens = await table(fast_service, 4, FOUR_DECK, SLOW)
    second, _ = await table(fast_service, 4, FOUR_DECK, SLOW)
    async with ws_client(fast_service) as client:
        assert (await hello(client, second, first_tokens[0]))["code"] == "bad_token"


async def test_a_lobby_cannot_be_followed_yet(
    fast_service: Service, browsers: Callable[[], ApiClient]
) -> None:
    host = browsers()
    await host.signup("Host")
    founded = await host.found(size=6)
    async with ws_client(fast_service) as client:
        refused = await hello(client, founded["game"], founded["token"])
        assert refused["code"] == "not_running"


async def test_a_second_hello_on_one_socket_is_refused(
    fast_service: Service,
) -> None:
    game_id, tokens = await table(fast_service, 4, FOUR_DECK, SLOW)
    async with ws_client(fast_service) as client:
        assert (await hello(client, game_id, tokens[0]))["seat"] == 1
        await client.send({"type": "hello", "game": game_id, "token": tokens[1]})
        assert (await client.expect("error"))["code"] == "already_joined"
        await client.send(command(2, "Say", text="I am seat 2"))
        assert (await client.expect("error"))["code"] == "not_your_seat"


# -- spectators (X6) ------------------------------------------------------------------------
@pytest.mark.rule("X6")
async def test_spectators_see_only_public_events_and_cannot_act(
    fast_service: Service,
) -> None:
    game_id, _ = await table(fast_service, 4, FOUR_DECK, SLOW)
    async with ws_client(fast_service) as spectator:
        welcome = await hello(spectator, game_id, spectate=True)
        assert welcome["type"] == "welcome"
        assert welcome["seat"] is None
        view = welcome["view"]
        assert view["me"] is None
        assert view["night_room"] is None
        assert view["witch_victim"] is None
        assert all(s["role"] is None for s in view["seats"])
        # The log so far comes after the welcome (a loaded machine: later than 0.3 s), then
        # nothing more: the night's private events never reach a spectator.
        async with asyncio.timeout(20):
            while len(events(spectator)) < 2:
                await spectator.recv(20)
        await spectator.quiet(0.3)
        codes = [e["code"] for e in events(spectator)]
        assert codes == ["game_started", "phase_started"]

        await spectator.send(command(1, "Vote", target=2))
        refused = await spectator.expect("error")
        assert refused["code"] == "spectator"
        assert refused["id"] == 7
        # Chat goes to the spectators' room, which needs a signed-in account (issue 12).
        await spectator.send(command(1, "Say", text="hello from the stands"))
        refused = await spectator.expect("error")
        assert refused["code"] == "spectator_login"


# -- authorization ---------------------------------------------------------------------------
async def test_a_player_acts_only_for_their_own_seat(
    fast_service: Service,
) -> None:
    game_id, tokens = await table(fast_service, 4, FOUR_DECK, SLOW)
    clients = await welcome_all(fast_service, game_id, tokens)
    try:
        await asyncio.gather(*(c.quiet(0.2) for c in clients))
        roles = dealt_roles(clients)
        evil = next(seat for seat, role in roles.items() if role == "evil")
        victim = next(seat for seat in roles if seat != evil)
        impostor = clients[victim - 1]
        applied = fast_service.hub.actors[game_id].commands_applied

        # Seat `victim` tries to cast the evil vote in the evil player's name.
        await impostor.send(command(evil, "UseAbility", kind="evil_vote", target=victim))
        refused = await impostor.expect("error")
        assert (refused["code"], refused["id"]) == ("not_your_seat", 7)
        # Without an actor the command is its sender's own: a villager has no evil vote.
        await impostor.send(
            {"type": "command", "command": {"type": "UseAbility", "kind": "evil_vote", "target": 1}}
        )
        assert (await impostor.expect("error"))["code"] == "no_such_ability"
        assert fast_service.hub.actors[game_id].commands_applied == applied

        # The evil player, in their own name, is accepted.
        own = clients[evil - 1]
        await own.send(command(evil, "UseAbility", kind="evil_vote", target=victim))
        ack = await own.expect("ack")
        assert ack["id"] == 7
        assert fast_service.hub.actors[game_id].commands_applied == applied + 1
    finally:
        await close_all(clients)


# -- bad input -------------------------------------------------------------------------------
BAD_INPUT: list[tuple[str | bytes | dict[str, Any], str]] = [
    ("{not json", "malformed_json"),
    ("", "malformed_json"),
    ("[1, 2, 3]", "invalid_message"),
    ({"type": "dance"}, "invalid_message"),
    ({"game": "x"}, "invalid_message"),
    ({"type": "command"}, "invalid_message"),
    ({"type": "ping", "extra": 1}, "invalid_message"),
    ({"type": "command", "command": {"type": "Dance"}}, "bad_command"),
    ({"type": "command", "command": {"type": "Vote"}}, "bad_command"),
    ({"type": "command", "command": {"type": "Vote", "target": "3"}}, "bad_command"),
    ({"type": "command", "command": {"type": "Vote", "target": 2**70}}, "bad_command"),
    ({"type": "command", "command": {"type": "PhaseTimeout", "phase_seq": 1}}, "bad_command"),
    ({"type": "command", "command": {"type": "Vote", "target": None}}, "wrong_phase"),
    ({"type": "command", "command": {"type": "Nominate", "target": 2}}, "wrong_phase"),
    ({"type": "command", "command": {"type": "PlaceCall", "callee": 99}}, "target_unknown"),
    ({"type": "command", "command": {"type": "Say", "text": "x" * 600}}, "text_too_long"),
    ({"type": "ping", "pad": "x" * MAX_MESSAGE_BYTES}, "too_large"),
    (b'{"type": "ping"}', "binary_frame"),
    (b"\xff\xfe\x00", "binary_frame"),
]


async def test_bad_input_gets_an_error_to_that_client_only_and_changes_nothing(
    fast_service: Service,
) -> None:
    game_id, tokens = await table(fast_service, 4, FOUR_DECK, SLOW)
    clients = await welcome_all(fast_service, game_id, tokens)
    try:
        await asyncio.gather(*(c.quiet(0.2) for c in clients))
        actor = fast_service.hub.actors[game_id]
        # The evil player sends, so that the closing chat line has a room to go to at night.
        evil = next(c for c in clients if c.frames[0]["view"]["me"]["role"] == "evil")
        sender, bystander = evil, next(c for c in clients if c is not evil)
        for payload, code in BAD_INPUT:
            before = (actor.state, actor.commands_applied, actor.next_event_seq)
            await sender.send(payload)
            try:
                error = await sender.expect("error", timeout=3)
            except TimeoutError:
                pytest.fail(f"no error frame for {payload!r:.80}")
            assert error["code"] == code, payload
            assert isinstance(error["message"], str)
            assert error["message"]
            assert await bystander.quiet(0.1) == [], payload
            assert (actor.state, actor.commands_applied, actor.next_event_seq) == before
            # The socket keeps working.
            await sender.send({"type": "ping"})
            assert (await sender.expect("pong"))["type"] == "pong"
        # ... and so does the game: a valid command still goes through.
        await sender.send({"type": "command", "id": 8, "command": {"type": "Say", "text": "hi"}})
        assert (await sender.expect("ack"))["id"] == 8
    finally:
        await close_all(clients)


async def test_a_frame_beyond_the_socket_limit_closes_only_that_socket(
    fast_service: Service,
) -> None:
    game_id, tokens = await table(fast_service, 4, FOUR_DECK, SLOW)
    clients = await welcome_all(fast_service, game_id, tokens)
    try:
        await asyncio.gather(*(c.quiet(0.2) for c in clients))
        await clients[0].send("x" * 20_000)
        with pytest.raises(ConnectionClosed) as closed:
            await clients[0].expect("pong")
        assert closed.value.rcvd is not None
        assert closed.value.rcvd.code == 1009  # message too big
        await clients[1].send({"type": "ping"})
        await clients[1].expect("pong")
        async with httpx.AsyncClient() as http:
            assert (await http.get(f"{fast_service.base_url}/healthz")).status_code == 200
        again = await welcome_all(fast_service, game_id, tokens[:1])
        await close_all(again)
    finally:
        await close_all(clients[1:])


# -- a whole game ------------------------------------------------------------------------------
async def stored_audiences(service: Service, game_id: str) -> dict[int, Audience]:
    out = {}
    for stored in await read_events(service.hub.sessions, game_id, 0):
        raw = stored.audience
        assert isinstance(raw, dict)
        out[stored.seq] = Audience(AudienceKind(raw["kind"]), frozenset(raw.get("seats", ())))
    return out


def call_participants(clients: list[WsClient]) -> dict[int, set[int]]:
    """Who is in each call, as the two ends learned it (outgoing: callee; incoming: caller)."""
    participants: dict[int, set[int]] = defaultdict(set)
    for seat, client in enumerate(clients, start=1):
        for event in events(client):
            if event["code"] == "call_outgoing":
                participants[event["params"]["call"]] |= {seat, event["params"]["callee"]}
            if event["code"] == "call_incoming":
                participants[event["params"]["call"]] |= {seat, event["params"]["caller"]}
    return participants


async def received(client: WsClient, seqs: set[int], limit_s: float = 20.0) -> None:
    """Read on until the client has every event of `seqs` (fails after `limit_s`)."""
    async with asyncio.timeout(limit_s):
        while not seqs <= {e["seq"] for e in events(client)}:
            await client.recv(limit_s)


def assert_only_own_secrets(
    seat: int,
    role: str,
    client: WsClient,
    audiences: dict[int, Audience],
    participants: dict[int, set[int]],
) -> None:
    received = events(client)
    seqs = [e["seq"] for e in received]
    assert seqs == sorted(set(seqs)), "events arrive in log order, each once"
    # Exactly the logged events whose audience includes this seat: none lost, none extra.
    assert seqs == [s for s, a in sorted(audiences.items()) if a.includes(Viewer.player(seat))]
    codes = [e["code"] for e in received]
    assert codes.count("role_assigned") == 1
    assigned = next(e for e in received if e["code"] == "role_assigned")
    assert assigned["params"]["role"] == role
    if role != "evil":
        assert not EVIL_ONLY & set(codes), (seat, role)
    if role != "witch":
        assert "witch_victim" not in codes
    if role != "seer":
        assert "check_result" not in codes
    for event in received:
        call = event["params"].get("call")
        if event["code"].startswith("call_") and call is not None:
            assert seat in participants[call], (seat, event)
    for frame in client.frames:
        if frame["type"] == "view" and frame["view"]["phase"] != "over":
            assert frame["view"]["me"]["seat"] == seat
            if role != "evil":
                assert frame["view"]["night_room"] is None
            if role != "witch":
                assert frame["view"]["witch_victim"] is None


@pytest.mark.rule("X6")
async def test_a_whole_game_over_websockets_keeps_every_secret_with_its_audience(
    fast_service: Service,
) -> None:
    game_id, tokens = await table(fast_service, 5, FIVE_DECK, FAST)
    clients = await welcome_all(fast_service, game_id, tokens)
    async with ws_client(fast_service) as spectator:
        await hello(spectator, game_id, spectate=True)
        rng = random.Random(5)
        players = [Player(c, i + 1, rng) for i, c in enumerate(clients)]
        try:
            await asyncio.wait_for(
                asyncio.gather(*(p.play() for p in players), spectator_until_over(spectator)),
                120,
            )
            assert await fast_service.hub.actors[game_id].finished.wait()
            audiences = await stored_audiences(fast_service, game_id)
            # Everything logged for a seat reaches it; a loaded machine may deliver the last
            # events later than the players' short drain after game_over.
            for seat, client in enumerate(clients, start=1):
                await received(
                    client, {s for s, a in audiences.items() if a.includes(Viewer.player(seat))}
                )
        finally:
            await close_all(clients)

    final = next(f for f in reversed(clients[0].frames) if f["type"] == "view")["view"]
    assert final["phase"] == "over"
    assert final["outcome"] is not None
    roles = {s["seat"]: s["role"] for s in final["seats"]}
    assert sorted(roles.values()) == ["doctor", "evil", "filler", "seer", "witch"]
    participants = call_participants(clients)
    for seat, client in enumerate(clients, start=1):
        assert_only_own_secrets(seat, roles[seat], client, audiences, participants)
        assert not [f for f in client.frames if f["type"] == "error" and f["code"] == "internal"]

    # The checks were not vacuous: secrets went out, and players acted.
    secret_codes = {e["code"] for c in clients for e in events(c)}
    assert {"role_assigned", "team_revealed"} <= secret_codes, secret_codes
    assert {"evil_vote_cast", "check_result", "witch_victim"} & secret_codes, secret_codes
    assert sum(len(p.acted) for p in players) > 0
    # The spectator got every public event and nothing else (X6).
    played = [e["code"] for e in events(spectator)]
    assert [c for c in played if c != "chat"][-1] == "game_over"  # all may chat afterwards
    public = [s for s, a in sorted(audiences.items()) if a.kind is AudienceKind.PUBLIC]
    assert [e["seq"] for e in events(spectator)] == public


async def spectator_until_over(spectator: WsClient) -> None:
    while True:
        frame = await spectator.recv(90)
        if frame["type"] == "event" and frame["code"] == "game_over":
            await spectator.quiet(0.5)
            return


@pytest.mark.rule("P1", "X6")
async def test_private_rounds_cannot_be_spectated(
    fast_service: Service, browsers: Callable[[], ApiClient]
) -> None:
    host = browsers()
    await host.signup("Host")
    founded = await host.found(size=4, private=True)
    for i in range(3):
        guest = browsers()
        await guest.signup(f"Guest{i}")
        joined = await guest.post("/api/join", {"code": founded["invitation_code"]})
        assert joined.status_code == 201
    async with ws_client(fast_service) as outsider:
        refused = await hello(outsider, founded["game"], spectate=True)
        assert refused["code"] == "private_game"
    async with ws_client(fast_service) as player:
        assert (await hello(player, founded["game"], founded["token"]))["seat"] == 1


async def test_sync_answers_with_the_view_and_after_resumes_without_gaps_or_repeats(
    fast_service: Service,
) -> None:
    game_id, tokens = await table(fast_service, 4, FOUR_DECK, SLOW)
    clients = await welcome_all(fast_service, game_id, tokens)
    try:
        await asyncio.gather(*(c.quiet(0.2) for c in clients))
        roles = dealt_roles(clients)
        evil = next(seat for seat, role in roles.items() if role == "evil")
        watcher = next(seat for seat in roles if seat != evil)
        seen = max(e["seq"] for e in events(clients[watcher - 1]))

        await clients[watcher - 1].send({"type": "sync"})
        view = await clients[watcher - 1].expect("view")
        assert view["view"]["me"]["seat"] == watcher
        await clients[watcher - 1].close()

        # While the watcher is away: the evil vote (secret) and nothing public yet.
        own = clients[evil - 1]
        await own.send(command(evil, "UseAbility", kind="evil_vote", target=watcher))
        await own.expect("ack")
        await own.send({"type": "command", "id": 9, "command": {"type": "Say", "text": "hm"}})
        await own.expect("ack")

        async with ws_client(fast_service) as back:
            welcome = await hello(back, game_id, tokens[watcher - 1], after=seen)
            assert welcome["seat"] == watcher
            await back.quiet(0.3)
            assert events(back) == []  # nothing of its audience happened meanwhile
        async with ws_client(fast_service) as evil_back:
            await hello(evil_back, game_id, tokens[evil - 1], after=seen)
            await evil_back.quiet(0.3)
            later = events(evil_back)
        audiences = await stored_audiences(fast_service, game_id)
        expected = [
            seq
            for seq, audience in sorted(audiences.items())
            if seq > seen and audience.includes(Viewer.player(evil))
        ]
        assert [e["seq"] for e in later] == expected
        assert {"evil_vote_cast", "chat"} <= {e["code"] for e in later}
        missed_by_watcher = [
            seq for seq in expected if audiences[seq].includes(Viewer.player(watcher))
        ]
        assert missed_by_watcher == []
    finally:
        await close_all([c for i, c in enumerate(clients) if i + 1 != watcher])
