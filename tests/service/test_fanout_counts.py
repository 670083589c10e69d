"""What one command costs the browser sockets of its game, counted (issue 16, "Fan-out"):
frames per socket, views built, JSON encoded. Real `GameActor` and `Connection`s with
batch frames, as the page asks for them; a socket object keeps what would have gone out.
Counted, never timed: the time is `benchmarks.fanout`'s."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from vollmond.engine.core import Rejection, Viewer
from vollmond.engine.ruleset import get_ruleset
from vollmond.engine.standard import GameOptions
from vollmond.engine.standard.commands import Nominate
from vollmond.engine.standard.options import Durations
from vollmond.engine.standard.sim import play_game
from vollmond.engine.standard.types import Phase
from vollmond.service.actor import GameActor
from vollmond.service.metrics import Metrics
from vollmond.service.protocol import encode
from vollmond.service.web.connection import Connection
from vollmond.worlds import get_world

LONG = Durations(night_s=3600.0, day_s=3600.0, vote_s=3600.0)


class _Socket:
    def __init__(self) -> None:
        self.sent: list[str] = []

    async def send_text(self, text: str) -> None:
        self.sent.append(text)


class _NoLog:
    async def append(self, append: Any) -> None:
        return None


class Table:
    """A running game of `players` seats with a batching socket for each viewer given."""

    def __init__(self, players: int, viewers: list[Viewer]) -> None:
        self.ruleset = get_ruleset("standard")
        self.options = GameOptions(players=players, durations=LONG)
        self.actor = GameActor("g", self.ruleset, self.options, 7, sessions=None)  # type: ignore[arg-type]
        opened = self.ruleset.new_game(self.options, self.ruleset.rng_for(7, 0))
        self.actor.state, self.actor.next_event_seq = opened.state, 1 + len(opened.events)
        self.actor.writer = _NoLog()  # type: ignore[assignment]
        self.views_built: list[Viewer] = []
        built = self.actor.view_for

        def counted(viewer: Viewer) -> dict[str, Any]:
            self.views_built.append(viewer)
            return built(viewer)

        self.actor.view_for = counted  # type: ignore[method-assign]
        self.sockets: list[tuple[Connection, _Socket]] = []
        self._writers: list[asyncio.Task[None]] = []
        metrics = Metrics()
        for viewer in viewers:
            socket = _Socket()
            c = Connection(socket, hub=None, metrics=metrics)  # type: ignore[arg-type]
            c.viewer, c.seat, c._batch = viewer, viewer.seat, True
            c.world, c.actor = get_world(self.options.world), self.actor
            c._last_view = encode({"type": "view", "view": built(viewer)})
            self.actor.subscribe(c)
            self.sockets.append((c, socket))
        self.actor._launch()

    def start(self) -> None:
        """The sockets' writers: what was queued so far goes out first."""
        self._writers = [asyncio.create_task(c._write()) for c, _ in self.sockets]

    async def drained(self) -> None:
        while any(c._outbox or c._view_dirty for c, _ in self.sockets):
            await asyncio.sleep(0)

    async def play_to_day(self) -> None:
        """A bot game's commands (the same deal) until the market place is open."""
        for command in play_game(self.options, 7).commands:
            state = self.actor.state
            assert state is not None
            if state.phase is Phase.DAY:
                return
            assert not isinstance(await self.actor.submit(command), Rejection)
        raise AssertionError("the bot game never reached a day")

    async def send(self, seat: int, command: Any) -> None:
        """`command` as the client of `seat`'s first socket sends it."""
        socket = next(c for c, _ in self.sockets if c.seat == seat)
        payload = self.ruleset.encode_command(command)
        await socket._handle(json.dumps({"type": "command", "id": 1, "command": payload}))

    async def close(self) -> None:
        for task in self._writers:
            task.cancel()
        await self.actor.stop()

    def clear(self) -> None:
        self.views_built.clear()
        for _, socket in self.sockets:
            socket.sent.clear()


def _messages(frame: str) -> list[dict[str, Any]]:
    message: dict[str, Any] = json.loads(frame)
    return message["messages"] if message["type"] == "batch" else [message]


def _viewers(players: int, spectators: int, tabs_of_seat_1: int) -> list[Viewer]:
    seats = [Viewer.player(s) for s in range(1, players + 1)]
    return seats + [Viewer.player(1)] * (tabs_of_seat_1 - 1) + [Viewer.spectator()] * spectators


async def _nomination_by_day(table: Table, seats: range) -> int:
    """Play to the first day, then the first of `seats` able to nominate does; every socket's
    frames before it are cleared and those it caused are all sent. Returns that seat."""
    await table.play_to_day()
    table.start()
    await table.drained()
    state = table.actor.state
    seat, nominate = next(
        (s, c) for s in seats for c in table.ruleset.legal(state, s) if isinstance(c, Nominate)
    )
    table.clear()
    await table.send(seat, nominate)
    await table.drained()
    return seat


async def test_a_public_command_costs_every_socket_one_frame_the_sender_too() -> None:
    """A nomination by day reaches everyone: each socket gets one frame with the event and
    its fresh view — the sender's with its ack in it as well, not in a frame of its own."""
    table = Table(8, _viewers(8, spectators=2, tabs_of_seat_1=1))
    try:
        seat = await _nomination_by_day(table, range(1, 9))
        for connection, socket in table.sockets:
            assert len(socket.sent) == 1, (connection.viewer, socket.sent)
            kinds = [m["type"] for m in _messages(socket.sent[0])]
            assert "event" in kinds and kinds[-1] == "view", kinds
            assert ("ack" in kinds) == (connection.seat == seat), kinds
    finally:
        await table.close()


async def test_one_view_is_built_and_encoded_per_viewer_however_many_sockets_show_it() -> None:
    """Three spectators and three tabs of seat 1: a public command builds one view for the
    spectators and one for seat 1, and their sockets send the same encoded text."""
    table = Table(8, _viewers(8, spectators=3, tabs_of_seat_1=3))
    try:
        await _nomination_by_day(table, range(2, 9))
        assert sorted(table.views_built, key=repr) == sorted(
            [Viewer.player(s) for s in range(1, 9)] + [Viewer.spectator()], key=repr
        )
        for viewer in (Viewer.spectator(), Viewer.player(1)):
            shown = [
                _messages(socket.sent[0])[-1]
                for connection, socket in table.sockets
                if connection.viewer == viewer
            ]
            assert len(shown) == 3
            assert shown[0]["type"] == "view"
            assert shown.count(shown[0]) == 3
    finally:
        await table.close()
