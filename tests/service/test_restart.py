"""Games survive a hard crash (issue 3, DESIGN §3): SIGKILL the real server mid-night, start it
again, and every unfinished game goes on from its log with the same state and the same timers,
while clients reconnect with their seat token and lose or repeat no event.

Game A is killed with a night and a ringing call still running: after the restart every seat's
view is identical, the ringing call and the night end on their original deadlines (not
restarted from zero). Game B's night deadline passes while the server is down: its timer fires
right after the start. Game C, a host and five bots, is killed before any bot moved: after the
restart its bots play their seats again (their moves reach its log; the host makes none). All
run on SQLite and on the real PostgreSQL (a fresh schema).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.store.support import POSTGRES_URL
from vollmond.bots.table import BOT_CHANNEL
from vollmond.store import open_store, read_commands
from vollmond.store.seats import list_seats

from .process import Browser, Player, ServerProcess, serving

A_NIGHT_S = 50.0
# The ring ends within the night, as late as the night allows: the restart must be up before it
# ends, and on a loaded two-core machine (the suite's first minutes) one took 20 s.
A_RING_S = 40.0
B_NIGHT_S = 8.0
C_NIGHT_S = 40.0  # its bots first act 6-24 s into the night: none before the kill
C_DECK = {"deck": "custom", "custom_roles": [["evil", 2], ["seer", 1], ["filler", 3]]}
LATE_S = 3.0  # a timer fires at most this late (scheduling on a busy test machine)


def _options(size: int, night_s: float, ring_s: float) -> dict[str, Any]:
    return {
        "size": size,
        "world": "werwolf",
        "deck": "auto",
        "durations": {"night_s": night_s, "morning_s": 90.0, "day_s": 90.0},
        "calls": {"enabled": True, "ring_s": ring_s, "max_duration_s": 120.0, "per_night": 3},
    }


async def _table(
    server: ServerProcess, browsers: list[Browser], options: dict[str, Any]
) -> tuple[list[Player], float, float]:
    """Found a game, fill it (it starts when full), connect every seat; returns the players in
    house order and the window in which the game (and its first night) started."""
    game, token = await browsers[0].found(**options)
    tokens = [token]
    for browser in browsers[1 : options["size"] - 1]:
        tokens.append(await browser.join(game))
    before = time.time()
    tokens.append(await browsers[options["size"] - 1].join(game))
    after = time.time()
    players = [Player(game, t) for t in tokens]
    for player in players:
        await player.connect(server)
    players.sort(key=lambda p: p.seat)
    return players, before, after


def _evil(players: list[Player]) -> list[Player]:
    members = next(p.view["night_room"]["members"] for p in players if p.view["night_room"])
    return [p for p in players if p.seat in members]


async def _views(players: list[Player]) -> list[dict[str, Any]]:
    return list(await asyncio.gather(*(p.fresh_view() for p in players)))


@dataclass
class Scene:
    """Both games as they were at the kill, with the windows in which their timers started."""

    a: list[Player]
    a_from: float
    a_to: float
    ring_from: float
    ring_to: float
    b: list[Player]
    b_from: float
    b_victim: int
    night_room: set[int]
    in_call: set[int]
    c: str = ""  # game C: its host's and five bots' seats
    c_from: float = 0.0
    a_views: list[dict[str, Any]] = field(default_factory=list)


async def _play_into_the_night(server: ServerProcess, browsers: list[Browser]) -> Scene:
    # Game A: 8 players, a long night; one evil vote, night-room chat, an active call and a
    # ringing one.
    a, a_from, a_to = await _table(server, browsers, _options(8, A_NIGHT_S, A_RING_S))
    evil = _evil(a)
    village = [p for p in a if p not in evil]
    await evil[0].command(type="UseAbility", kind="evil_vote", target=village[0].seat)
    await evil[1].command(type="Say", text="Wir nehmen die Nummer eins.")
    await village[0].command(type="PlaceCall", callee=village[1].seat)
    await village[1].expect("event", code="call_incoming")
    await village[1].command(type="AnswerCall", accept=True)
    ring_from = time.time()
    await village[2].command(type="PlaceCall", callee=village[3].seat)
    ring_to = time.time()
    await village[0].command(type="Say", text="Hörst du mich?")

    # Game B: 4 players, a short night that will end while the server is down.
    b, b_from, _ = await _table(server, browsers[:4], _options(4, B_NIGHT_S, 20.0))
    (b_evil,) = _evil(b)
    b_victim = next(p for p in b if p is not b_evil)
    await b_evil.command(type="UseAbility", kind="evil_vote", target=b_victim.seat)

    scene = Scene(
        a,
        a_from,
        a_to,
        ring_from,
        ring_to,
        b,
        b_from,
        b_victim.seat,
        night_room={p.seat for p in evil},
        in_call={village[0].seat, village[1].seat},
    )
    scene.a_views = await _views(a)
    assert scene.a_views[village[3].seat - 1]["me"]["call"]["status"] == "ringing"
    assert scene.a_views[village[0].seat - 1]["me"]["call"]["status"] == "active"
    votes = scene.a_views[evil[0].seat - 1]["night_room"]["votes"]
    assert votes == {str(evil[0].seat): village[0].seat}
    await _views(b)

    # Game C: the host and five bots (the host's "fill with bots"); nobody moves before the
    # kill, the bots not until 15 % of the night.
    scene.c, _ = await browsers[4].found(**{**_options(6, C_NIGHT_S, 20.0), **C_DECK})
    scene.c_from = time.time()
    response = await browsers[4].post(f"/api/games/{scene.c}/bots")
    assert response.status_code == 200 and response.json()["bots"] == 5, response.text
    return scene


async def _bot_moves(server: ServerProcess, game_id: str) -> list[Any]:
    """The moves in the game's log made by its bot seats."""
    async with open_store(server.store_url, schema=server.schema, migrate_to_head=False) as db:
        bots = {s.house for s in await list_seats(db, game_id) if s.channel == BOT_CHANNEL}
        logged = await read_commands(db, game_id)
    moves = [c.command.get("command") for c in logged if isinstance(c.command, dict)]
    return [m for m in moves if isinstance(m, dict) and m.get("actor") in bots]


async def _check_resumed(server: ServerProcess, scene: Scene, ready: float) -> None:
    # A: the same state for every seat, view for view.
    for player, before in zip(scene.a, scene.a_views, strict=True):
        welcome = await player.connect(server)
        assert welcome["view"] == before, f"seat {player.seat}: view changed by the crash"

    # B: the night timer that ran out while the server was down fired right after the start.
    for player in scene.b:
        await player.connect(server)
    for player in scene.b:
        report = await player.expect("event", code="morning_report")
        assert [d["seat"] for d in report["params"]["dead"]] == [scene.b_victim]
    fired = await server.logged_at(scene.b[0].game, "morning_report")
    assert fired < ready + LATE_S

    # A: the ringing call and the night end on their original deadlines.
    ringing = [
        p for p in scene.a if p.view["me"]["call"] and p.view["me"]["call"]["status"] == "ringing"
    ]
    assert len(ringing) == 2
    for player in ringing:
        await player.expect("event", timeout=A_RING_S + 10, code="call_missed")
    fired = await server.logged_at(scene.a[0].game, "call_missed")
    assert scene.ring_from + A_RING_S - 0.3 <= fired <= scene.ring_to + A_RING_S + LATE_S
    for player in scene.a:
        await player.expect("event", timeout=A_NIGHT_S + 10, code="morning_report")
    fired = await server.logged_at(scene.a[0].game, "morning_report")
    assert scene.a_from + A_NIGHT_S - 0.3 <= fired <= scene.a_to + A_NIGHT_S + LATE_S
    assert fired < ready + A_NIGHT_S - 5, "the night timer started again from zero"

    # C: the bots were seated again and play their seats (only they can move there).
    deadline = scene.c_from + C_NIGHT_S
    while not await _bot_moves(server, scene.c):
        assert time.time() < deadline, "game C's bots did not move after the restart"
        await asyncio.sleep(0.5)


async def _check_no_event_lost_or_doubled(server: ServerProcess, scene: Scene) -> None:
    for player in scene.a + scene.b:
        seen = player.events()
        seqs = [seq for seq, _, _ in seen]
        assert seqs == sorted(set(seqs)), f"seat {player.seat}: an event twice or out of order"
        assert seen == await server.visible_log(player.game, player.seat)
    # Chat is part of the log, and reached its room only (the night room; the call's two).
    for room, audience in (("night_room", scene.night_room), ("call", scene.in_call)):
        readers = {p.seat for p in scene.a if ("chat", room) in _chats(p)}
        assert readers == audience, room


def _chats(player: Player) -> set[tuple[str, str]]:
    return {(code, params["room"]) for _, code, params in player.events() if code == "chat"}


async def _run_crash_and_resume(server: ServerProcess) -> None:
    browsers = [Browser(server) for _ in range(8)]
    players: list[Player] = []
    try:
        for i, browser in enumerate(browsers):
            await browser.signup(f"crash{i + 1}")
        scene = await _play_into_the_night(server, browsers)
        players = scene.a + scene.b
        assert time.time() < scene.b_from + B_NIGHT_S - 1, "set-up too slow: B's night is over"
        assert time.time() < scene.c_from + 0.15 * C_NIGHT_S - 1, "set-up too slow: C's bots"
        server.kill()
        assert await _bot_moves(server, scene.c) == [], "C's bots moved before the kill"
        for player in players:
            await player.close()

        # Down until B's night deadline has passed.
        await asyncio.sleep(max(0.0, scene.b_from + B_NIGHT_S + 0.5 - time.time()))
        ready = await server.start()
        assert ready < scene.ring_from + A_RING_S - 2, "restart too slow for the ring deadline"
        await _check_resumed(server, scene, ready)

        await asyncio.gather(*(p.drain(0.5) for p in players))
        server.kill()
        await _check_no_event_lost_or_doubled(server, scene)
    finally:
        for player in players:
            await player.close()
        for browser in browsers:
            await browser.close()


async def test_sigkill_mid_night_resumes_every_game(
    tmp_path: Path, database: tuple[str, str | None]
) -> None:
    backend, schema = database
    url = POSTGRES_URL if backend == "postgresql" else None
    server = ServerProcess(tmp_path / "data", database_url=url, schema=schema)
    async with serving(server):
        await _run_crash_and_resume(server)
