"""Client ids of commands (issue 8): a retry after a lost acknowledgement is answered, not
applied twice — over a new socket, and after a restart of the service.

The probe found commands committed without an answer when the socket dropped; a client cannot
tell those from commands that never arrived. Real WebSockets here: the socket is torn down
right after the command is sent, before anything is read.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from vollmond.service.policy import Policy
from vollmond.store import read_commands, read_events

from .support import Service, ServiceFactory, WsClient, hello, open_ws
from .wsplay import FAST_POLICY, FOUR_DECK, SLOW, table

POLICY: Policy = FAST_POLICY


async def seat_with_a_legal_ability(
    service: Service, game_id: str, tokens: list[str]
) -> tuple[int, str, dict[str, Any]]:
    """The seat of the evil player (who may vote at night), its token and one legal vote."""
    for seat, token in enumerate(tokens, start=1):
        client = await open_ws(service)
        try:
            welcome = await hello(client, game_id, token)
        finally:
            await client.close()
        legal = [c for c in welcome["view"]["me"]["legal"] if c["type"] == "UseAbility"]
        if welcome["view"]["me"]["role"] == "evil" and legal:
            return seat, token, legal[0]
    raise AssertionError("no evil seat with a night vote")


async def logged_with(service: Service, game_id: str, key: str) -> list[Any]:
    return [c for c in await read_commands(service.hub.sessions, game_id) if c.cid == key]


async def until_logged(service: Service, game_id: str, key: str) -> None:
    deadline = time.monotonic() + 10
    while not await logged_with(service, game_id, key):
        assert time.monotonic() < deadline, "the dropped command never reached the log"
        await asyncio.sleep(0.02)


def message(vote: dict[str, Any], cid: str, request_id: int) -> dict[str, Any]:
    return {"type": "command", "id": request_id, "cid": cid, "command": vote}


async def retry(service: Service, game_id: str, token: str, frame: dict[str, Any]) -> Any:
    client: WsClient = await open_ws(service)
    try:
        assert (await hello(client, game_id, token))["type"] == "welcome"
        await client.send(frame)
        while True:
            answer = await client.recv()
            if answer["type"] in ("ack", "error"):
                return answer
    finally:
        await client.close()


async def test_a_command_whose_ack_was_lost_is_answered_on_retry_and_logged_once(
    start_service: ServiceFactory,
) -> None:
    cid = "k2f9-retry_1"
    async with start_service(POLICY) as service:
        game_id, tokens = await table(service, 4, FOUR_DECK, SLOW)
        seat, token, vote = await seat_with_a_legal_ability(service, game_id, tokens)
        key = f"{seat}:{cid}"

        dropped = await open_ws(service)
        assert (await hello(dropped, game_id, token))["type"] == "welcome"
        await dropped.send(message(vote, cid, 1))
        dropped.ws.transport.abort()  # the connection is lost before any answer is read
        await until_logged(service, game_id, key)  # … but the command was committed
        events_before = len(await read_events(service.hub.sessions, game_id))

        ack = await retry(service, game_id, token, message(vote, cid, 2))
        assert ack["type"] == "ack", ack
        assert (ack["id"], ack["cid"], ack["repeated"]) == (2, cid, True)
        assert len(await logged_with(service, game_id, key)) == 1
        assert len(await read_events(service.hub.sessions, game_id)) == events_before
        first_seq = ack["seq"]

        # The same cid for another command is refused, not taken for a retry …
        interject = {"type": "Interject"}
        refused = await retry(service, game_id, token, message(interject, cid, 3))
        assert (refused["type"], refused["code"], refused["cid"]) == ("error", "cid_reused", cid)
        # … but seats choose cids independently: another seat's cid is its own command.
        other_token = tokens[seat % len(tokens)]
        own = await retry(service, game_id, other_token, message(interject, cid, 3))
        assert own["type"] == "error" and own["code"] not in ("cid_reused",), own
        assert own["code"] == "wrong_phase"  # judged by the rules: no interjecting at night

    # A restart rebuilds the game from its log, client ids included.
    async with start_service(POLICY) as restarted:
        again = await retry(restarted, game_id, token, message(vote, cid, 4))
        assert again["type"] == "ack", again
        assert (again["seq"], again["repeated"]) == (first_seq, True)
        assert len(await logged_with(restarted, game_id, key)) == 1
        assert len(await read_events(restarted.hub.sessions, game_id)) == events_before

        fresh = await retry(restarted, game_id, token, message(vote, "another-cid", 5))
        # A new cid is a new command: applied (or refused by the rules), never an old answer.
        assert fresh.get("repeated") is not True


async def test_cids_are_bounded_and_printable(start_service: ServiceFactory) -> None:
    async with start_service(POLICY) as service:
        game_id, tokens = await table(service, 4, FOUR_DECK, SLOW)
        client = await open_ws(service)
        try:
            assert (await hello(client, game_id, tokens[0]))["type"] == "welcome"
            for bad in ("x" * 41, "", "a b", "ä", 17):
                frame = {"type": "command", "id": 9, "cid": bad, "command": {"type": "Interject"}}
                await client.send(frame)
                answer = await client.expect("error")
                assert answer["code"] == "invalid_message", (bad, answer)
            assert len(await read_commands(service.hub.sessions, game_id)) == 1  # the deal only
        finally:
            await client.close()
