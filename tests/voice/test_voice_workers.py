"""Browser voice across worker processes (issue 16 "every core", docs/scaling.md).

The real `vollmond serve --workers 2`, each worker also on a port of its own, so the test puts
each browser on the worker it wants: one seat's peer on the game's owner (a line of the room
there), two seats' peers on the other worker (lines relayed to that room through
`vollmond/voice/relay.py`, as a telephone line on that worker would be). By day every seat
hears every other (the routing table) and nobody hears himself: each tone is looked for in
every peer's recording, across the relay in both directions and from one relayed peer to the
other; the relayed peer's page is told the room and who speaks, as a local one is.
"""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from tests.phone.e2e.support import level_at
from tests.service.process import Browser, json_lines, workers_server
from tests.voice.client import VoiceClient, listen_on, open_voice
from tests.voice.test_browser_voice import HEARD, SILENT, flowing_level
from vollmond.service.shards.ownership import HashOwnership, worker_names

WORKERS = 2
NAMES = tuple(worker_names(WORKERS))
TONES = (500.0, 900.0, None)  # the owner's peer, a relayed peer, a relayed listener
LISTEN_S = 3.0


async def _day(browser: Browser, game: str, within_s: float) -> None:
    """Wait until the game's clock (the owner's timers) says day."""
    deadline = time.monotonic() + within_s
    while (await browser.http.get(f"/api/games/{game}/clock")).json().get("phase") != "day":
        assert time.monotonic() < deadline, "no day"
        await asyncio.sleep(0.2)


def _statuses(client: VoiceClient) -> list[dict[str, Any]]:
    return [f for f in client.frames if f["type"] == "voice_status"]


@pytest.mark.slow
@pytest.mark.rule("X5", "D2")
async def test_browsers_on_two_workers_hear_each_other_through_the_owner(tmp_path: Path) -> None:
    server, workers = workers_server(tmp_path / "data", WORKERS)
    browsers = [Browser(workers[i % WORKERS]) for i in range(4)]
    clients: list[VoiceClient] = []
    try:
        await server.start(ready=workers)
        for i, browser in enumerate(browsers):
            await browser.signup(f"stimme{i + 1}")
        options = {"size": 4, "durations": {"night_s": 2.0, "morning_s": 1.0, "day_s": 600.0}}
        game, token = await browsers[0].found(**options)
        tokens = [token] + [await b.join(game) for b in browsers[1:]]  # the last join starts it
        owner = NAMES.index(HashOwnership(NAMES).owner_of(game))
        other = workers[1 - owner]
        await _day(browsers[0], game, 60.0)
        # Seat tokens 0..2 (houses are dealt at the start, so the seat comes from the welcome).
        at = [workers[owner], other, other]
        for token_, freq, worker in zip(tokens, TONES, at, strict=False):
            client = await open_voice(worker.ws_url, game, token_, freq)
            clients.append(client)
            await listen_on(client)
        seats = [int(next(f for f in c.frames if f["type"] == "welcome")["seat"]) for c in clients]
        await asyncio.sleep(1.0)  # the relayed lines' first ticks reach the owner
        marks = [c.mark() for c in clients]
        heard = await asyncio.gather(
            *(c.listen(m, LISTEN_S) for c, m in zip(clients, marks, strict=True))
        )
        local, relayed, listener = heard
        statuses, owners = _statuses(clients[1]), _statuses(clients[0])
    finally:
        for client in clients:
            await client.close()
        for browser in browsers:
            await browser.close()
        server.kill(signal.SIGTERM)

    assert flowing_level(local, 900.0) > HEARD  # a relayed browser's voice, in the owner's room
    assert flowing_level(relayed, 500.0) > HEARD  # the owner's mix, relayed back
    assert flowing_level(listener, 500.0) > HEARD  # one relayed line hears the owner's peer
    assert flowing_level(listener, 900.0) > HEARD  # ... and the other relayed line
    assert level_at(local, 500.0) < SILENT  # nobody hears himself
    assert level_at(relayed, 900.0) < SILENT
    # The relayed peer's page: the room it is in (the day's, as the owner's peer is told), and
    # the owner's peer speaking in its mix.
    assert statuses and owners and statuses[-1]["room"] == owners[-1]["room"] == "market"
    assert any(seats[0] in s["speaking"] for s in statuses)
    assert seats[1] not in {h for s in statuses for h in s["speaking"]}
    follows = [e for e in json_lines(server.log_text()) if e.get("event") == "voice_line_follows"]
    assert {(e["node"], e["owner"]) for e in follows} == {(NAMES[1 - owner], NAMES[owner])}
