"""Mixing and prompts in the media process: the control messages that carry them (round trips,
fuzzed input that a media process survives), the playlist and the rooms' copies on their own,
and a real media process mixing two rooms and playing a prompt to callers on real UDP."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import Callable, Sequence
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.phone.helpers import CollectingWriter, UdpPeer, dominant_frequency
from vollmond.engine.ruleset import SPECTATORS, RoutingTable
from vollmond.phone.g711 import ULAW
from vollmond.phone.media import MediaParams
from vollmond.phone.mediaproc import protocol as p
from vollmond.phone.mediaproc.client import MediaProcess, MediaProcesses, RemoteEndpoint, _Mirror
from vollmond.phone.mediaproc.mixing import Mixing, Playlist
from vollmond.phone.mediaproc.worker import MediaWorker
from vollmond.phone.rtp import RtpPacket, parse_rtp
from vollmond.phone.session.prompts.queue import Live, Priority, PromptQueue
from vollmond.voice.mixer import GameMixer, gain_matrix

MESSAGES: list[p.Control] = [
    p.Route(7, 3, 0, 2, False),
    p.Route(7, None, None, None, True),
    p.Play(7, (p.PlayItem(1, 5, 0), p.PlayItem(2, 6, None))),
    p.Play(7, ()),
    p.Forget(5),
    p.DropRoom(3),
    p.Played(7, (1, 2)),
]


@pytest.mark.parametrize("message", MESSAGES, ids=lambda m: f"{type(m).__name__}")
def test_every_mixing_message_survives_the_round_trip(message: p.Control) -> None:
    assert p.decode_control(p.encode_control(message)) == message


def test_clips_gains_and_source_ids_survive_the_round_trip() -> None:
    clip = p.Clip(9, np.arange(-5, 5, dtype=np.int16))
    back = p.Clip.decode(clip.encode())
    assert back.clip == 9 and back.samples.tolist() == clip.samples.tolist()
    gains = p.Gains(4, (np.arange(12, dtype=np.float32) / 12).reshape(4, 3).astype(np.float32))
    again = p.Gains.decode(gains.encode())
    assert again.room == 4 and np.array_equal(again.gains, gains.gains)
    assert p.split_source(p.source_id(12345, 200)) == (12345, 200)


@pytest.mark.parametrize(
    ("payload", "why"),
    [
        (p.Gains(1, np.zeros((4, 3), np.float32)).encode()[:-4], "length"),
        (p.Gains(1, np.full((2, 1), np.nan, np.float32)).encode(), "range"),
        (p.Gains(1, np.full((2, 1), 1e9, np.float32)).encode(), "range"),
        (b"\x01\x00\x00\x00\x00\x00\x00\x00", "impossible"),
    ],
)
def test_malformed_gains_are_refused(payload: bytes, why: str) -> None:
    with pytest.raises(p.ProtocolError, match=why):
        p.Gains.decode(payload)


def test_a_clip_of_half_a_sample_is_refused() -> None:
    with pytest.raises(p.ProtocolError):
        p.Clip.decode(b"\x00" * 9)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_any_bytes_are_a_clip_or_gains_or_a_protocol_error(data: bytes) -> None:
    for parse in (p.Clip.decode, p.Gains.decode):
        with contextlib.suppress(p.ProtocolError):
            parse(data)


# -- a media process fed garbage -----------------------------------------------------------------

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 2**33) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=10,
)
_FIELDS = st.sampled_from(
    ["call", "room", "listener", "source", "fed", "items", "clip", "tags", "offset"]
)
_OPS = st.sampled_from(["route", "play", "forget", "drop_room", "played", "start", "close"])


@st.composite
def _garbage(draw: st.DrawFn) -> bytes:
    """One framed message: mixing control JSON with fields of any shape, or binary blocks
    (clips, gains, sources) of any bytes, or a well-formed one naming rooms, calls and clips
    that do not exist."""
    kind = draw(st.sampled_from(["json", "binary", "valid"]))
    if kind == "json":
        body = {"op": draw(_OPS), **draw(st.dictionaries(_FIELDS, _JSON, max_size=5))}
        return p.frame(p.CONTROL, json.dumps(body).encode())
    if kind == "binary":
        which = draw(st.sampled_from([p.CLIP, p.GAINS, p.SOURCES, p.FRAMES]))
        return p.frame(which, draw(st.binary(max_size=200)))
    seats = draw(st.integers(1, 4))
    matrix = np.asarray(
        draw(
            st.lists(st.floats(-2, 2), min_size=seats * (seats + 1), max_size=seats * (seats + 1))
        ),
        np.float32,
    ).reshape(seats + 1, seats)
    small = st.integers(0, 6)
    return draw(
        st.sampled_from(
            [
                p.frame(p.GAINS, p.Gains(draw(small), matrix).encode()),
                p.frame(
                    p.CONTROL,
                    p.encode_control(
                        p.Route(
                            draw(small), draw(small), draw(small), draw(small), draw(st.booleans())
                        )
                    ),
                ),
                p.frame(
                    p.CONTROL,
                    p.encode_control(p.Play(draw(small), (p.PlayItem(1, draw(small), None),))),
                ),
                p.frame(p.CLIP, p.Clip(draw(small), np.ones(draw(small), np.int16)).encode()),
                p.frame(
                    p.SOURCES,
                    p.Block(
                        0,
                        np.array([p.source_id(draw(small), draw(small))], np.uint32),
                        np.ones((1, 160), np.int16),
                    ).encode(),
                ),
            ]
        )
    )


@settings(max_examples=60, deadline=None)
@given(st.lists(_garbage(), min_size=1, max_size=12))
def test_a_media_process_takes_any_mixing_input_and_still_mixes(messages: list[bytes]) -> None:
    """Whatever the control channel carries — fields of any shape, binary blocks of any bytes,
    routes to rooms and plays of clips that do not exist — the worker's loop only counts bad
    messages and goes on to the channel's end; its ticks then still mix every call."""

    async def run() -> MediaWorker:
        reader = asyncio.StreamReader()
        for message in messages:
            reader.feed_data(message)
        reader.feed_eof()
        worker = MediaWorker(CollectingWriter())  # type: ignore[arg-type]
        await worker.serve(reader)  # returns at the end of the channel; nothing else escapes
        for call in list(worker.mixing.lines):
            worker.mixing.frame(call, worker.mixing.lines[call], None)
        worker.end(1)
        return worker

    asyncio.run(run())


# -- the playlist and the rooms' copies ----------------------------------------------------------


def test_a_playlist_plays_back_to_back_goes_on_where_it_is_and_never_replays() -> None:
    playlist = Playlist()
    first, second = np.full(200, 1, np.int16), np.full(100, 2, np.int16)
    playlist.replace([(1, first, 0), (2, second, 0)])
    frame = playlist.next_frame()
    assert frame is not None and frame.tolist() == [1] * 160
    # A new prompt queued behind: the one playing goes on where it is (offset None).
    playlist.replace([(1, first, None), (2, second, None), (3, second, 0)])
    frame = playlist.next_frame()
    assert frame is not None and frame.tolist() == [1] * 40 + [2] * 100 + [2] * 20
    assert playlist.played == [1, 2]
    # A playlist that crossed the "played" report names a finished prompt: not played again.
    playlist.replace([(2, second, None), (3, second, None)])
    frame = playlist.next_frame()
    assert frame is not None and frame.tolist() == [2] * 80 + [0] * 80
    assert playlist.next_frame() is None
    playlist.replace([(4, first, 0)])
    playlist.replace([])  # a barge-in
    assert playlist.next_frame() is None


def _route(source: int, gain: float = 1.0) -> SimpleNamespace:
    return SimpleNamespace(source=source, gain=gain)


DAY: RoutingTable = {
    1: (_route(2), _route(3)),
    2: (_route(1), _route(3)),
    3: (_route(1), _route(2)),
    SPECTATORS: (_route(1), _route(2), _route(3)),
}
NIGHT: RoutingTable = {
    1: (_route(2),),  # the two wolves hear each other
    2: (_route(1),),
    3: (),  # the villager hears nobody
    SPECTATORS: (),
}


def _voice(level: int) -> np.ndarray:
    return np.full(160, level, np.int16)


def test_a_call_hears_only_its_own_row_of_its_own_room() -> None:
    """Two rooms copied in one media process: house 1 of room 1 speaks; at day its room-mates
    and the spectators hear it, at night only the other wolf; room 2 never does."""
    mixing = Mixing()
    mixing.gains(p.Gains(1, gain_matrix(DAY, 3)))
    mixing.gains(p.Gains(2, gain_matrix(DAY, 3)))
    calls = {
        10: p.Route(10, 1, 0, 1),  # room 1, house 1
        11: p.Route(11, 1, 1, 2),  # room 1, house 2
        12: p.Route(12, 1, 2, 3),  # room 1, house 3
        13: p.Route(13, 1, 3, None),  # room 1, a spectator
        20: p.Route(20, 2, 1, 2),  # room 2, house 2
    }
    for route in calls.values():
        mixing.route(route)

    def tick() -> dict[int, int]:
        mixing.heard(10, _voice(1000))
        heard = {}
        for call in calls:
            frame = mixing.frame(call, mixing.lines[call], None)
            heard[call] = 0 if frame is None else int(np.abs(frame).max())
        return heard

    assert tick() == {10: 0, 11: 1000, 12: 1000, 13: 1000, 20: 0}
    mixing.gains(p.Gains(1, gain_matrix(NIGHT, 3)))
    assert tick() == {10: 0, 11: 1000, 12: 0, 13: 0, 20: 0}
    with pytest.raises(p.ProtocolError):
        mixing.route(p.Route(14, 9, 0, 1))  # no such room: refused, not a silent default
    with pytest.raises(p.ProtocolError):
        mixing.route(p.Route(14, 1, 4, None))  # a row outside the room


def test_the_prompt_queue_hands_out_ready_prompts_and_takes_back_the_played() -> None:
    voice = SimpleNamespace()
    renders = SimpleNamespace(voice=voice, audio=lambda text, lang: np.full(10, 1, np.int16))
    queue = PromptQueue(voice, "de", renders=renders)  # type: ignore[arg-type]
    queue.say("menu", Priority.MENU)
    queue.say("live", Priority.MENU, refresh=lambda: "live")
    first = queue.upcoming()
    assert [u.text for u in first] == ["menu"]  # a live line waits until it is the head
    queue.finished(first[0])
    assert [u.text for u in queue.upcoming()] == ["live"]
    queue.interrupt()
    assert queue.upcoming() == [] and not queue.busy
    assert isinstance(Live("x", lambda: None), Live)


# -- a real media process ------------------------------------------------------------------------


class _Driver:
    """A line mixed in the media process: always in ``place``; plays ``prompt`` once."""

    def __init__(
        self, place: Callable[[], tuple[GameMixer | None, int | None, int | None]]
    ) -> None:
        self.place = place
        self.prompt: np.ndarray | None = None
        self.done: list[int] = []
        self._told = False

    def sync(self, endpoint: RemoteEndpoint) -> np.ndarray | None:
        mixer, row, source = self.place()
        endpoint.route(mixer, row, source, fed=False)
        if self.prompt is not None and not self._told:
            endpoint.play([(1, self.prompt, 0)])
            self._told = True
        return None

    def played(self, tags: Sequence[int]) -> None:
        self.done.extend(tags)


async def _until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


def _tone(freq: float, samples: int, start: int = 0) -> np.ndarray:
    n = np.arange(start, start + samples)
    return (8000 * np.sin(2 * np.pi * freq * n / 8000)).astype(np.int16)


async def _call(
    media: MediaProcesses, driver: _Driver
) -> tuple[RemoteEndpoint, UdpPeer, list[int]]:
    peer = await UdpPeer.open()
    endpoint = await media.open(
        "127.0.0.1", MediaParams(("127.0.0.1", peer.port), ULAW, 0, 101), _ignore, _ignore
    )
    endpoint.driver = driver
    endpoint.start()
    return endpoint, peer, []


def _ignore(_: object) -> None:
    """Audio or keys the test does not look at."""


async def _speak(peer: UdpPeer, port: int, freq: float, frames: int) -> None:
    """``frames`` RTP packets of a tone, one every 20 ms, from ``peer`` to ``port``."""
    for i in range(frames):
        payload = ULAW.encode(_tone(freq, 160, 160 * i))
        peer.send(RtpPacket(0, i, 160 * i, 77, payload).build(), ("127.0.0.1", port))
        await asyncio.sleep(0.02)


def _heard(peer: UdpPeer) -> np.ndarray:
    samples = []
    while not peer.queue.empty():
        samples.append(ULAW.decode(parse_rtp(peer.queue.get_nowait()[0]).payload))
    return np.concatenate(samples) if samples else np.zeros(0, np.int16)


async def test_callers_in_a_room_hear_each_other_in_the_media_process_and_no_other_room() -> None:
    """Anna and Bert are houses 1 and 2 of one game's room, Cora house 1 of another's: Anna's
    voice reaches Bert through the media process's copy of the room, and never Cora; once the
    routing changes (night: Bert hears nobody) the new gains cross and Bert hears nothing. And
    it is mixed there, not sent ahead by this process (which makes no frame for them)."""
    game, other = GameMixer(3), GameMixer(3)
    game.set_routing(DAY)
    other.set_routing(DAY)
    media = MediaProcesses(1)
    await media.start()
    try:
        anna, anna_peer, _ = await _call(media, _Driver(lambda: (game, 0, 1)))
        bert, bert_peer, _ = await _call(media, _Driver(lambda: (game, 1, 2)))
        cora, cora_peer, _ = await _call(media, _Driver(lambda: (other, 0, 1)))
        await _until(lambda: all(ep.place[0] is not None for ep in (anna, bert, cora)))
        await _speak(anna_peer, anna.local_port, 700.0, 40)
        bert_heard, cora_heard = _heard(bert_peer), _heard(cora_peer)
        frames = bert_heard[: len(bert_heard) // 160 * 160].reshape(-1, 160)
        loud = [frame for frame in frames if np.abs(frame).max() > 2000]
        assert len(loud) >= 20  # Anna's tone, most of its 40 frames
        assert abs(dominant_frequency(np.concatenate(loud)) - 700.0) < 20
        assert int(np.abs(cora_heard).max(initial=0)) < 50  # another room: nothing
        process = media.processes[0]
        await _until(lambda: process.counters.get("mixed_frames", 0) >= 20)

        game.set_routing(NIGHT | {2: ()})  # type: ignore[operator]
        await asyncio.sleep(0.1)
        _heard(bert_peer)
        await _speak(anna_peer, anna.local_port, 700.0, 20)
        assert int(np.abs(_heard(bert_peer)).max(initial=0)) < 50
    finally:
        for peer in (anna_peer, bert_peer, cora_peer):
            peer.close()
        await media.close()
    assert game.tees == [] and other.tees == []  # the copies are gone with their process


async def test_a_prompt_is_played_by_the_media_process_and_reported_played() -> None:
    media = MediaProcesses(1)
    await media.start()
    driver = _Driver(lambda: (None, None, None))
    driver.prompt = _tone(500.0, 4000)  # half a second
    try:
        _, peer, _ = await _call(media, driver)
        await _until(lambda: driver.done == [1])
        await asyncio.sleep(0.1)
        heard = _heard(peer)
        counters = media.processes[0].counters
    finally:
        peer.close()
        await media.close()
    loud = np.abs(heard) > 2000
    assert 3000 <= int(loud.sum()) <= 4100  # the whole prompt, once
    assert abs(dominant_frequency(heard[loud.argmax() : loud.argmax() + 3200]) - 500.0) < 20
    assert counters.get("prompt_frames", 0) >= 20


# -- the signalling side's driver of a line --------------------------------------------------------


class _Endpoint:
    """What a line's driver tells its media process, recorded."""

    def __init__(self) -> None:
        self.closed = False
        self.driver: object = None
        self.plays: list[list[tuple[int, int, int | None]]] = []
        self.routes: list[tuple[object, int | None, int | None, bool]] = []

    def play(self, items: Sequence[tuple[int, np.ndarray, int | None]]) -> None:
        self.plays.append([(tag, int(audio[0]), offset) for tag, audio, offset in items])

    def route(self, mixer: object, listener: int | None, source: int | None, fed: bool) -> None:
        self.routes.append((mixer, listener, source, fed))


async def test_the_driver_sends_the_prompt_queues_changes_and_keeps_its_rules() -> None:
    """A prompt queued is sent at once; one queued behind it is added while the first goes on
    where it is; an urgent prompt preempts (menus dropped); news cut by an urgent prompt is
    played again from its start, under a new tag; a barge-in stops; a played prompt leaves
    the queue and is not sent again."""
    from vollmond.phone.service import MixedElsewhere, Place  # noqa: PLC0415

    words = {"a": 1, "b": 2, "u": 3, "n": 4, "v": 5, "m": 6}
    audio = {text: np.full(400, level, np.int16) for text, level in words.items()}
    voice = SimpleNamespace()
    renders = SimpleNamespace(voice=voice, audio=lambda text, lang: audio[text])
    queue = PromptQueue(voice, "de", renders=renders)  # type: ignore[arg-type]
    session = SimpleNamespace(prompting=lambda busy: None)
    line = SimpleNamespace(session=session, call=SimpleNamespace(call_id="x"), last_prompt=0.0)
    line.frame_errors = 0
    service = SimpleNamespace(clock=lambda: 1.0, _place=lambda line, session: Place())
    driver = MixedElsewhere(service, line, queue)  # type: ignore[arg-type]
    endpoint = _Endpoint()
    endpoint.driver = driver

    def sync() -> None:
        assert driver.sync(endpoint) is None  # type: ignore[arg-type]

    sync()
    assert endpoint.plays == [] and endpoint.routes == [(None, None, None, False)]
    queue.say("a")
    await asyncio.sleep(0)  # told at once, not at the next tick
    assert endpoint.plays[-1] == [(1, 1, 0)]
    queue.say("b")
    await asyncio.sleep(0)
    assert endpoint.plays[-1] == [(1, 1, None), (2, 2, 0)]
    sync()
    assert len(endpoint.plays) == 2  # nothing changed: nothing sent
    queue.say("u", Priority.URGENT)  # menus are dropped for it
    await asyncio.sleep(0)
    assert endpoint.plays[-1] == [(3, 3, 0)]
    driver.played([3])
    assert not queue.busy
    sync()
    assert len(endpoint.plays) == 3  # the media process stopped by itself
    queue.say("n", Priority.NEWS)
    await asyncio.sleep(0)
    assert endpoint.plays[-1] == [(4, 4, 0)]
    queue.say("v", Priority.URGENT)  # news playing: cut, and heard again after it
    await asyncio.sleep(0)
    assert endpoint.plays[-1] == [(5, 5, 0), (6, 4, 0)]
    driver.played([5, 6])
    queue.say("m")
    await asyncio.sleep(0)
    assert endpoint.plays[-1] == [(7, 6, 0)]
    queue.interrupt()  # a key: barge-in
    await asyncio.sleep(0)
    assert endpoint.plays[-1] == []


class _Call:
    """A call as the hang-up sees it: hung up when (time.monotonic) it was."""

    call_id = "x"

    def __init__(self) -> None:
        self.hung_up: list[float] = []

    def hangup(self) -> None:
        self.hung_up.append(time.monotonic())


async def test_a_goodbye_is_heard_to_its_end_before_the_hang_up_after_a_media_stall() -> None:
    """The session asks to end the call with a goodbye queued: the BYE waits until the media
    process reported the goodbye played (and 0.3 s more), even when no tick came meanwhile —
    a media process that stalled for 0.5 s (a loaded machine) sends no cue, and a hang-up
    that went by the time since the last cue cut a CI run's goodbye."""
    from vollmond.phone.service import Line, MixedElsewhere, PhoneService  # noqa: PLC0415

    voice = SimpleNamespace()
    goodbye = np.full(400, 7, np.int16)
    renders = SimpleNamespace(voice=voice, audio=lambda text, lang: goodbye)
    queue = PromptQueue(voice, "de", renders=renders)  # type: ignore[arg-type]
    requested = asyncio.Event()
    session = SimpleNamespace(
        prompts=queue, hangup_requested=requested, game_id=None, prompting=lambda busy: None
    )
    service = PhoneService(SimpleNamespace(notices=None), lambda caller: session)  # type: ignore[arg-type]
    call = _Call()
    line = Line(call, session, "x")  # type: ignore[arg-type]
    service.lines[call] = line  # type: ignore[index]
    driver = MixedElsewhere(service, line, queue)
    endpoint = _Endpoint()
    endpoint.driver = driver
    hang_up = asyncio.create_task(service._hang_up_when(requested, line))
    queue.say("Auf Wiederhören!", Priority.URGENT)
    requested.set()
    for _ in range(5):  # the media process's cues: the goodbye is sent and begins to play
        driver.sync(endpoint)  # type: ignore[arg-type]
        await asyncio.sleep(0.02)
    assert endpoint.plays and endpoint.plays[-1][0][1] == 7
    await asyncio.sleep(0.5)  # the media process stalls: no cue, the goodbye not yet played
    assert call.hung_up == []
    played = time.monotonic()
    driver.played([endpoint.plays[-1][0][0]])  # its last frame went out
    assert not queue.busy
    await asyncio.wait_for(hang_up, 2.0)
    assert len(call.hung_up) == 1 and call.hung_up[0] - played >= 0.0


async def test_a_refused_real_time_priority_is_said_once_and_the_processes_run_ordinarily(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The priority is tried by default; where the system refuses it (no CAP_SYS_NICE), the
    media processes run as ordinary processes and one line says so, not one per process or
    restart."""
    from vollmond.phone.mediaproc import client  # noqa: PLC0415

    def refuse(pid: int, policy: int, param: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "sched_setscheduler", refuse)
    monkeypatch.setattr(client, "_refusal_told", False)
    media = MediaProcesses(2, priority=20)
    with caplog.at_level("WARNING", logger=client.__name__):
        await media.start()
    try:
        assert [proc.realtime for proc in media.processes] == [False, False]
        assert all(proc.alive for proc in media.processes)
        told = [r for r in caplog.records if "ordinary priority" in r.getMessage()]
        assert len(told) == 1
    finally:
        await media.close()


def test_a_recorded_room_keeps_its_length_over_ticks_the_media_process_skipped() -> None:
    """A recorded room is ticked here at each `A` block; a media process whose clock skipped
    ticks (a stall) sends none for them. The recording is ticked once for each of those too,
    so a six-second window stays six seconds of audio (a suite run under load recorded 4.92)."""
    process = MediaProcess(lambda _: None)
    mixer = GameMixer(3)
    recorded: list[np.ndarray] = []
    mixer.record(np.ones(3, np.float32), recorded.append)
    process._mirrors[id(mixer)] = _Mirror(room=1, mixer=mixer)
    nothing = (np.zeros(0, np.uint32), np.zeros((0, 160), np.int16))
    for index in (100, 101, 102, 110, 111):  # 103..109 skipped by the media process's clock
        mixer.push(1, np.full(160, 1000, np.int16))
        process._tick(p.Block(index, *nothing, 0.0))
    assert len(recorded) == 12  # ticks 100 to 111
    assert [int(np.abs(f).max()) > 0 for f in recorded].count(True) == 5  # the pushed frames
