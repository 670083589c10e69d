"""A dropped player keeps the seat for a grace period; a player away for several phases is
removed (issue 3 "Games that survive", docs/decisions.md "Leaving"), over real WebSockets.

Missed actions take their documented defaults meanwhile: the night ends on its timer without
the absent seer's check, and the vote ends on its timer with the absent player abstaining.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect

from tests.store.support import POSTGRES_URL
from vollmond.engine.core import Event, Viewer
from vollmond.engine.standard import GameOptions, GameState
from vollmond.engine.standard.options import Durations
from vollmond.engine.standard.types import Phase
from vollmond.service.actor import GameActor
from vollmond.service.hub import Hub
from vollmond.service.policy import DurationBounds, Policy
from vollmond.service.presence import IDLE_KARMA_REASON
from vollmond.store import karma_history, open_store, read_events

from .support import ApiClient, Service, WsClient, hello, seated_table

FOUR_DECK = [["evil", 1], ["seer", 1], ["filler", 2]]
NO_CALLS = {"enabled": False}


def _policy(grace_s: float, idle_phases: int) -> Policy:
    return Policy(
        durations=DurationBounds(min_s=0.05),
        grace_s=grace_s,
        idle_phases_before_removal=idle_phases,
        login_attempts_per_minute=100,
    )


@pytest.fixture
async def clients() -> AsyncIterator[list[ApiClient | WsClient]]:
    made: list[ApiClient | WsClient] = []
    yield made
    for client in made:
        await client.close()


async def _open_ws(service: Service) -> WsClient:
    """A socket the test closes (through its list of things to close)."""
    return WsClient(await connect(service.ws_url, max_size=2**20, max_queue=None))


async def _table(
    service: Service, made: list[ApiClient | WsClient], prefix: str, durations: dict[str, float]
) -> tuple[str, list[ApiClient], list[str], dict[int, WsClient], dict[int, dict[str, Any]]]:
    """Four seated players, every one connected; sockets and welcome views by house."""

    def make() -> ApiClient:
        client = ApiClient(service)
        made.append(client)
        return client

    game, browsers, tokens = await seated_table(
        make, 4, prefix, deck="custom", custom_roles=FOUR_DECK, durations=durations, calls=NO_CALLS
    )
    sockets: dict[int, WsClient] = {}
    views: dict[int, dict[str, Any]] = {}
    for token in tokens:
        ws = await _open_ws(service)
        made.append(ws)
        welcome = await hello(ws, game, token)
        assert welcome["type"] == "welcome", welcome
        sockets[int(welcome["seat"])] = ws
        views[int(welcome["seat"])] = welcome["view"]
    return game, browsers, tokens, sockets, views


async def _event(ws: WsClient, code: str, timeout: float = 10.0, **params: Any) -> dict[str, Any]:
    """The next event with this code (and params); frames in between stay in `ws.frames`."""
    deadline = time.monotonic() + timeout
    while True:
        frame = await ws.recv(max(0.01, deadline - time.monotonic()))
        if frame["type"] == "error":
            raise AssertionError(f"error frame: {frame}")
        if (
            frame["type"] == "event"
            and frame["code"] == code
            and all(frame["params"].get(k) == v for k, v in params.items())
        ):
            return frame


async def _command(ws: WsClient, seat: int, **command: Any) -> None:
    await ws.send({"type": "command", "command": {"actor": seat, **command}, "id": seat})
    while True:
        frame = await ws.recv()
        assert frame["type"] != "error", frame
        if frame["type"] == "ack":
            return


def _seqs(ws: WsClient) -> list[int]:
    return [f["seq"] for f in ws.frames if f["type"] == "event"]


def _left(ws: WsClient) -> list[dict[str, Any]]:
    return [f for f in ws.frames if f["type"] == "event" and f["code"] == "player_left"]


StartService = Callable[[Policy], AbstractAsyncContextManager[Service]]


async def test_absent_player_takes_defaults_then_is_removed_once(
    start_service: StartService, clients: list[ApiClient | WsClient]
) -> None:
    durations = {"night_s": 1.2, "morning_s": 0.4, "day_s": 1.2, "vote_s": 1.2}
    async with start_service(_policy(grace_s=0.3, idle_phases=4)) as service:
        game, browsers, _, sockets, views = await _table(service, clients, "Idle", durations)
        seer = next(s for s, v in views.items() if v["me"]["role"] == "seer")
        evil = next(s for s, v in views.items() if v["me"]["role"] == "evil")
        present = sorted(s for s in sockets if s != seer)
        await sockets[seer].close()  # the seer drops in night 1 and never comes back
        watcher = sockets[present[0]]

        # Idle phase 1 (night -> morning): the night ends on its timer, the check passed.
        await _event(watcher, "morning_report")
        await _event(watcher, "phase_started", phase="day")  # idle phase 2
        nominee = next(s for s in present if s != present[0])
        await _command(watcher, present[0], type="Nominate", target=nominee)
        started = await _event(watcher, "voting_started")  # idle phase 3
        for seat in present:
            await _command(sockets[seat], seat, type="Vote", target=None)
        # The vote waits for the absent seer until its timer; the seer abstains.
        result = await _event(watcher, "vote_result")
        assert started["params"]["nominees"] == [nominee]
        assert result["params"]["votes"] == {str(s): None for s in present}
        assert result["params"]["banished"] is None

        # Idle phase 4 (vote -> night): removed like a death, the role revealed to the table.
        left = await _event(watcher, "player_left", timeout=5.0)
        assert left["params"] == {"seat": seer, "dead": [{"seat": seer, "role": "seer"}]}
        for seat in present:
            if seat != present[0]:
                await _event(sockets[seat], "player_left", seat=seer)

        # Later phases neither remove nor punish twice.
        await _event(watcher, "phase_started", timeout=5.0, phase="day")
        assert len(_left(watcher)) == 1
        account = browsers[seer - 1].account_id
        assert account is not None
        entries = await karma_history(service.hub.sessions, account)
        assert [(e.amount, e.reason, e.game_id) for e in entries] == [
            (-10, IDLE_KARMA_REASON, game)
        ]
        for seat in present:
            other = browsers[seat - 1].account_id
            assert other is not None and await karma_history(service.hub.sessions, other) == []
        logged = await read_events(service.hub.sessions, game)
        assert not [e for e in logged if e.kind == "check_result"]  # the night action passed
        at = {e.kind: e.created_at for e in reversed(logged)}  # the first of each kind
        waited = (at["vote_result"] - at["voting_started"]).total_seconds()
        assert waited > durations["vote_s"] - 0.1  # the vote ran to its timer, not ended early
        assert evil in present


async def test_reconnect_within_grace_keeps_the_seat(
    start_service: StartService, clients: list[ApiClient | WsClient]
) -> None:
    """Grace 6 s, removal after one idle phase: the player back within the grace period
    stays; a player who stays away is removed at the first phase change after it."""
    durations = {"night_s": 3.0, "morning_s": 0.5, "day_s": 4.0}
    async with start_service(_policy(grace_s=6.0, idle_phases=1)) as service:
        game, _, tokens, sockets, views = await _table(service, clients, "Grace", durations)
        # Not the evil player: removing that one would end the game (the village wins).
        back, gone, watching = sorted(s for s, v in views.items() if v["me"]["role"] != "evil")
        dropped = time.monotonic()
        await sockets[back].close()
        await sockets[gone].close()
        last_seen = max(_seqs(sockets[back]), default=0)

        watcher = sockets[watching]
        await _event(watcher, "morning_report")  # a phase change inside the grace period
        ws = await _open_ws(service)
        clients.append(ws)
        welcome = await hello(ws, game, tokens[back - 1], after=last_seen)
        assert time.monotonic() - dropped < 6.0, "test too slow: grace over before reconnect"
        assert welcome["type"] == "welcome" and welcome["seat"] == back
        assert welcome["view"]["me"]["alive"] is True
        report = await _event(ws, "morning_report")
        assert report["seq"] > last_seen  # what happened while away is sent on reconnect

        left = await _event(watcher, "player_left", timeout=15.0)
        assert left["params"]["seat"] == gone
        await _event(watcher, "phase_started", timeout=15.0, phase="morning")
        assert [f["params"]["seat"] for f in _left(watcher)] == [gone]
        await _event(ws, "phase_started", timeout=15.0, phase="morning", round=2)
        assert [f["params"]["seat"] for f in _left(ws)] == [gone]
        seqs = _seqs(ws)
        assert seqs == sorted(set(seqs))


class _Line:
    """A channel other than the browser (a phone line, a bot): it only subscribes."""

    def __init__(self, seat: int) -> None:
        self.viewer = Viewer.player(seat)

    def deliver(self, seq: int, event: Event) -> None:
        pass

    def state_changed(
        self, state: GameState, phase_changed: bool, *, view_unchanged: bool = False
    ) -> None:
        pass


async def test_any_subscribed_channel_keeps_its_seat(
    database: tuple[str, str | None], tmp_path: Path
) -> None:
    """Presence comes from the actor's subscribers, so a phone line holds its seat without
    reporting anything; the seats nobody follows are removed (grace 0, one idle phase)."""
    backend, schema = database
    url = POSTGRES_URL if backend == "postgresql" else f"sqlite+aiosqlite:///{tmp_path / 'db'}"
    async with open_store(url, schema=schema) as sessions:
        hub = Hub(sessions, _policy(grace_s=0.0, idle_phases=1))
        options = GameOptions(players=6, durations=Durations(night_s=0.3))
        founded = await hub.found(options, private=False, host_account_id=None, host_name="h")
        for i in range(5):
            await hub.join(founded.game.id, account_id=None, name=f"p{i}")
        actor = hub.actors[founded.game.id]
        state = _state(actor)
        unfollowed = {p.seat for p in state.players if p.role.value != "evil"}
        unfollowed = set(sorted(unfollowed)[:2])
        for seat in set(range(1, 7)) - unfollowed:
            actor.subscribe(_Line(seat))
        try:
            for _ in range(60):
                if _state(actor).phase is not Phase.NIGHT and _gone(actor) == unfollowed:
                    break
                await asyncio.sleep(0.05)
            assert _gone(actor) == unfollowed
            assert hub.presence.connected(founded.game.id, min(set(range(1, 7)) - unfollowed))
        finally:
            await hub.close()


def _state(actor: GameActor) -> GameState:
    assert isinstance(actor.state, GameState)
    return actor.state


def _gone(actor: GameActor) -> set[int]:
    return {p.seat for p in _state(actor).players if not p.alive}
