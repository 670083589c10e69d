"""Conference rooms across worker processes (issue 16 "every core", docs/scaling.md).

The real `vollmond serve --workers 2`, each worker also on a port of its own, so the test puts
each browser on the worker it wants: one on the worker that owns the room, one on the other
(its room a mirror, its operations sent to the owner, its voice relayed to the owner's mixer).
They meet in one room: each sees the other in the members and reads the other's chat, each
hears the other's tone and not its own; a member who switches to listening is no longer heard;
and a private room opened on one worker is found by its code typed on the other. A real
baresip caller on the other worker's SIP port enters the room by keys (5, 1#) and meets a
browser on the owner: each hears the other, and once the caller mutes himself (1) nobody does.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import av
import numpy as np
import pytest
from aiortc import MediaStreamTrack, RTCConfiguration, RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import MediaStreamError

from tests.needs import need
from tests.phone.e2e.support import level_at, phones, stretch, tone, tone_levels
from tests.service.process import Browser, free_ports, workers_server
from tests.voice.client import ToneTrack
from tests.voice.test_browser_voice import HEARD, SILENT, flowing_level
from vollmond.service.shards.ownership import HashOwnership, worker_names
from vollmond.voice.frames import Int16Array
from vollmond.voice.webrtc import Downsampler

WORKERS = 2
NAMES = tuple(worker_names(WORKERS))
ROOM = "public-werwolf"
LISTEN_S = 3.0
TONES = (500.0, 900.0)  # the owner's browser, the other worker's
CALLER_TONE, BROWSER_TONE = 2300.0, 2900.0  # above most of the prompts' voiced energy
PHONE_HEARD = 800.0  # the browser's tone in the caller's recording, even ducked under a prompt


@dataclass(eq=False)
class RoomPeer:
    """A rooms page's voice: an aiortc peer signalled by the page's one HTTP request."""

    pc: RTCPeerConnection
    heard: list[Int16Array] = field(default_factory=list)
    tasks: set[asyncio.Task[None]] = field(default_factory=set)

    async def listen(self, seconds: float, limit_s: float = 30.0) -> Int16Array:
        """The next `seconds` of what it hears (counted in samples, not in wall time)."""
        mark, frames = len(self.heard), int(seconds * 50)
        async with asyncio.timeout(limit_s):
            while len(self.heard) - mark < frames:
                await asyncio.sleep(0.05)
        return np.concatenate(self.heard[mark : mark + frames])

    async def close(self) -> None:
        for task in self.tasks:
            task.cancel()
        await self.pc.close()


async def open_room_voice(browser: Browser, token: str, tone: float) -> RoomPeer:
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    peer = RoomPeer(pc)
    pc.addTransceiver(ToneTrack(tone), direction="sendrecv")
    connected = asyncio.Event()

    async def record(track: MediaStreamTrack) -> None:
        down = Downsampler()
        with contextlib.suppress(MediaStreamError):
            while True:
                frame = await track.recv()
                if isinstance(frame, av.AudioFrame):
                    peer.heard.extend(down.feed(frame))

    @pc.on("track")
    def on_track(track: MediaStreamTrack) -> None:
        peer.tasks.add(asyncio.get_running_loop().create_task(record(track)))

    @pc.on("connectionstatechange")
    def on_state() -> None:
        if pc.connectionState == "connected":
            connected.set()

    await pc.setLocalDescription(await pc.createOffer())
    answer = await browser.post(
        f"/api/rooms/member/{token}/voice", {"sdp": pc.localDescription.sdp}
    )
    assert answer.status_code == 200, answer.text
    await pc.setRemoteDescription(RTCSessionDescription(answer.json()["sdp"], "answer"))
    await asyncio.wait_for(connected.wait(), 10)
    return peer


async def enter(browser: Browser, **body: Any) -> dict[str, Any]:
    response = await browser.post("/api/rooms/enter", body)
    assert response.status_code == 200, response.text
    state: dict[str, Any] = response.json()
    return state


async def state_until(
    browser: Browser, token: str, done: Callable[[dict[str, Any]], bool], within_s: float = 10.0
) -> dict[str, Any]:
    """The member's room state once `done` holds (the page asks about once a second)."""
    deadline = time.monotonic() + within_s
    while True:
        state: dict[str, Any] = (await browser.http.get(f"/api/rooms/member/{token}")).json()
        if done(state):
            return state
        assert time.monotonic() < deadline, state
        await asyncio.sleep(0.1)


def names(state: dict[str, Any]) -> list[tuple[str, bool]]:
    return [(m["name"], m["listening"]) for m in state["members"]]


async def private_room_by_code(opener: Browser, guest: Browser) -> None:
    """A private room opened on one worker (its owner, by the code's hash), entered by its
    code typed on the other."""
    opened = await opener.post("/api/rooms/private")
    assert opened.status_code == 200, opened.text
    code, token = opened.json()["room"]["code"], opened.json()["token"]
    by_code = await enter(guest, code=code.lower())
    assert names(by_code) == [("bert", False), ("anna", False)]
    await state_until(opener, token, lambda s: len(s["members"]) == 2)


@pytest.mark.slow
@pytest.mark.rule("X2", "X5")
async def test_browsers_on_two_workers_meet_in_one_conference_room(tmp_path: Path) -> None:
    server, workers = workers_server(tmp_path / "data", WORKERS)
    owner = NAMES.index(HashOwnership(NAMES).owner_of(f"conference:{ROOM}"))
    anna, bert = Browser(workers[owner]), Browser(workers[1 - owner])
    peers: list[RoomPeer] = []
    try:
        await server.start(ready=workers)
        await anna.signup("anna")
        await bert.signup("bert")
        a = (await enter(anna, room=ROOM))["token"]
        b_state = await enter(bert, room=ROOM)
        b = b_state["token"]
        # Members: one room, the same slots on both workers, and both workers' lists count 2.
        assert names(b_state) == [("anna", False), ("bert", False)]
        a_state = await state_until(anna, a, lambda s: len(s["members"]) == 2)
        assert a_state["members"] == b_state["members"]
        for browser in (anna, bert):
            listing = (await browser.http.get("/api/rooms")).json()["rooms"]
            assert next(r["count"] for r in listing if r["id"] == ROOM) == 2
        # Chat: each reads the other's line, in the owner's order.
        said = await bert.post(f"/api/rooms/member/{b}/chat", {"text": "Hallo von Bert"})
        assert said.status_code == 200 and said.json()["chat"][-1]["text"] == "Hallo von Bert"
        await anna.post(f"/api/rooms/member/{a}/chat", {"text": "Hallo von Anna"})
        chat = (await state_until(bert, b, lambda s: len(s["chat"]) == 2))["chat"]
        assert [(c["seq"], c["name"], c["text"]) for c in chat] == [
            (1, "bert", "Hallo von Bert"),
            (2, "anna", "Hallo von Anna"),
        ]
        # Voice: the owner's peer is a line of the room's mixer, the other one's relayed.
        peers = [await open_room_voice(anna, a, TONES[0]), await open_room_voice(bert, b, TONES[1])]
        await asyncio.sleep(1.0)  # the relayed line's first ticks reach the owner
        talking = await asyncio.gather(*(p.listen(LISTEN_S) for p in peers))
        # Bert only listens now: nobody hears him, he still hears Anna.
        switched = await bert.post(f"/api/rooms/member/{b}/listen", {"listening": True})
        assert switched.status_code == 200
        await state_until(anna, a, lambda s: ("bert", True) in names(s))
        await asyncio.sleep(0.5)  # frames already in the mixer's queue
        listening = await asyncio.gather(*(p.listen(LISTEN_S) for p in peers))
        # Bert leaves: Anna's room has her alone again.
        await bert.post(f"/api/rooms/member/{b}/leave")
        await state_until(anna, a, lambda s: names(s) == [("anna", False)])
        await anna.post(f"/api/rooms/member/{a}/leave")
        await private_room_by_code(opener=bert, guest=anna)
    finally:
        for peer in peers:
            await peer.close()
        await anna.close()
        await bert.close()
        server.kill(signal.SIGTERM)

    (anna_talking, bert_talking), (anna_listening, bert_listening) = talking, listening
    assert flowing_level(anna_talking, TONES[1]) > HEARD  # Bert's voice, relayed to the owner
    assert flowing_level(bert_talking, TONES[0]) > HEARD  # Anna's, relayed back to Bert
    assert level_at(anna_talking, TONES[0]) < SILENT  # nobody hears himself
    assert level_at(bert_talking, TONES[1]) < SILENT
    assert level_at(anna_listening, TONES[1]) < SILENT  # a listener is heard by nobody
    assert flowing_level(bert_listening, TONES[0]) > HEARD  # and still hears the room


@pytest.mark.slow
@pytest.mark.rule("X2")
async def test_a_caller_and_a_browser_on_two_workers_meet_in_one_room(tmp_path: Path) -> None:
    need("baresip", "espeak-ng", "sox")
    sip = free_ports(WORKERS, socket.SOCK_DGRAM)
    server, workers = workers_server(tmp_path / "data", WORKERS, sip_port=sip)
    owner = NAMES.index(HashOwnership(NAMES).owner_of(f"conference:{ROOM}"))
    anna = Browser(workers[owner])
    peer: RoomPeer | None = None
    try:
        await server.start(ready=workers)
        await anna.signup("anna")
        a = (await enter(anna, room=ROOM))["token"]
        peer = await open_room_voice(anna, a, BROWSER_TONE)
        async with phones(tmp_path / "phones", {"caller": tone(CALLER_TONE, 120.0)}) as lines:
            caller = lines["caller"]
            await caller.dial(sip + 1 - owner)  # the worker that does not own the room
            await asyncio.sleep(3.0)  # keys cut the prompts short, each menu comes up first
            await caller.keys("2")  # as a guest
            await asyncio.sleep(2.5)
            await caller.keys("5")  # the conference rooms
            await asyncio.sleep(2.5)
            await caller.keys("1#", gap=0.15)  # the Werwolf room
            state = await state_until(anna, a, lambda s: len(s["members"]) == 2, 30.0)
            assert state["members"][1]["channel"] == "phone"
            await asyncio.sleep(1.0)  # the relayed line's first ticks reach the owner
            talk_from = time.time()
            talking = await peer.listen(LISTEN_S)
            await caller.keys("1")  # mute
            await state_until(anna, a, lambda s: bool(s["members"][1]["muted"]))
            await asyncio.sleep(0.5)  # frames already in the mixer's queue
            muted = await peer.listen(LISTEN_S)
            await caller.hangup()
            ended = time.time()
            heard = await caller.final_recording()
        await state_until(anna, a, lambda s: names(s) == [("anna", False)])
    finally:
        if peer is not None:
            await peer.close()
        await anna.close()
        server.kill(signal.SIGTERM)

    assert flowing_level(talking, CALLER_TONE) > HEARD  # the relayed caller, in the owner's room
    assert level_at(muted, CALLER_TONE) < SILENT  # muted: heard by nobody
    # The caller hears the browser all along, muted or not (muting keeps only his voice out).
    levels = tone_levels(stretch(heard, ended, talk_from, ended - 0.5), BROWSER_TONE)
    assert len(levels) >= 8 and float(np.median(levels)) > PHONE_HEARD, levels
