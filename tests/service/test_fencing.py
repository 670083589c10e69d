"""A node paused past its lease's ttl, seen from a browser socket (issue 15, the fencing).

A real service (uvicorn, the web app) whose hub is node a of two on the local bus with the
store's leases, and node b's hub in this process on the same store and bus. The four seats
play on a's sockets. a is "paused": its lease expires in the store as time would make it, and b
takes the game over and resumes it from the log — a has not noticed (its renewal has not run).
A seat's command on a's socket reaches a's actor, whose append the store refuses under a's old
epoch: the actor stops, the command is not answered there, the socket is closed with "service
restart" (1012); the client reconnects to a with its last seq and sends its command again under
the same client id, and a — now following the game through a mirror — has b answer it. The log
holds the command once, written by b.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from websockets.exceptions import ConnectionClosed

from vollmond.service.config import Settings
from vollmond.service.shards.lease_ownership import LeaseOwnership
from vollmond.service.shards.localbus import Broker, LocalTransport
from vollmond.service.shards.mirror import MirrorActor
from vollmond.service.shards.sharded_hub import ShardedHub
from vollmond.service.web.connection import GAME_MOVED
from vollmond.store import read_commands
from vollmond.store.leases import expire_leases, get_lease
from vollmond.store.types import utcnow

from .process import Player
from .support import running_service
from .test_lease_ownership import lease_node_a
from .test_shards import STANDARD

TTL_S = 60.0  # the loops stay out of the test: it moves the leases itself


async def test_a_paused_nodes_socket_is_sent_to_the_new_owner_and_its_command_lands_once(
    tmp_path: Path,
) -> None:
    broker = Broker(str(tmp_path / "bus.sock"))
    await broker.start()
    make = lease_node_a(broker, TTL_S)
    players: list[Player] = []
    b: ShardedHub | None = None
    try:
        async with running_service(
            "sqlite", Settings(data_dir=tmp_path / "data"), make_hub=make
        ) as service:
            a = service.hub
            assert isinstance(a, ShardedHub) and a.leases is not None
            b = ShardedHub(
                a.sessions,
                node="b",
                ownership=LeaseOwnership(a.sessions, "b", ttl_s=TTL_S),
                transport=await LocalTransport.connect(broker.path),
            )
            await b.serve_calls()
            options = STANDARD.decode_options({"players": 4, "world": "werwolf"})
            founded = await a.found(options, private=False, host_account_id=None, host_name="A")
            game = founded.game.id
            assert founded.token is not None
            tokens = [founded.token]
            for name in "BCD":
                tokens.append((await a.join(game, account_id=None, name=name)).token)
            players = [Player(game, token) for token in tokens]
            for player in players:
                await player.connect(service)
            members = next(p.view["night_room"]["members"] for p in players if p.view["night_room"])
            evil = next(p for p in players if p.seat in members)

            # a pauses: its lease runs out, b takes the game over and resumes it.
            await expire_leases(a.sessions, "a", [game], now=utcnow())
            assert b.leases is not None
            await b.leases.take_over()
            assert game in b.actors and game in a.actors  # a has not noticed yet
            lease = await get_lease(a.sessions, game)
            assert lease is not None and (lease.owner, lease.epoch) == ("b", 2)

            command = {
                "type": "command",
                "command": {"actor": evil.seat, "type": "Say", "text": "Bin ich noch da?"},
                "id": 7,
                "cid": "fence-1",
            }
            await evil.send(command)
            with pytest.raises(ConnectionClosed) as closed:
                await evil.expect("ack", timeout=10)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == GAME_MOVED
            assert game not in a.actors and a.leases.counters.fenced == 1

            await evil.connect(service)  # back to a, with its last seq
            await evil.send(command)  # the client's unanswered command, same cid
            ack = await evil.expect("ack", timeout=10)
            assert ack["cid"] == "fence-1" and not ack["repeated"]
            assert isinstance(a.mirrors.get(game), MirrorActor)
            said = [
                c.command["command"]
                for c in await read_commands(a.sessions, game)
                if isinstance(c.command, dict) and isinstance(c.command.get("command"), dict)
            ]
            assert [s["text"] for s in said if s.get("type") == "Say"] == ["Bin ich noch da?"]
            for player in players:  # the others' sockets on a were sent away too
                if player is not evil:
                    with pytest.raises(ConnectionClosed):
                        await player.drain(0.5)
    finally:
        for player in players:
            await player.close()
        if b is not None:
            await b.close()
        await broker.close()
