"""Operators see nodes, games per node and lease state (issue 15): in the node's `/metrics`
and in the moderators' console (`/api/mod/nodes`, admins only).

A real service (uvicorn, the web app) whose hub is node a of two on the local bus with the
store's leases, as `vollmond serve --ownership leases` builds it; the lease loops are stepped
by hand (a long ttl keeps their own rounds out of the test). Other nodes' leases are made in
the store directly: node b holds one, node c stopped renewing one, which a takes over.
"""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import httpx

from vollmond.service.config import Settings
from vollmond.service.shards.localbus import Broker
from vollmond.service.shards.sharded_hub import ShardedHub
from vollmond.store import Role, Sessions, create_game, set_role
from vollmond.store.leases import acquire_lease
from vollmond.store.types import utcnow

from .support import ApiClient, Service, running_service
from .test_lease_ownership import lease_node_a
from .test_shards import STANDARD

TTL_S = 60.0


def sample(text: str, name: str) -> float:
    match = re.search(rf"^{re.escape(name)} (\S+)$", text, re.MULTILINE)
    assert match, f"{name} not in /metrics:\n{text}"
    return float(match.group(1))


async def _metrics(service: Service) -> str:
    async with httpx.AsyncClient() as http:
        response = await http.get(f"http://127.0.0.1:{service.port}/metrics")
    assert response.status_code == 200
    return response.text


async def _client(service: Service, name: str, role: Role) -> ApiClient:
    client = ApiClient(service)
    await client.signup(name)
    assert client.account_id is not None
    await set_role(service.hub.sessions, client.account_id, role)
    return client


async def _game(store: Sessions) -> str:
    return (await create_game(store, world="werwolf", options={"size": 4}, seed=1)).id


async def test_a_nodes_metrics_and_the_console_show_its_games_and_the_leases(
    tmp_path: Path,
) -> None:
    broker = Broker(str(tmp_path / "bus.sock"))
    await broker.start()
    make = lease_node_a(broker, TTL_S)
    clients: list[ApiClient] = []
    try:
        async with running_service(
            "sqlite", Settings(data_dir=tmp_path / "data"), make_hub=make
        ) as service:
            hub = service.hub
            assert isinstance(hub, ShardedHub) and hub.leases is not None
            before = await _metrics(service)
            assert sample(before, 'vollmond_node_info{node="a",ownership="leases"}') == 1
            assert sample(before, "vollmond_games_owned") == 0
            assert sample(before, "vollmond_leases_held") == 0
            assert sample(before, "vollmond_leases_acquired_total") == 0

            # A game founded and started here: a acquires its lease and runs it.
            options = STANDARD.decode_options({"players": 4, "world": "werwolf"})
            founded = await hub.found(options, private=False, host_account_id=None, host_name="A")
            game = founded.game.id
            for name in "BCD":
                await hub.join(game, account_id=None, name=name)
            # Node b holds a game; node c stopped renewing one a minute ago.
            now = utcnow()
            theirs, dead = await _game(hub.sessions), await _game(hub.sessions)
            await acquire_lease(hub.sessions, theirs, "b", now=now, ttl=timedelta(seconds=TTL_S))
            await acquire_lease(
                hub.sessions, dead, "c", now=now - timedelta(seconds=60), ttl=timedelta(seconds=6)
            )
            await hub.leases.keep()  # one renewal round
            await hub.leases.take_over()  # takes c's expired lease

            _assert_node_metrics(await _metrics(service))
            clients += await _assert_console(service, game, theirs, dead)
    finally:
        for client in clients:
            await client.close()
        await broker.close()


def _assert_node_metrics(text: str) -> None:
    """Node a after one acquisition, one renewal round and one takeover."""
    assert sample(text, "vollmond_games_owned") == 1
    assert sample(text, "vollmond_games_mirrored") == 0
    assert sample(text, "vollmond_leases_held") == 2
    assert sample(text, "vollmond_leases_acquired_total") == 1
    assert sample(text, "vollmond_lease_renewals_total") == 1
    assert sample(text, "vollmond_lease_renewal_failures_total") == 0
    assert sample(text, "vollmond_lease_takeovers_total") == 1
    assert sample(text, "vollmond_leases_lost_total") == 0
    assert sample(text, "vollmond_lease_fenced_total") == 0
    assert 0 < sample(text, "vollmond_lease_next_expiry_seconds") <= TTL_S


async def _assert_console(service: Service, game: str, theirs: str, dead: str) -> list[ApiClient]:
    """`/api/mod/nodes`: admins only; the node answering, each node's leases, the leases."""
    admin = await _client(service, "Ada", Role.ADMIN)
    moderator = await _client(service, "Mo", Role.MODERATOR)
    refused = await moderator.get("/api/mod/nodes")
    assert refused.status_code == 403 and refused.json()["error"] == "not_permitted"
    answer = await admin.get("/api/mod/nodes")
    assert answer.status_code == 200
    body = answer.json()
    node = body["node"]
    assert (node["node"], node["ownership"]) == ("a", "leases")
    assert (node["games_owned"], node["leases_held"]) == (1, 2)
    assert node["counters"]["taken_over"] == 1 and node["counters"]["acquired"] == 1
    nodes = {n["node"]: n for n in body["nodes"]}
    assert sorted(nodes) == ["a", "b"]  # c holds nothing any more
    assert (nodes["a"]["live"], nodes["a"]["expired"], nodes["a"]["this"]) == (2, 0, True)
    assert (nodes["b"]["live"], nodes["b"]["this"]) == (1, False)
    leases = {lease["game"]: lease for lease in body["leases"]}
    assert (leases[dead]["node"], leases[dead]["epoch"]) == ("a", 2)
    assert (leases[game]["node"], leases[game]["epoch"]) == ("a", 1)
    assert leases[theirs]["node"] == "b" and leases[theirs]["live"]
    assert 0 < leases[theirs]["expires_in_s"] <= TTL_S
    return [admin, moderator]


async def test_one_process_alone_shows_no_node(tmp_path: Path) -> None:
    async with running_service("sqlite", Settings(data_dir=tmp_path / "data")) as service:
        assert "vollmond_node_info" not in await _metrics(service)
        admin = await _client(service, "Ada", Role.ADMIN)
        try:
            body = (await admin.get("/api/mod/nodes")).json()
        finally:
            await admin.close()
        assert body["node"] is None and body["nodes"] == [] and body["leases"] == []
