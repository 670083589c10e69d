"""Games sharded over worker processes (issue 16 "every core", docs/scaling.md).

The real `vollmond serve --workers 2`, each worker also on a port of its own, so that the
test decides which worker every client reaches: the founder and the players are spread over
both, so one worker owns the game and the other follows it through a mirror — its joins go
to the owner, its players' commands go to the owner and their events come back over the bus.
Every seat gets every event it may see exactly once, in log order, and nothing else (the
store's log filtered by audience is the reference); a command's own events reach its sender
before its acknowledgement, a retried client id is answered as a repeat, both workers tell
the phase clock, the night's timer (run by the owner) ends the night for everyone, and a seat
sees the same view from both workers. On SQLite (one file, two writers) and on PostgreSQL.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tests.store.support import POSTGRES_URL
from vollmond.service.shards.ownership import HashOwnership, worker_names

from .process import (
    Browser,
    Endpoint,
    Player,
    ServerProcess,
    assert_each_seat_saw_its_log,
    workers_server,
)

WORKERS = 2
WORKER_NAMES = tuple(worker_names(WORKERS))
NIGHT_S = 25.0  # long enough for the set-up below on a loaded machine; then the timer ends it


def _options(size: int) -> dict[str, Any]:
    return {
        "size": size,
        "world": "werwolf",
        "deck": "auto",
        "durations": {"night_s": NIGHT_S, "morning_s": 90.0, "day_s": 90.0},
        "calls": {"enabled": True, "ring_s": 30.0, "max_duration_s": 120.0, "per_night": 3},
    }


def _arrival(player: Player, kind: str, **match: Any) -> int:
    """The index among the player's frames of the first frame of `kind` matching `match`."""
    for index, (_, frame) in enumerate(player.frames):
        if frame["type"] == kind and all(frame.get(k) == v for k, v in match.items()):
            return index
    raise AssertionError(f"seat {player.seat}: no {kind} {match}")


async def _command_with_cid(player: Player, cid: str, **command: Any) -> dict[str, Any]:
    await player.send(
        {"type": "command", "command": {"actor": player.seat, **command}, "id": 7, "cid": cid}
    )
    return await player.expect("ack")


async def _seated(workers: Sequence[Endpoint]) -> tuple[list[Player], list[Browser], str]:
    """Four accounts spread over both workers found and fill a table; each seat's socket is
    on the worker its browser used. Returns the players in house order."""
    browsers = [Browser(workers[i % WORKERS]) for i in range(4)]
    for i, browser in enumerate(browsers):
        await browser.signup(f"shard{i + 1}")
    game, token = await browsers[0].found(**_options(4))
    tokens = [token] + [await b.join(game) for b in browsers[1:]]  # the last join starts it
    players = [Player(game, t) for t in tokens]
    for i, player in enumerate(players):
        await player.connect(workers[i % WORKERS])
    return players, browsers, game


async def play_and_check(
    server: ServerProcess,
    workers: Sequence[Endpoint],
    *,
    nodes: Sequence[str] = WORKER_NAMES,
    log_text: Callable[[], str] | None = None,
) -> None:
    """Found and play a game with the seats spread over `workers` (named `nodes`), and check
    what every seat saw against the store's log (`server`'s database)."""
    players, browsers, game = await _seated(workers)
    where = {p.seat: workers[i % WORKERS] for i, p in enumerate(players)}
    players.sort(key=lambda p: p.seat)
    try:
        owner = HashOwnership(nodes).owner_of(game)
        assert owner in nodes
        members = next(p.view["night_room"]["members"] for p in players if p.view["night_room"])
        evil = [p for p in players if p.seat in members]
        village = [p for p in players if p not in evil]

        # The phase clock from either worker: the owner's timer, and the deadline the mirror
        # read from the log.
        clocks = [(await b.http.get(f"/api/games/{game}/clock")).json() for b in browsers[:2]]
        assert [c["phase"] for c in clocks] == ["night", "night"]
        assert all(0 < c["remaining"] <= NIGHT_S for c in clocks)
        assert abs(clocks[0]["remaining"] - clocks[1]["remaining"]) < 5.0

        # A secret vote and the night room's chat; a call between two villagers and its chat.
        await evil[0].command(type="UseAbility", kind="evil_vote", target=village[0].seat)
        said = await evil[0].command(type="Say", text="Nummer eins.")
        seq = said["seq"]
        assert _arrival(evil[0], "event", seq=seq) < _arrival(evil[0], "ack", seq=seq)
        await village[0].command(type="PlaceCall", callee=village[1].seat)
        await village[1].expect("event", code="call_incoming")
        await village[1].command(type="AnswerCall", accept=True)
        first = await _command_with_cid(village[1], "c1", type="Say", text="Hallo?")
        again = await _command_with_cid(village[1], "c1", type="Say", text="Hallo?")
        assert (first["repeated"], again["repeated"]) == (False, True)
        assert again["seq"] == first["seq"]

        # The owner's night timer ends the night on both workers.
        for player in players:
            await player.expect("event", timeout=NIGHT_S + 60, code="morning_report")

        # Every seat: the store's log as its audience may see it, each event once, in order.
        await assert_each_seat_saw_its_log(
            server, players, lambda p: f" on {where[p.seat].base_url}"
        )
        chats = {p.seat for p in players if any(c == "chat" for _, c, _ in p.events())}
        assert chats == {evil[0].seat, village[0].seat, village[1].seat}

        # The mirror holds the owner's state: a seat's view is the same from both workers.
        for player in players:
            other = next(w for w in workers if w != where[player.seat])
            twin = Player(game, player.token)
            try:
                welcome = await twin.connect(other)
                assert welcome["view"] == await player.fresh_view()
            finally:
                await twin.close()
        assert "game_mirrored" in (log_text or server.log_text)()
    finally:
        for player in players:
            await player.close()
        for browser in browsers:
            await browser.close()


async def test_players_on_two_workers_share_one_game(
    tmp_path: Path, database: tuple[str, str | None]
) -> None:
    backend, schema = database
    server, workers = workers_server(
        tmp_path / "data",
        WORKERS,
        database_url=POSTGRES_URL if backend == "postgresql" else None,
        schema=schema,
    )
    try:
        await server.start(ready=workers)
        await play_and_check(server, workers)
    finally:
        server.kill(signal.SIGTERM)  # the supervisor stops its workers
