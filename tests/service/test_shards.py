"""The pieces of the games' sharding over processes (docs/scaling.md), in one process.

Both transports — the local bus and NATS (the real server at NATS_URL; a test fails if it is
down) — keep the promises of the transport interface (order, wildcards, request and reply, no
responders, a subscription in force when `subscribe` returns), and every test that puts hubs
on a bus runs on each of them (the `bus` fixture); ownership is the same
in every process; recording notices and the spectators' room reach every worker; and two
sharded hubs on one bus and one store behave as the owner and the follower of a game: the
follower's joins and commands go to the owner, its mirror sends each seat the same events as
the owner's actor — once each, also when an entry arrives twice or after a gap (read from the
log then).
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from vollmond.engine.core import Event, Viewer
from vollmond.engine.kit.commands import Say
from vollmond.engine.ruleset import get_ruleset
from vollmond.service.actor import Accepted, GameActor, SpectatorLine
from vollmond.service.config import Settings
from vollmond.service.notices import NoticeStage, RecordingNotice
from vollmond.service.shards.localbus import Broker, LocalTransport
from vollmond.service.shards.mirror import MirrorActor
from vollmond.service.shards.natsbus import NatsTransport
from vollmond.service.shards.ownership import HashOwnership, worker_names
from vollmond.service.shards.sharded_hub import ShardedHub
from vollmond.service.shards.transport import (
    Handler,
    Message,
    NoRespondersError,
    Transport,
    game_log_subject,
)
from vollmond.store import Sessions, open_store
from vollmond.workers import WorkersError, serve_workers, worker_settings

from .process import NATS_URL

STANDARD = get_ruleset("standard")


Connect = Callable[[], Awaitable[Transport]]
"""A new process's connection to the bus under test."""


@contextlib.asynccontextmanager
async def open_bus(kind: str, tmp_path: Path) -> AsyncIterator[Connect]:
    """Connections to a bus of `kind` ("local": a broker in tmp_path; "nats": the server)."""
    if kind == "nats":
        # A namespace of its own: tests running at once on one server never hear each other.
        namespace = f"test{uuid.uuid4().hex}"
        yield lambda: NatsTransport.connect(NATS_URL, namespace=namespace)
        return
    broker = Broker(str(tmp_path / "bus.sock"))
    await broker.start()
    try:
        yield lambda: LocalTransport.connect(broker.path)
    finally:
        await broker.close()


@pytest.fixture(params=["local", "nats"])
async def bus(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Connect]:
    async with open_bus(request.param, tmp_path) as connect:
        yield connect


class Inbox:
    """A subscriber's messages, and a way to wait for the n-th one."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self._waiting: list[tuple[int, Any]] = []

    def __call__(self, message: Message) -> None:
        self.messages.append(message)

    async def until(self, count: int, transport: Transport) -> list[Message]:
        while len(self.messages) < count:
            await transport.flush()  # a round trip to the bus delivers what it routed
        return self.messages


async def test_bus_delivers_in_order_with_wildcards(bus: Connect) -> None:
    sender, receiver = await bus(), await bus()
    try:
        exact, below = Inbox(), Inbox()
        await receiver.subscribe("game.a.log", exact)
        await receiver.subscribe("game.>", below)
        for n in range(200):  # published right after subscribe returned: none may be lost
            sender.publish("game.a.log", str(n).encode())
        sender.publish("game.b.log", b"b")
        sender.publish("node.w0.calls", b"not for either")
        await exact.until(200, receiver)
        await below.until(201, receiver)
        assert [m.data for m in exact.messages] == [str(n).encode() for n in range(200)]
        assert [m.data for m in below.messages] == [m.data for m in exact.messages] + [b"b"]
    finally:
        await sender.close()
        await receiver.close()


async def test_bus_request_reply_and_no_responders(bus: Connect) -> None:
    asker, owner = await bus(), await bus()
    try:

        def echo(message: Message) -> None:
            owner.reply(message, message.data.upper())

        subscription = await owner.subscribe("node.w0.calls", echo)
        assert await asker.request("node.w0.calls", b"join", 5.0) == b"JOIN"
        with pytest.raises(NoRespondersError):
            await asker.request("node.w1.calls", b"join", 5.0)
        await subscription.unsubscribe()
        with pytest.raises(NoRespondersError):
            await asker.request("node.w0.calls", b"join", 5.0)
    finally:
        await asker.close()
        await owner.close()


async def test_a_subscription_is_in_force_for_other_connections_when_subscribe_returns(
    bus: Connect,
) -> None:
    """Again and again, a request from another connection right after `subscribe` finds its
    responder, and right after `unsubscribe` finds none. nats-py's own flush let the first
    miss about one time in 250 (its PING overtakes a SUB still in the client's buffer)."""
    asker, owner = await bus(), await bus()
    try:
        for n in range(1000):
            subscription = await owner.subscribe(
                f"node.w{n}.calls", lambda m: owner.reply(m, b"ok")
            )
            assert await asker.request(f"node.w{n}.calls", b"join", 5.0) == b"ok"
            await subscription.unsubscribe()
            with pytest.raises(NoRespondersError):
                await asker.request(f"node.w{n}.calls", b"join", 5.0)
    finally:
        await asker.close()
        await owner.close()


async def test_bus_request_arrives_after_what_its_sender_published_before(bus: Connect) -> None:
    asker, owner = await bus(), await bus()
    try:
        seen: list[bytes] = []

        def note_or_answer(message: Message) -> None:
            if message.reply is None:
                seen.append(message.data)
            else:
                owner.reply(message, str(len(seen)).encode())

        await owner.subscribe("node.w0.calls", note_or_answer)
        for n in range(50):  # notices, then a request: the owner has them all when it answers
            asker.publish("node.w0.calls", str(n).encode())
        assert await asker.request("node.w0.calls", b"how many", 5.0) == b"50"
    finally:
        await asker.close()
        await owner.close()


async def test_nats_namespaces_do_not_hear_each_other() -> None:
    one = await NatsTransport.connect(NATS_URL, namespace=f"test{uuid.uuid4().hex}")
    other = await NatsTransport.connect(NATS_URL, namespace=f"test{uuid.uuid4().hex}")
    try:
        heard_one, heard_other = Inbox(), Inbox()
        await one.subscribe("game.>", heard_one)
        await other.subscribe("game.>", heard_other)
        other.publish("game.a.log", b"other")
        one.publish("game.a.log", b"one")
        await heard_one.until(1, one)
        await other.flush()  # its own message came back to it by now
        await heard_other.until(1, other)
        assert [(m.subject, m.data) for m in heard_one.messages] == [("game.a.log", b"one")]
        assert [m.data for m in heard_other.messages] == [b"other"]
        await other.subscribe("node.w0.calls", lambda m: other.reply(m, b"other"))
        with pytest.raises(NoRespondersError):  # the other namespace's node is not asked
            await one.request("node.w0.calls", b"?", 5.0)
    finally:
        await one.close()
        await other.close()


def test_ownership_is_stable_spread_and_moves_little() -> None:
    games = [f"{n:032x}" for n in range(2000)]
    two = HashOwnership(worker_names(2))
    owners = [two.owner_of(g) for g in games]
    assert owners == [HashOwnership(["w0", "w1"]).owner_of(g) for g in games]
    assert 800 < owners.count("w0") < 1200
    three = HashOwnership(worker_names(3))
    moved = [g for g, o in zip(games, owners, strict=True) if three.owner_of(g) != o]
    assert all(three.owner_of(g) == "w2" for g in moved)  # only to the new worker


class OneOwner:
    def __init__(self, node: str) -> None:
        self.node = node

    def owner_of(self, game_id: str) -> str:
        return self.node


class Seat:
    """A subscriber that keeps what it was delivered."""

    def __init__(self, viewer: Viewer) -> None:
        self.viewer = viewer
        self.got: list[tuple[int, str, dict[str, Any]]] = []

    def deliver(self, seq: int, event: Event) -> None:
        self.got.append((seq, event.code, dict(event.params)))

    def state_changed(
        self, state: Any, phase_changed: bool, *, view_unchanged: bool = False
    ) -> None:
        pass


class Spectator(Seat):
    """A subscriber that reads the spectators' room too."""

    def __init__(self) -> None:
        super().__init__(Viewer.spectator())
        self.lines: list[tuple[str, str]] = []

    def spectator_line(self, line: SpectatorLine) -> None:
        self.lines.append((line.name, line.text))


class NoStream:
    """A transport that never delivers: the mirror sees only what the test hands it."""

    async def subscribe(self, subject: str, handler: Handler) -> Any:
        class Nothing:
            async def unsubscribe(self) -> None:
                pass

        return Nothing()


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Sessions]:
    async with open_store(f"sqlite+aiosqlite:///{tmp_path / 'db'}") as sessions:
        yield sessions


async def test_follower_joins_and_plays_through_the_owner(store: Sessions, bus: Connect) -> None:
    owner_bus, follower_bus = await bus(), await bus()
    owner = ShardedHub(store, node="w0", ownership=OneOwner("w0"), transport=owner_bus)
    follower = ShardedHub(store, node="w1", ownership=OneOwner("w0"), transport=follower_bus)
    await owner.serve_calls()
    await follower.serve_calls()
    try:
        options = STANDARD.decode_options({"players": 4, "world": "werwolf"})
        founded = await follower.found(options, private=False, host_account_id=None, host_name="A")
        game = founded.game.id
        for name in "BCD":  # the last join starts the game, at the owner
            await follower.join(game, account_id=None, name=name)
        assert game in owner.actors and game not in follower.actors
        mirror = await follower.readable(game)
        assert isinstance(mirror, MirrorActor)
        actor = owner.actors[game]
        evil = _evil_seat(actor)

        here = {s: Seat(Viewer.player(s)) for s in range(1, 5)}
        there = {s: Seat(Viewer.player(s)) for s in range(1, 5)}
        for s in range(1, 5):
            actor.subscribe(here[s])
            mirror.subscribe(there[s])
        outcome = await mirror.submit(Say(evil, "eins"), cid="x")
        # The owner's presence counts the mirror's sockets (told before the command was sent).
        mirror_only = [s for s in range(1, 5) if s != evil]
        for s in mirror_only:
            actor.unsubscribe(here[s])
        assert all(owner.presence.connected(game, s) for s in range(1, 5))
        assert isinstance(outcome, Accepted) and not outcome.repeated
        # Answered after the mirror sent the command's events to its own subscribers.
        assert there[evil].got[-1][0] == outcome.first_seq
        repeated = await mirror.submit(Say(evil, "eins"), cid="x")
        assert isinstance(repeated, Accepted) and repeated.repeated
        for s in range(1, 5):
            assert there[s].got == here[s].got, f"seat {s}"
        assert [seq for seq, _, _ in there[evil].got] == [outcome.first_seq]
        actor.unsubscribe(here[evil])
        for s in range(1, 5):
            mirror.unsubscribe(there[s])
        await mirror.submit(Say(evil, "zwei"))  # a round trip after the notices
        assert not any(owner.presence.connected(game, s) for s in range(1, 5))

        # The spectators' room is one room on both workers, in the owner's order.
        watching_here, watching_there = Spectator(), Spectator()
        actor.subscribe(watching_here)
        mirror.subscribe(watching_there)
        mirror.say_as_spectator("Eve", "von w1")
        actor.say_as_spectator("Max", "von w0")
        await mirror.submit(Say(evil, "drei"))  # a round trip both ways after the lines
        await mirror.submit(Say(evil, "vier"))  # and once more: the owner's echo is back
        assert sorted(watching_here.lines) == [("Eve", "von w1"), ("Max", "von w0")]
        assert watching_there.lines == watching_here.lines
        assert list(mirror.spectator_lines) == list(actor.spectator_lines)
    finally:
        await follower.close()
        await owner.close()


async def test_mirror_fills_a_gap_from_the_log_and_drops_repeats(
    store: Sessions, bus: Connect
) -> None:
    owner_bus, watcher = await bus(), await bus()
    owner = ShardedHub(store, node="w0", ownership=OneOwner("w0"), transport=owner_bus)
    try:
        options = STANDARD.decode_options({"players": 4, "world": "werwolf"})
        game = (await owner.found(options, private=False, host_account_id=None)).game.id
        for name in "ABCD":
            await owner.join(game, account_id=None, name=name)
        actor = owner.actors[game]
        evil = _evil_seat(actor)
        published = Inbox()
        await watcher.subscribe(game_log_subject(game), published)

        mirror = _mirror_of(actor, store)
        assert await mirror.follow(NoStream())  # type: ignore[arg-type]
        seen = Seat(Viewer.player(evil))
        mirror.subscribe(seen)
        here = Seat(Viewer.player(evil))
        actor.subscribe(here)
        for text in ("eins", "zwei", "drei"):
            await owner.submit(game, Say(evil, text))
        entries = await published.until(3, watcher)

        mirror._on_entry(entries[2])  # after a gap: the first two are read from the log
        mirror._on_entry(entries[1])  # late repeats change nothing
        mirror._on_entry(entries[2])
        while mirror.commands_applied < actor.commands_applied or not mirror._stream.empty():
            await watcher.flush()
        assert [json.loads(m.data)["seq"] for m in entries] == [2, 3, 4]  # 1 is the deal
        assert seen.got == here.got and len(here.got) == 3
        assert mirror.view_for(Viewer.player(evil)) == actor.view_for(Viewer.player(evil))
        await mirror.stop()
    finally:
        await owner.close()
        await watcher.close()


def _evil_seat(actor: GameActor) -> int:
    room = actor.view_for(Viewer.spectator())  # the public view names no room
    assert "night_room" not in room or not room["night_room"]
    for seat in range(1, 5):
        view = actor.view_for(Viewer.player(seat))
        if view.get("night_room"):
            return seat
    raise AssertionError("no night room")


def _mirror_of(actor: GameActor, store: Sessions) -> MirrorActor:
    async def nobody(*_: Any) -> Any:
        raise AssertionError("not asked")

    return MirrorActor(
        actor.game_id,
        actor.ruleset,
        actor.options,
        actor.seed,
        store,
        submit_to_owner=nobody,
        on_idle=lambda _: None,
    )


def test_workers_refuse_a_single_worker_and_sip_ports_beyond_the_range(tmp_path: Path) -> None:
    with pytest.raises(WorkersError, match="two or more"):
        serve_workers(Settings(data_dir=tmp_path / "data", sip_port=0), 1)
    with pytest.raises(WorkersError, match="65535"):
        serve_workers(Settings(data_dir=tmp_path / "data", sip_port=65535), 2)
    assert not (tmp_path / "data").exists()  # refused before anything was made
    settings = Settings(data_dir=tmp_path / "data", sip_port=5070)
    assert [worker_settings(settings, i).sip_port for i in range(3)] == [5070, 5071, 5072]
    web_only = Settings(data_dir=tmp_path / "data", sip_port=0)
    assert worker_settings(web_only, 1).sip_port == 0


async def test_a_recording_notice_reaches_every_worker(store: Sessions, bus: Connect) -> None:
    buses = [await bus() for _ in range(2)]
    owner, follower = (
        ShardedHub(store, node=f"w{i}", ownership=OneOwner("w0"), transport=buses[i])
        for i in range(2)
    )
    await owner.serve_calls()
    await follower.serve_calls()
    try:
        told: list[RecordingNotice | None] = []
        follower.notices.watch("g1", told.append)
        notice = RecordingNotice(
            "g1", 7, NoticeStage.WARNING, frozenset({2, 3}), round=1, since=1.5, max_s=300
        )
        owner.notices.publish("g1", notice)
        while not told:
            await buses[1].flush()
        assert told == [notice] and follower.notices.current("g1") == notice
        owner.notices.publish("g1", None)
        while len(told) < 2:
            await buses[1].flush()
        assert told[1] is None and follower.notices.current("g1") is None
        assert owner.notices.current("g1") is None  # its own notice came back: ignored
    finally:
        await follower.close()
        await owner.close()
