"""The media process's batched tick: every call's frame made at once (rooms one index each,
prompts over their rooms in one overlay, the clock's headers and sends for all calls) gives
each call exactly the samples the per-call path gives it, and never another row's audio."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.phone.helpers import CollectingWriter, UdpPeer
from vollmond.phone.g711 import ULAW
from vollmond.phone.media import MediaParams
from vollmond.phone.mediaproc import protocol as p
from vollmond.phone.mediaproc.mixing import Mixing, MixPlan
from vollmond.phone.mediaproc.worker import MediaWorker
from vollmond.phone.rtp import RtpClock, parse_rtp

CALLS = 8
CLIPS = {1: 100, 2: 1000, 3: 400}


def _clips(seed: int) -> dict[int, np.ndarray]:
    rng = np.random.default_rng(seed)
    clips = {
        clip: rng.integers(-32768, 32768, size, dtype=np.int16) for clip, size in CLIPS.items()
    }
    clips[3][:200] = 0  # a silent start: the first audible frame comes later
    clips[2][::7] = -32768  # full scale: a prompt over silence is not clipped to -32767
    return clips


_ROOM = st.integers(0, 2)
_GAINS = st.tuples(
    st.just("gains"),
    _ROOM,
    st.integers(1, 4),
    st.lists(st.sampled_from([0.0, 0.3, 1.0, 1.5]), min_size=20, max_size=20),
)
_ROUTE = st.tuples(
    st.just("route"),
    st.integers(0, CALLS - 1),
    st.none() | _ROOM,
    st.none() | st.integers(-1, 4),
    st.none() | st.integers(1, 4),
    st.booleans(),
)
_PLAY = st.tuples(
    st.just("play"),
    st.integers(0, CALLS - 1),
    st.lists(
        st.tuples(st.integers(1, 6), st.sampled_from([1, 2, 3, 9]), st.sampled_from([None, 0, 50])),
        max_size=3,
    ),
)
_OTHER = st.tuples(st.sampled_from(["drop", "forget"]), st.integers(0, CALLS - 1))
_ORDER = st.permutations(list(range(CALLS))).flatmap(
    lambda calls: st.integers(CALLS // 2, CALLS).map(lambda n: calls[:n])
)
_REORDER = st.tuples(st.just("order"), _ORDER)  # calls started or ended: a new clock order
_TICK = st.tuples(
    st.just("tick"),
    st.integers(1, 8),  # ticks in a row
    st.lists(st.integers(0, CALLS - 1), min_size=2, max_size=2 * CALLS),  # who speaks (twice)
    st.lists(st.integers(0, CALLS - 1), max_size=3, unique=True),  # fed frames
    st.integers(0, 2**16),
)
_STEPS = st.lists(
    st.one_of(_GAINS, _ROUTE, _PLAY, _OTHER, _REORDER, _TICK, _TICK, _TICK), max_size=30
)


@st.composite
def _setup(draw: st.DrawFn) -> list[tuple[Any, ...]]:
    """Three rooms made, every call routed into one (a row and a house of it, mostly), some
    calls playing prompts: the steps that the random ones then change."""
    steps: list[tuple[Any, ...]] = []
    seats = [draw(st.integers(1, 4)) for _ in range(3)]
    for room, size in enumerate(seats):
        steps.append(("gains", room, size, draw(_GAINS)[3]))
    for call in range(CALLS):
        room = draw(_ROOM)
        listener = draw(st.integers(0, seats[room]))
        source = draw(st.none() | st.integers(1, seats[room]))
        steps.append(
            ("route", call, room, listener, source, draw(st.sampled_from([False] * 5 + [True])))
        )
    steps.extend(draw(st.lists(_PLAY, max_size=4)))
    steps.append(draw(_REORDER))
    return steps


@dataclass
class _Twin:
    """The per-call path (``old``) and the batched one (``new``), told the same."""

    old: Mixing
    new: Mixing
    plan: MixPlan | None = None
    order: tuple[int, ...] = ()

    def both(self, name: str, *args: object) -> None:
        outcomes: list[str | None] = []
        for mixing in (self.old, self.new):
            try:
                getattr(mixing, name)(*args)
                outcomes.append(None)
            except p.ProtocolError as exc:
                outcomes.append(str(exc))
        assert outcomes[0] == outcomes[1]

    def gains(self, step: tuple[Any, ...]) -> None:
        _, room, seats, gains = step
        matrix = np.asarray(gains[: (seats + 1) * seats], np.float32)
        self.both("gains", p.Gains(room, matrix.reshape(seats + 1, seats)))

    def tick(self, order: list[int], spoke: list[int], fed_calls: list[int], seed: int) -> None:
        rng = np.random.default_rng(seed)
        for call in spoke:
            voice = rng.integers(-30000, 30000, 160).astype(np.int16)
            self.old.heard(call, voice)
            self.new.heard(call, voice)
        samples = rng.integers(-30000, 30000, (len(fed_calls), 160)).astype(np.int16)
        fed = {call: row for row, call in enumerate(fed_calls)}
        expected = np.zeros((len(order), 160), np.int16)
        driven: list[tuple[int, int]] = []
        for row, call in enumerate(order):
            line = self.old.lines.get(call)
            if line is None or not line.driven:
                continue
            driven.append((row, call))
            frame = self.old.frame(call, line, samples[fed[call]] if call in fed else None)
            if frame is not None:
                expected[row] = frame
        # The worker's cache: a plan is made again only for a new order or mixing version.
        if self.plan is None or self.plan.version != self.new.version or self.order != tuple(order):
            self.plan, self.order = self.new.plan(driven), tuple(order)
        out = np.full((len(order), 160), 12345, np.int16)  # the last tick's rows: overwritten
        self.new.fill(self.plan, fed, samples, out)
        for row, _ in driven:
            assert out[row].tolist() == expected[row].tolist()
        for name in ("mixed_frames", "prompt_frames", "unknown_clips"):
            assert getattr(self.old, name) == getattr(self.new, name)
        assert [c for c, _ in self.old.starts] == [c for c, _ in self.new.starts]
        assert self.old.take_played() == self.new.take_played()


@settings(max_examples=300, deadline=None)
@given(setup=_setup(), steps=_STEPS, clip_seed=st.integers(0, 2**16))
def test_the_batched_tick_gives_every_call_the_samples_of_the_per_call_path(
    setup: list[tuple[Any, ...]], steps: list[tuple[Any, ...]], clip_seed: int
) -> None:
    """Random rooms (created, re-created with other sizes, dropped), gain matrices (day, night,
    silence), routes (rooms that do not exist, rows outside the room, muted, spectating, fed),
    prompts (queued, barged in, forgotten clips, a silent start, samples at full scale), voices
    and fed frames, calls started and ended in any clock order (lines new to a room first):
    tick by tick the batched path writes into each driven call's row exactly the frame the
    per-call path returns, with the same counters, prompt starts and played reports — and its
    plan, made again only when the order or the mixing's version changed, never goes stale."""
    twin = _Twin(Mixing(), Mixing())
    twin.old.clips = twin.new.clips = _clips(clip_seed)
    order: list[int] = []
    for step in [*setup, *steps]:
        match step:
            case ("gains", *_):
                twin.gains(step)
            case ("route", call, room, listener, source, fed):
                twin.both("route", p.Route(call, room, listener, source, fed))
            case ("play", call, items):
                message = p.Play(call, tuple(p.PlayItem(*item) for item in items))
                twin.both("play", message)
            case ("drop", room):
                twin.both("drop_room", room)
            case ("forget", call):
                twin.both("forget_call", call)
            case ("order", new_order):
                order = new_order
            case ("tick", ticks, spoke, fed, seed):
                for tick in range(ticks):
                    twin.tick(order, spoke, fed, seed + tick)


_DAY3 = [1.0] * 20  # everyone hears everyone (the row's own house too: a plain test room)


def test_a_room_made_again_with_another_size_is_the_one_pulled() -> None:
    """The plan names the room's mixer: when the room is made again (another number of seats)
    the next tick pulls the new one, where the voices now go, as the per-call path does."""
    twin = _Twin(Mixing(), Mixing())
    twin.gains(("gains", 0, 2, _DAY3))
    for call in range(3):
        twin.both("route", p.Route(call, 0, call, call + 1 if call < 2 else None))
    for seed in range(3):
        twin.tick([0, 1, 2], [0, 1], [], seed)
    twin.gains(("gains", 0, 3, _DAY3))  # the lines' places stay, the room is new
    for seed in range(3, 6):
        twin.tick([0, 1, 2], [0, 1], [], seed)
    assert twin.new.mixed_frames > 9  # the new room was heard


def test_a_line_new_to_a_room_that_comes_first_hears_the_last_mix_on_both_paths() -> None:
    """Lines 1 and 2 are in the room; line 0, first in the clock's order, joins it: it hears
    each tick's mix one tick late (the mixer's pull rule), on the batched path as per call."""
    twin = _Twin(Mixing(), Mixing())
    twin.gains(("gains", 0, 2, _DAY3))
    twin.both("route", p.Route(1, 0, 0, 1))
    twin.both("route", p.Route(2, 0, 1, 2))
    twin.both("route", p.Route(0, None, None, None))
    for seed in range(3):
        twin.tick([0, 1, 2], [1, 2], [], seed)
    twin.both("route", p.Route(0, 0, 2, None))  # a spectator now
    for seed in range(3, 8):
        twin.tick([0, 1, 2], [1, 2], [], seed)
    assert twin.plan is not None and twin.plan.rooms[0].pullers == [0, 1, 2]


def test_a_call_hears_exactly_its_own_row_of_its_own_room() -> None:
    """Four rooms of three seats; in each, every row (houses and spectators) hears one house
    only, and every house speaks its own level: a call's batched frame is its own row's level,
    whatever the clock's order of the 16 calls, never a neighbour's row or another room's."""
    mixing = Mixing()
    identity = np.zeros((4, 3), np.float32)
    identity[0, 1] = identity[1, 2] = identity[2, 0] = identity[3, 1] = 1.0  # row r hears one
    hears = {0: 2, 1: 3, 2: 1, 3: 2}  # the house row r hears
    calls = {}
    for room in range(4):
        mixing.gains(p.Gains(room, identity))
        for row in range(4):
            call = room * 4 + row
            calls[call] = (room, row)
            mixing.route(p.Route(call, room, row, row + 1 if row < 3 else None))
    order = list(np.random.default_rng(7).permutation(len(calls)).tolist())
    plan = mixing.plan([(row, call) for row, call in enumerate(order)])
    for _ in range(5):
        for call, (room, row) in calls.items():
            if row < 3:
                mixing.heard(call, np.full(160, 1000 * room + 100 * (row + 1), np.int16))
        out = np.zeros((len(order), 160), np.int16)
        mixing.fill(plan, {}, np.zeros((0, 160), np.int16), out)
        for index, call in enumerate(order):
            room, row = calls[call]
            assert set(out[index].tolist()) == {1000 * room + 100 * hears[row]}


# -- the worker and its clock on real sockets ----------------------------------------------------


def _told(sent: list[bytes]) -> tuple[list[bytes], list[p.Played]]:
    """The A blocks a worker sent (payloads), and its played reports."""
    blocks: list[bytes] = []
    played: list[p.Played] = []
    for message in sent:
        _, kind = p.read_header(message[: p.HEADER.size])
        payload = message[p.HEADER.size :]
        if kind == p.AUDIO:
            blocks.append(payload)
        elif kind == p.CONTROL and isinstance(control := p.decode_control(payload), p.Played):
            played.append(control)
    return blocks, played


async def _stopped(clock: RtpClock) -> None:
    """A media clock that does not tick by itself."""
    await asyncio.Event().wait()


async def _worker(peer: UdpPeer, batched: bool, clips: dict[int, np.ndarray]) -> MediaWorker:
    worker = MediaWorker(CollectingWriter())  # type: ignore[arg-type]
    worker.ticker._run = _stopped  # type: ignore[method-assign]  # ticked by hand below
    if not batched:  # the per-call path: each endpoint's own source and audio callback
        worker.ticker.batch_source = worker.ticker.batch_sink = None
    worker.mixing.clips.update(clips)
    day = np.ones((4, 3), np.float32) - np.eye(4, 3, dtype=np.float32)
    worker.mixing.gains(p.Gains(1, day))
    params = MediaParams(("127.0.0.1", peer.port), ULAW, 0, 101)
    for call in range(6):
        await worker.handle(p.Open(call, "127.0.0.1", params))
        await worker.handle(p.Start(call))
    worker.ticker._clock = RtpClock(start=0.0)  # the same deadlines in both workers
    for call in range(4):  # houses 1..3 and a spectator of room 1; call 4 in a menu
        await worker.handle(p.Route(call, 1, call, call + 1 if call < 3 else None))
    await worker.handle(p.Route(4, None, None, None))
    await worker.handle(p.Play(3, (p.PlayItem(1, 1, 0),)))
    await worker.handle(p.Play(4, (p.PlayItem(2, 2, 0),)))
    return worker  # call 5 is driven by nobody: its frames come in F blocks


async def test_the_worker_sends_every_call_the_same_audio_batched_and_per_call() -> None:
    """Two media workers told the same (a room of three houses and a spectator, a prompt over
    the room, a prompt in a menu, a call fed from F blocks and one held when its block is
    missing), each call's voice received before each tick: the batched clock sends each call
    the payloads the per-call clock sends, and the same A blocks go back."""
    clips = _clips(3)
    peers = [await UdpPeer.open() for _ in range(2)]
    workers = [await _worker(peers[0], True, clips), await _worker(peers[1], False, clips)]
    rng = np.random.default_rng(5)
    try:
        for index in range(30):
            voices = ULAW.encode(rng.integers(-20000, 20000, 6 * 160).astype(np.int16))
            fed = rng.integers(-9000, 9000, (1, 160)).astype(np.int16)
            for worker in workers:
                if index % 7 != 3:  # now and then the F block is missing: call 5 held
                    ids = np.asarray([5], np.uint32)
                    worker.add_block(p.Block(index + 1, ids, fed))
                for call, endpoint in worker.endpoints.items():
                    worker.ticker.received(endpoint, voices[call * 160 : (call + 1) * 160])
                worker.ticker.tick(index + 1)
            await asyncio.sleep(0.002)
        await asyncio.sleep(0.05)
        heard = []
        for worker, peer in zip(workers, peers, strict=True):
            ports = {worker.endpoints[call].local_port: call for call in worker.endpoints}
            by_call: dict[int, list[bytes]] = {call: [] for call in worker.endpoints}
            while not peer.queue.empty():
                data, address = peer.queue.get_nowait()
                by_call[ports[address[1]]].append(parse_rtp(data).payload)
            heard.append(by_call)
        assert heard[0] == heard[1]
        assert [len(heard[0][call]) for call in range(5)] == [30] * 5
        assert 20 <= len(heard[0][5]) < 30  # held ticks' frames not sent (no late block here)
        assert len({b"".join(frames) for frames in heard[0].values()}) == 6
        assert workers[0].held == workers[1].held > 0
        assert workers[0].clock_counters() == workers[1].clock_counters()
        told = [_told(w._writer.sent) for w in workers]  # type: ignore[attr-defined]
        assert told[0] == told[1]  # the A blocks byte for byte, the played reports
        assert len(told[0][0]) == 30 and told[0][1]
    finally:
        for worker in workers:
            worker.close()
        for peer in peers:
            peer.close()


@pytest.mark.parametrize("batched", [True, False])
async def test_a_frame_heard_between_ticks_is_listed_before_the_ticks_batch(batched: bool) -> None:
    """A frame handed on by itself (``RtpEndpoint._audio``, outside the clock's batch) came
    before the tick: the A block lists it before the frames the tick decodes, on both paths."""
    peer = await UdpPeer.open()
    worker = await _worker(peer, batched, _clips(1))
    try:
        worker._heard_from(2, np.full(160, 500, np.int16))
        for call in (0, 1):
            endpoint = worker.endpoints[call]
            worker.ticker.received(endpoint, ULAW.encode(np.full(160, 100 * (call + 1), np.int16)))
        worker.ticker.tick(1)
        blocks, _ = _told(worker._writer.sent)  # type: ignore[attr-defined]
        assert p.Block.decode(blocks[-1]).ids.tolist() == [2, 0, 1]
    finally:
        worker.close()
        peer.close()
