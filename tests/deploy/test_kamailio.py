"""Kamailio in front of two Vollmond nodes (issue 15): the shipped config, real processes.

Two single-node `vollmond serve` (SQLite each, their own SIP ports, trusting only the proxy's
address 127.0.0.2) behind Kamailio with the dispatcher module. Shown here: new calls are spread
over both nodes; the in-dialog requests (ACK, INFO, BYE) follow the Record-Route through the
proxy to the node that answered; a real softphone's call through the proxy gets the announcer's
audio directly from the node (the SDP is not rewritten); and once a node is SIGKILLed, the
OPTIONS pings take it out and every new call goes to the node that is left.
"""

from __future__ import annotations

import asyncio
import re
import signal
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path

import httpx
import numpy as np
import pytest

from tests.deploy.kamailio import (
    PROXY_HOST,
    TRUSTING_THE_PROXY,
    Kamailio,
    ProxiedDialog,
    kamailio,
)
from tests.needs import need
from tests.phone.e2e.support import Phone, rms, wait_until
from tests.phone.helpers import UdpPeer
from tests.phone.test_sipp import free_udp_port
from tests.service.process import ServerProcess, serving

pytestmark = pytest.mark.slow


def node(root: Path, name: str) -> ServerProcess:
    """A node that takes calls only as the proxy hands them on (`[sip] trusted_proxies`)."""
    home = root / name
    home.mkdir()
    config = home / "vollmond.toml"
    config.write_text(TRUSTING_THE_PROXY)
    return ServerProcess(data_dir=home / "data", sip_port=free_udp_port(), config=config)


async def calls_active(server: ServerProcess) -> int:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=5) as http:
        text = (await http.get("/metrics")).text
    found = re.search(r"^vollmond_sip_calls_active (\S+)$", text, re.M)
    assert found is not None, text
    return int(float(found.group(1)))


class Cluster:
    def __init__(self, nodes: list[ServerProcess], proxy: Kamailio) -> None:
        self.nodes = nodes
        self.proxy = proxy

    def by_port(self, port: int) -> ServerProcess:
        return next(n for n in self.nodes if n.sip_port == port)


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    need("kamailio", "kamcmd", "baresip")
    nodes = [node(tmp_path, "node-a"), node(tmp_path, "node-b")]
    async with AsyncExitStack() as stack:
        for server in nodes:
            await stack.enter_async_context(serving(server))
        proxy = await stack.enter_async_context(
            kamailio(tmp_path / "kamailio", [n.sip_port for n in nodes])
        )
        try:
            await proxy.wait_flags({n.sip_port: "AP" for n in nodes})
            yield Cluster(nodes, proxy)
        except BaseException:
            print(proxy.log_text())  # pytest shows it with the failure
            raise


async def place_call(cluster: Cluster, peer: UdpPeer) -> ProxiedDialog:
    """One call through the proxy: answered, a key sent as INFO, hung up — every request of
    the dialog acknowledged by the node that answered the INVITE."""
    dialog = ProxiedDialog(peer, cluster.proxy)
    answer = await dialog.invite()
    assert answer.status == 200, answer
    # Kamailio put itself on the route; our ACK/INFO/BYE go to it and it passes them on.
    assert dialog.route and f"{PROXY_HOST}:{cluster.proxy.port}" in dialog.route[0]
    # The SDP answer is the node's own: media goes caller <-> node, not through the proxy.
    assert b"c=IN IP4 127.0.0.1" in answer.body and PROXY_HOST.encode() not in answer.body
    assert (await dialog.info("5")).status == 200
    answered_by = cluster.by_port(dialog.node_port)
    assert await calls_active(answered_by) == 1  # ACKed: the call is up on that node
    assert (await dialog.bye()).status == 200
    await wait_for_calls(answered_by, 0)
    return dialog


async def wait_for_calls(server: ServerProcess, count: int, timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while await calls_active(server) != count:
            await asyncio.sleep(0.05)


def heard_bytes(phone: Phone) -> int:
    return sum(f.stat().st_size for f in (phone.home / "snd").glob("*-dec.wav"))


async def test_calls_are_spread_over_the_nodes_and_move_off_a_dead_one(cluster: Cluster) -> None:
    a, b = cluster.nodes
    peer = await UdpPeer.open("127.0.0.1")
    try:
        spread = [(await place_call(cluster, peer)).node_port for _ in range(6)]
        assert spread.count(a.sip_port) == spread.count(b.sip_port) == 3, spread  # round robin

        a.kill()  # SIGKILL: no goodbye, the node just stops answering
        await cluster.proxy.wait_flags({a.sip_port: "IP", b.sip_port: "AP"})
        after = [(await place_call(cluster, peer)).node_port for _ in range(4)]
        assert after == [b.sip_port] * 4
    finally:
        peer.close()


async def test_a_softphone_talks_to_the_node_directly_through_the_proxy(
    cluster: Cluster, tmp_path: Path
) -> None:
    """baresip dials the proxy; the announcer's voice reaches it, and its hang-up ends the call
    on the node (the BYE follows the Record-Route)."""
    phone = await Phone.launch(tmp_path / "phones", "caller")
    try:
        await phone.control.send("dial", f"sip:1234@{PROXY_HOST}:{cluster.proxy.port}")
        await wait_until(lambda: "Call established" in phone.log_text(), 15)
        # The announcer speaks at once; wait until 3 s of it have arrived (8 kHz, 16 bit).
        await wait_until(lambda: heard_bytes(phone) > 3 * 16000, 20)
        actives = [await calls_active(n) for n in cluster.nodes]
        assert sorted(actives) == [0, 1]
        answering = cluster.nodes[actives.index(1)]
        await phone.hangup()
        await wait_for_calls(answering, 0)
        heard = await phone.final_recording()
    finally:
        await phone.stop()
    assert rms(heard) > 300, "the announcer was not heard"
    assert np.count_nonzero(heard) > 2 * 8000  # seconds of sound, not a click


async def test_a_call_to_a_node_that_does_not_answer_moves_on_to_the_next(
    tmp_path: Path,
) -> None:
    """Before any ping has noticed (pings an hour apart here), a node that is down costs the
    caller one timeout (NODE_TIMEOUT_MS, 5 s in these tests): the failure route marks it and
    relays the INVITE to the next node, and later calls skip it."""
    need("kamailio", "kamcmd")
    alive = node(tmp_path, "alive")
    dead_port = free_udp_port()  # nothing listens here
    async with (
        serving(alive),
        kamailio(tmp_path / "kamailio", [dead_port, alive.sip_port], ping_interval=3600) as proxy,
    ):
        cluster = Cluster([alive], proxy)
        assert (await proxy.node_flags())[dead_port][0] == "A"  # not noticed yet
        peer = await UdpPeer.open("127.0.0.1")
        try:
            answered = [(await place_call(cluster, peer)).node_port for _ in range(3)]
        finally:
            peer.close()
        assert answered == [alive.sip_port] * 3
        assert (await proxy.node_flags())[dead_port] == "IP"
        assert "did not answer" in proxy.log_text()


async def test_a_stopping_node_hangs_up_its_calls_through_the_proxy(cluster: Cluster) -> None:
    """The other direction of the dialog: a node stopped with SIGTERM says BYE to each caller,
    and the BYE travels the caller's route set back through Kamailio."""
    peer = await UdpPeer.open("127.0.0.1")
    try:
        dialog = ProxiedDialog(peer, cluster.proxy)
        assert (await dialog.invite()).status == 200
        answering = cluster.by_port(dialog.node_port)
        await wait_for_calls(answering, 1)
        answering.kill(signal.SIGTERM)
        bye, source = await dialog.answer_bye()
    finally:
        peer.close()
    assert source == (PROXY_HOST, cluster.proxy.port)
    assert bye.uri == f"sip:caller@127.0.0.1:{peer.port}"  # Kamailio took its own Route off
    assert not bye.get_all("Route")
