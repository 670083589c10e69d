"""The telephone under `vollmond serve --workers 2` (issue 16; docs/scaling.md): two real
baresip callers in one game, each call on another worker.

Worker i answers SIP on --sip-port + i, so the test sends one caller to each: the game's owner
(the hash of its id) runs the caller on its own worker as a local line, and the other worker
keeps its caller's call, session and prompts and relays the voice to the owner's room
(vollmond/voice/relay.py). Both callers join the browser's private round by keys (2 = guest,
2 = join by code, the code and #), each playing its own tone all along. At night neither
caller hears the other (villagers sleep; a wolf's room is closed to a villager); by day each
hears the other's tone across the two workers — one of them a local line of the owner, the
other relayed — at the level a local line hears it (the day's narration ducks both alike). The
recordings are placed in time from their end (the moment each phone hung up): baresip records
every frame the server sent, 20 ms each. The tones (2300 and 2900 Hz, measured against their
neighbours 40 Hz away) stand apart from the narration's speech.
"""

from __future__ import annotations

import asyncio
import signal
import socket
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.needs import need
from tests.phone.e2e.support import RATE, Phone, phones, stretch, tone, tone_levels
from tests.service.process import (
    Browser,
    Endpoint,
    Player,
    free_ports,
    json_lines,
    workers_server,
)
from tests.service.test_loop_lag import ticks_at_least
from vollmond.phone.media import Int16Array
from vollmond.phone.session.codes import phone_code
from vollmond.service.shards.ownership import HashOwnership, worker_names

WORKERS = 2
NIGHT_S = 12.0
TONES = {"anna": 2300.0, "bert": 2900.0}  # above most of the narration's voiced energy
HEARD = 800.0  # the other's 6000-amplitude tone, even ducked under a prompt (0.3): ~1800
QUIET = 300.0  # at night: what the narration's speech leaves at a tone's frequency (< 60 seen)


async def _join_by_keys(phone: Phone, sip_port: int, code: str) -> None:
    """Dial and join by code without seeing the session (it runs in a worker)."""
    await phone.dial(sip_port)
    await to_the_code_prompt(phone)
    await phone.keys(code + "#", gap=0.15)


async def to_the_code_prompt(phone: Phone) -> None:
    """From the announcer's greeting of a call just placed to the prompt for a round's code:
    2 = as a guest, 2 = join by code. Keys cut the prompts short (barge-in), with a pause for
    each menu to come up (the session runs in the server: nothing here to wait on)."""
    await asyncio.sleep(3.0)
    await phone.keys("2")
    await asyncio.sleep(2.5)
    await phone.keys("2")
    await asyncio.sleep(2.5)


async def _phone_seats(browser: Browser, game: str) -> list[str]:
    """The names of the players at the table who joined by phone (no house yet: a lobby)."""
    info = (await browser.http.get(f"/api/games/{game}")).json()["game"]
    return [str(p["name"]) for p in info["players"] if p["channel"] == "phone"]


async def _phase(player: Player, phase: str, timeout: float) -> float:
    """Wait for the event that starts `phase`; the moment it arrived (time.time)."""
    deadline = time.monotonic() + timeout
    while True:
        frame = await player.recv(max(0.01, deadline - time.monotonic()))
        if (
            frame["type"] == "event"
            and frame["code"] == "phase_started"
            and frame["params"].get("phase") == phase
        ):
            return time.time()


@pytest.mark.slow
@pytest.mark.rule("N1", "X6")
async def test_two_callers_on_two_workers_hear_each_other_by_day_not_at_night(
    tmp_path: Path,
) -> None:
    need("baresip", "espeak-ng", "sox")
    sip = free_ports(WORKERS, socket.SOCK_DGRAM)
    server, workers = workers_server(tmp_path / "data", WORKERS, sip_port=sip)
    try:
        await server.start(ready=workers)
        sip_ports = [sip + i for i in range(WORKERS)]
        names = tuple(worker_names(WORKERS))
        await callers_on_two_processes(tmp_path, workers, sip_ports, names, server.log_text)
    finally:
        server.kill(signal.SIGTERM)


async def callers_on_two_processes(
    root: Path,
    processes: Sequence[Endpoint],
    sip_ports: Sequence[int],
    names: tuple[str, ...],
    log_text: Callable[[], str],
) -> None:
    """Two processes (`names`, ownership by the hash over them) sharing the games, each with
    its web endpoint and SIP port: a browser on the first founds a private round of four, anna
    calls the first process and bert the second and both join by keys, a browser on the second
    takes the last seat; the callers' recordings and the log's relayed line are checked."""
    host, guest = Browser(processes[0]), Browser(processes[1])
    players: list[Player] = []
    try:
        await host.signup("gastgeberin")
        await guest.signup("gast")
        options: dict[str, Any] = {
            "size": 4,
            "private": True,
            "durations": {"night_s": NIGHT_S, "morning_s": 1.5, "day_s": 300.0},
        }
        founded = (await host.post("/api/games", options)).json()
        game, code = str(founded["game"]), phone_code(str(founded["invitation_code"]))
        owner = HashOwnership(names).owner_of(game)
        sources = {name: tone(freq, 110) for name, freq in TONES.items()}
        async with phones(root / "phones", dict(sources)) as lines:
            for index, name in enumerate(TONES):  # anna on the first process, bert on the other
                await _join_by_keys(lines[name], sip_ports[index], code)
            await wait_until_seated(host, game, 2)
            # The fourth seat, by the code: the game starts, at night.
            joined = await guest.post("/api/join", {"code": str(founded["invitation_code"])})
            assert joined.status_code == 201, joined.text
            host_player = Player(game, str(founded["token"]))
            players.append(host_player)
            await host_player.connect(processes[0])
            night_from = time.time() + 1.0
            morning_from = await _phase(host_player, "morning", NIGHT_S + 60)
            day_from = await _phase(host_player, "day", 30)
            await asyncio.sleep(6.0)  # the day's first announcements; the tones go on below
            for phone in lines.values():
                await phone.hangup()
            ended = time.time()
            heard = {name: await lines[name].final_recording() for name in TONES}

        # Each process's event loop stalls during the game, by length: printed beside the
        # relayed line's own account, so a failure says whether a gap the callers heard was a
        # process that stalled. (Workers answer `/metrics` for each other, labelled; nodes
        # each for itself.)
        for name, browser in zip(names, (host, guest), strict=True):
            metrics = (await browser.http.get("/metrics")).text
            worker = name if f'worker="{name}"' in metrics else None
            lags = (0.05, 0.1, 0.25, 0.5, 1.0)
            stalls = {f"{s} s": ticks_at_least(metrics, s, worker=worker) for s in lags}
            print(name, "event loop stalls of at least", stalls)
        relayed = [
            entry for entry in json_lines(log_text()) if entry.get("event") == "voice_line_follows"
        ]
        assert relayed, "no line was relayed"
        landing = next(name for name in names if name != owner)
        assert {(e["node"], e["owner"]) for e in relayed} == {(landing, owner)}
        # The relay's own account (a line following its owner, an owner silent), for a failure.
        voice = [e for e in json_lines(log_text()) if str(e.get("event", "")).startswith("voice_")]
        _hear_each_other_by_day_only(heard, ended, night_from, morning_from, day_from, voice)
    finally:
        for player in players:
            await player.close()
        await host.close()
        await guest.close()


def _hear_each_other_by_day_only(
    heard: dict[str, Int16Array], ended: float, night_from: float, morning_from: float,
    day_from: float, log: list[dict[str, Any]],
) -> None:  # fmt: skip
    """Each caller's recording: the other's tone never at night, by day at the level the
    other caller hears (one is the owner's local line, the other relayed)."""
    print("relayed lines", [e for e in log if e.get("event") == "voice_line_ended"])
    medians: dict[str, float] = {}
    for listener, other in (("anna", "bert"), ("bert", "anna")):
        night = stretch(heard[listener], ended, night_from, morning_from - 1.0)
        day = stretch(heard[listener], ended, day_from + 1.0, ended - 0.5)
        assert len(night) > 4 * RATE and len(day) > 3 * RATE, (len(night), len(day))
        night_levels = tone_levels(night, TONES[other])
        day_levels = tone_levels(day, TONES[other])
        print(listener, other, "night", [round(x) for x in night_levels])
        print(listener, other, "day", [round(x) for x in day_levels])
        # Heard, the tone would be in every half second at about 1800 (ducked under the
        # narration) or 6000; the narration's speech leaves at most tens at these tones.
        assert max(night_levels) < QUIET, (listener, night_levels, log)
        medians[listener] = float(np.median(day_levels))
        assert medians[listener] > HEARD, (listener, day_levels, log)
    # The relayed caller hears as loud as the owner's local caller (within a quarter).
    assert 0.75 < medians["anna"] / medians["bert"] < 1 / 0.75, medians


async def wait_until_seated(browser: Browser, game: str, callers: int) -> None:
    deadline = time.monotonic() + 60.0
    while len(await _phone_seats(browser, game)) < callers:
        assert time.monotonic() < deadline, "the callers did not get their seats"
        await asyncio.sleep(0.5)
