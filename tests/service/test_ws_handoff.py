"""A game's WebSocket reaches the worker that owns the game (issue 16, "Every core";
`vollmond/service/shards/socket_handoff.py`).

The real `vollmond serve --workers 2`, each worker also on a port of its own: every player of a
game opens its socket on the worker that does *not* own the game, with the page's hint
(`/ws?game=<id>`). The connection is passed to the owner before the handshake is answered, so
the owner serves all of them (its `/metrics` counts the sockets, the other worker's none), and
the game is played over them as over any socket. A socket without the hint stays where it
landed, as before. Below, the parts on their own: the hint in a request target, and a
connection passed between two handoffs in this process, on the same descriptor.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from vollmond.service.shards.ownership import HashOwnership, worker_names
from vollmond.service.shards.socket_handoff import Passed, SocketHandoff, game_hint

from .process import Browser, Player, WorkerPort, workers_server

WORKERS = 2
NAMES = tuple(worker_names(WORKERS))


def _options(size: int) -> dict[str, Any]:
    return {"size": size, "world": "werwolf", "deck": "auto"}


@pytest.fixture
async def workers(tmp_path: Path) -> AsyncIterator[list[WorkerPort]]:
    server, ports = workers_server(tmp_path / "data", WORKERS)
    try:
        await server.start(ready=ports)
        yield ports
    finally:
        server.kill(signal.SIGTERM)


async def _per_worker(worker: WorkerPort, metric: str) -> dict[str, float]:
    """`metric` of every worker, as `/metrics` of `worker` says for all of them."""
    async with httpx.AsyncClient(timeout=10) as http:
        text = (await http.get(worker.base_url + "/metrics")).text
    out = {}
    for name in NAMES:
        prefix = f'{metric}{{worker="{name}"}} '
        (line,) = [line for line in text.splitlines() if line.startswith(prefix)]
        out[name] = float(line.removeprefix(prefix))
    return out


async def test_sockets_with_the_hint_are_served_by_the_owner(workers: list[WorkerPort]) -> None:
    browsers = [Browser(workers[i % WORKERS]) for i in range(4)]
    for i, browser in enumerate(browsers):
        await browser.signup(f"handoff{i + 1}")
    game, token = await browsers[0].found(**_options(4))
    tokens = [token] + [await b.join(game) for b in browsers[1:]]  # the last join starts it
    owner = NAMES.index(HashOwnership(NAMES).owner_of(game))
    other = workers[1 - owner]
    players = [Player(game, t) for t in tokens]
    plain = Player(game, tokens[0])  # the same seat again, without the hint
    try:
        for player in players:
            welcome = await player.connect(other, route=True)
            assert welcome["view"]["me"]["seat"] == player.seat
        await plain.connect(other)
        counts = await _per_worker(other, "vollmond_players_connected")
        assert counts[NAMES[owner]] == 4 and counts[other_name(owner)] == 1, counts
        handed = {
            figure: await _per_worker(other, f"vollmond_ws_handoff_{figure}_total")
            for figure in ("passed", "adopted", "kept")
        }
        assert handed["passed"] == {NAMES[owner]: 0, other_name(owner): 4}, handed
        assert handed["adopted"] == {NAMES[owner]: 4, other_name(owner): 0}, handed
        assert handed["kept"] == {NAMES[owner]: 0, other_name(owner): 0}, handed
        # The game is played over the passed sockets: a legal command is acknowledged.
        actor = next(p for p in players if p.view["me"]["legal"])
        command = actor.view["me"]["legal"][0]
        await actor.send({"type": "command", "id": 1, "command": command})
        ack = await actor.expect("ack")
        assert ack["id"] == 1 and ack["seq"] > 0
    finally:
        for player in [*players, plain]:
            await player.close()
        for browser in browsers:
            await browser.close()


def other_name(owner: int) -> str:
    return NAMES[1 - owner]


# -- the parts ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("target", "game"),
    [
        (b"/ws?game=3f0c9a1b", "3f0c9a1b"),
        (b"/ws?lang=de&game=ab-CD_9&x=1", "ab-CD_9"),
        (b"/ws", None),
        (b"/ws?game=", None),
        (b"/ws?game=a%20b", None),
        (b"/ws?agame=abc", None),
        (b"/ws?game=" + b"a" * 65, None),
    ],
)
def test_the_hint_is_a_game_id_in_the_query_or_nothing(target: bytes, game: str | None) -> None:
    assert game_hint(target) == game


@given(st.binary(max_size=200))
def test_no_request_target_breaks_the_hint(target: bytes) -> None:
    hint = game_hint(target)
    assert hint is None or (0 < len(hint) <= 64 and hint.isascii())


class _Echo(asyncio.Protocol):
    """Answers what it is given first (the request passed along) on the adopted connection."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.transport.write(b"owner heard: " + data)
        self.transport.close()


async def test_a_connection_passed_on_is_answered_by_the_owner_alone() -> None:
    """The accepting side forgets the connection after passing it; the client reads the
    owner's answer on the same TCP connection and nothing from the acceptor."""
    directory = tempfile.mkdtemp(prefix="vollmond-handoff-")
    ownership = HashOwnership(NAMES)
    game = next(f"g{i}" for i in range(100) if ownership.owner_of(f"g{i}") == "w1")
    acceptor = SocketHandoff("w0", ownership, directory)
    owner = SocketHandoff("w1", ownership, directory)
    owner.listen(_Echo)
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        accepted, _ = await asyncio.get_running_loop().sock_accept(listener)
        target = f"/ws?game={game}".encode()
        assert acceptor.owner_elsewhere(target) == "w1"
        assert owner.owner_elsewhere(target) is None
        request = b"GET " + target + b" HTTP/1.1\r\n\r\n"
        assert acceptor.pass_to("w1", request, accepted.fileno()) is Passed.SENT
        accepted.close()  # the acceptor's descriptor goes; the connection stays
        assert await asyncio.wait_for(reader.read(), 10) == b"owner heard: " + request
        assert (acceptor.passed, owner.adopted) == (1, 1)
        writer.close()
        # Nobody listening for w0: the connection is not passed, the caller serves it.
        assert owner.pass_to("w0", request, listener.fileno()) is Passed.REFUSED
    finally:
        listener.close()
        acceptor.close()
        owner.close()


async def test_a_malformed_datagram_is_dropped_and_the_inbox_keeps_working() -> None:
    directory = tempfile.mkdtemp(prefix="vollmond-handoff-")
    owner = SocketHandoff("w1", HashOwnership(NAMES), directory)
    owner.listen(_Echo)
    try:
        stray = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        path = f"{directory}/handoff-w1.sock"
        stray.sendto(b"GET / HTTP/1.1\r\n\r\n", path)  # no descriptor
        stray.sendmsg([b""], [], 0, path)  # nothing at all
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # a descriptor, not a stream
        owner_side = SocketHandoff("w0", HashOwnership(NAMES), directory)
        assert owner_side.pass_to("w1", b"GET / HTTP/1.1\r\n\r\n", udp.fileno()) is Passed.SENT
        listener = socket.create_server(("127.0.0.1", 0))
        reader, writer = await asyncio.open_connection(*listener.getsockname())
        accepted, _ = await asyncio.get_running_loop().sock_accept(listener)
        assert owner_side.pass_to("w1", b"x", accepted.fileno()) is Passed.SENT
        accepted.close()
        assert await asyncio.wait_for(reader.read(), 10) == b"owner heard: x"
        assert owner.adopted == 1
        writer.close()
        for s in (stray, udp, listener):
            s.close()
        owner_side.close()
    finally:
        owner.close()


async def test_a_full_inbox_is_waited_for_and_a_dead_one_given_up() -> None:
    """The owner's inbox holds ten datagrams (`net.unix.max_dgram_qlen`): an eleventh waits
    until the owner has read, instead of being served through a mirror; an inbox that is never
    read is given up after `BUSY_TRIES`, and the caller serves the connection."""
    directory = tempfile.mkdtemp(prefix="vollmond-handoff-")
    acceptor = SocketHandoff("w0", HashOwnership(NAMES), directory)
    inbox = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)  # the owner, not reading yet
    inbox.bind(f"{directory}/handoff-w1.sock")
    inbox.setblocking(False)
    listener = socket.create_server(("127.0.0.1", 0))
    try:
        filled = 0
        while acceptor.pass_to("w1", b"filler", listener.fileno()) is Passed.SENT:
            filled += 1
        assert filled >= 1  # then BUSY
        results: list[bool] = []
        acceptor.pass_soon("w1", b"the one", listener.fileno(), results.append)
        await asyncio.sleep(0.05)
        assert results == []  # still waiting
        for _ in range(filled):  # the owner reads its queue
            _, fds, _, _ = socket.recv_fds(inbox, 100, 1)
            for fd in fds:
                os.close(fd)
        async with asyncio.timeout(5):
            while not results:
                await asyncio.sleep(0.01)
        assert results == [True] and acceptor.kept == 0
        message, fds, _, _ = socket.recv_fds(inbox, 100, 1)
        assert message == b"the one" and len(fds) == 1
        os.close(fds[0])
        while acceptor.pass_to("w1", b"filler", listener.fileno()) is Passed.SENT:
            pass
        given_up: list[bool] = []
        acceptor.pass_soon("w1", b"never read", listener.fileno(), given_up.append)
        async with asyncio.timeout(10):
            while not given_up:
                await asyncio.sleep(0.02)
        assert given_up == [False] and acceptor.kept == 1  # `/metrics` shows it
    finally:
        inbox.close()
        listener.close()
        acceptor.close()
