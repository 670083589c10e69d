"""The voice relay (vollmond/voice/relay.py) between two sharded hubs on one bus — the local
bus and the real NATS server (the `bus` fixture of test_shards) — and one store.

Lines land on the follower w1 while the game runs on w0: each line's voice reaches the game's
room on w0 and the mix w0's routing table gives that seat comes back, so a remote caller hears
exactly the seats a local line of that seat would (at night the wolves' room stays closed to a
villager); a line whose owner says the game does not run there, or falls silent, looks for the
owner again; the wire format and the jitter buffer keep their promises.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from vollmond.engine.ruleset import SPECTATORS, get_ruleset
from vollmond.service.shards.localbus import Broker
from vollmond.service.shards.sharded_hub import ShardedHub
from vollmond.store import Sessions, open_store
from vollmond.voice.frames import FRAME_SAMPLES, Int16Array
from vollmond.voice.relay import (
    CALM_TICKS,
    DOWN,
    HEARD,
    MAX_PREFILL,
    NOT_OWNER,
    PREFILL,
    UP,
    Bus,
    Record,
    RelayedLine,
    VoiceRelay,
    decode,
    encode,
)
from vollmond.voice.rooms import Room, VoiceRooms

from .test_lease_ownership import TTL_S as LEASE_TTL_S
from .test_lease_ownership import Clock as LeaseClock
from .test_lease_ownership import lease_hubs
from .test_recording_notice import to_day
from .test_shards import Connect, OneOwner, _evil_seat, open_bus

STANDARD = get_ruleset("standard")


@pytest.fixture(params=["local", "nats"])
async def bus(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Connect]:
    """Every test on the local bus of `--workers` and on the real NATS server."""
    async with open_bus(request.param, tmp_path) as connect:
        yield connect


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Sessions]:
    async with open_store(f"sqlite+aiosqlite:///{tmp_path / 'db'}") as sessions:
        yield sessions


def voice(seat: int) -> Int16Array:
    """A frame only house `seat` sends (a level per seat, so a mix names its sources)."""
    return np.full(FRAME_SAMPLES, 500 * seat, dtype=np.int16)


async def talk(
    lines: dict[int, RelayedLine], speaker: int, seconds: float
) -> dict[int, list[Int16Array | None]]:
    """`speaker` talks for `seconds` while every line pulls its audio, as the media clock of
    the landing process does (every 20 ms); what each line heard."""
    heard: dict[int, list[Int16Array | None]] = {s: [] for s in lines}
    start = time.monotonic()
    k = 0
    while time.monotonic() - start < seconds:
        k += 1
        lines[speaker].push(speaker, voice(speaker))
        for seat, line in lines.items():
            heard[seat].append(line.pull())
        await asyncio.sleep(max(0.0, start + k * 0.02 - time.monotonic()))
    return heard


def hears(frames: list[Int16Array | None]) -> bool:
    return any(f is not None and bool(np.any(f)) for f in frames)


async def test_a_remote_line_hears_what_the_owners_routing_gives_its_seat(
    store: Sessions, bus: Connect
) -> None:
    owner_bus, landing_bus = await bus(), await bus()
    owner = ShardedHub(store, node="w0", ownership=OneOwner("w0"), transport=owner_bus)
    landing = ShardedHub(store, node="w1", ownership=OneOwner("w0"), transport=landing_bus)
    await owner.serve_calls()
    await landing.serve_calls()
    owner_rooms, landing_rooms = VoiceRooms(owner), VoiceRooms(landing)
    try:
        relay = await landing.start_voice_relay(landing_rooms)
        hosting = await owner.start_voice_relay(owner_rooms)
        assert relay is not None and hosting is not None
        options = STANDARD.decode_options({"players": 4, "world": "werwolf"})
        game = (await landing.found(options, private=False, host_account_id=None)).game.id
        for name in "ABCD":  # the last join starts the game (at night), at the owner
            await landing.join(game, account_id=None, name=name)
        assert game in owner.actors and game not in landing.actors
        assert landing_rooms.room_for(game) is None  # no room here: the relay serves

        lines = {s: relay.link(("call", s), game, s) for s in range(1, 5)}
        wolf = _evil_seat(owner.actors[game])
        night = await _who_hears_whom(lines, owner_rooms, game)
        assert not any(night[(wolf, v)] for v in range(1, 5) if v != wolf)  # the secret holds
        await to_day(owner, game)
        day = await _who_hears_whom(lines, owner_rooms, game)
        assert sum(day.values()) >= 6  # the living hear each other by day (one may be dead)
        assert {(h.node, h.game_id) for h in hosting.hosted.values()} == {("w1", game)}
        assert all(line.owner == "w0" and line.moves == 0 for line in lines.values())
        # What operators read of both sides (`/metrics`, the console's node).
        landing_stats, owner_stats = landing.node_stats().relay, owner.node_stats().relay
        assert landing_stats is not None and owner_stats is not None
        assert (landing_stats.relayed_lines, landing_stats.hosted_lines) == (4, 0)
        assert (owner_stats.relayed_lines, owner_stats.hosted_lines) == (0, 4)
        gaps = landing_stats.underruns

        # A line that ends is dropped by the owner at once, and the room with its last line.
        for seat in range(1, 5):
            relay.unlink(("call", seat))
        await landing_bus.flush()
        await owner_bus.flush()
        assert not hosting.hosted
        assert game not in owner_rooms.rooms
        ended = landing.node_stats().relay
        assert ended is not None and ended.relayed_lines == 0
        assert ended.underruns >= gaps  # the ended lines' counters stay in the relay's
    finally:
        owner_rooms.close()
        landing_rooms.close()
        await landing.close()
        await owner.close()


async def _who_hears_whom(
    lines: dict[int, RelayedLine], rooms: VoiceRooms, game: str
) -> dict[tuple[int, int], bool]:
    """Each seat talks in turn; every remote line must hear it exactly when the owner's
    routing table (the gain matrix of the game's room) routes it to that seat, at its gain,
    and is told that seat spoke exactly then (HEARD)."""
    audible: dict[tuple[int, int], bool] = {}
    for speaker in lines:
        heard = await talk(lines, speaker, 0.3)
        room = rooms.room_for(game)
        assert room is not None
        gains = room.mixer.gains
        for listener, line in lines.items():
            should = bool(gains[listener - 1, speaker - 1] != 0.0)
            audible[(speaker, listener)] = should
            assert hears(heard[listener]) is should, (speaker, listener)
            # What a relayed browser's speaking indicator is told: that seat, exactly then.
            assert line.take_heard() == ({speaker} if should else set())
            if should:  # the seat's own level, at the table's gain
                levels = {int(f[0]) for f in heard[listener] if f is not None and f.any()}
                assert levels == {int(500 * speaker * float(gains[listener - 1, speaker - 1]))}
        await _drain(lines)
    return audible


async def _drain(lines: dict[int, RelayedLine]) -> None:
    """Pull until every line had silence for 3 ticks (the last frames are through)."""
    quiet, deadline = 0, time.monotonic() + 2.0
    while quiet < 3 and time.monotonic() < deadline:
        heard = [line.pull() for line in lines.values()]
        quiet = 0 if any(f is not None and f.any() for f in heard) else quiet + 1
        await asyncio.sleep(0.02)
    assert quiet == 3
    for line in lines.values():
        line.take_heard()  # the last talker's, heard while draining


class Owners:
    """A game's owner as the landing process believes it, and what it was told to forget."""

    def __init__(self, answers: list[str]) -> None:
        self.answers = answers
        self.forgotten = 0

    def owner_of(self, game_id: str) -> str | None:
        return self.answers[min(self.forgotten, len(self.answers) - 1)]

    def forget(self, game_id: str) -> None:
        self.forgotten += 1


async def _relay_pair(
    store: Sessions, bus: Connect, owners: Owners
) -> tuple[ShardedHub, VoiceRooms, VoiceRelay, VoiceRelay, str, Callable[[], Any]]:
    """The game's owner w0 hosting, a node w2 that does not run it, and a landing relay w1
    that believes `owners`."""
    owner = ShardedHub(store, node="w0", ownership=OneOwner("w0"), transport=await bus())
    await owner.serve_calls()
    rooms = VoiceRooms(owner)
    hosting = await owner.start_voice_relay(rooms)
    assert hosting is not None
    other = _landing("w2", await bus(), lambda _: "w0")
    await other.start()
    landing = _landing("w1", await bus(), owners.owner_of, owners.forget)
    await landing.start()
    options = STANDARD.decode_options({"players": 4, "world": "werwolf"})
    game = (await owner.found(options, private=False, host_account_id=None)).game.id
    for name in "ABCD":
        await owner.join(game, account_id=None, name=name)

    async def close() -> None:
        await landing.close()
        await other.close()
        rooms.close()
        await owner.close()
        await landing.bus.close()  # type: ignore[attr-defined]
        await other.bus.close()  # type: ignore[attr-defined]

    return owner, rooms, hosting, landing, game, close


class owner_of_nothing:  # noqa: N801 - a stand-in hub with no games
    def __init__(self) -> None:
        self.actors: dict[str, Any] = {}


async def test_a_line_sent_to_a_node_without_the_game_moves_to_its_owner(
    store: Sessions, bus: Connect
) -> None:
    owners = Owners(["w2", "w0"])  # first a stale answer, then the owner
    _, rooms, hosting, landing, game, close = await _relay_pair(store, bus, owners)
    try:
        listener = landing.link("call", game, SPECTATORS)
        speaker = landing.link("other", game, 1)
        started = time.monotonic()
        while len(hosting.hosted) < 2 and time.monotonic() - started < 3.0:
            speaker.push(1, voice(1))
            listener.pull()
            speaker.pull()
            await asyncio.sleep(0.02)
        moved_after = time.monotonic() - started
        assert owners.forgotten >= 1 and speaker.owner == "w0" and speaker.moves == 1
        assert moved_after < 0.5  # told at once by w2, not after OWNER_SILENT_S
        assert {h.line for h in hosting.hosted.values()} == {listener.id, speaker.id}
        room = rooms.room_for(game)
        assert room is not None
        heard = await talk({1: speaker}, 1, 0.4)
        assert hears(heard[1]) is bool(room.mixer.gains[0, 0] != 0.0)
    finally:
        await close()


async def test_an_owner_that_says_no_is_asked_again_only_after_a_while(
    store: Sessions, bus: Connect
) -> None:
    """The lookup keeps naming a process without the game (it ended there, and the hash
    still names it): the line asks it once per OWNER_CHECK_S, not at every tick."""
    owners = Owners(["w2"])
    _, _, _, landing, game, close = await _relay_pair(store, bus, owners)
    try:
        line = landing.link("call", game, 1)
        started = time.monotonic()
        moves = []
        while time.monotonic() - started < 1.5:
            line.push(1, voice(1))
            line.pull()
            moves.append((time.monotonic() - started, line.moves))
            await asyncio.sleep(0.02)
        assert max(m for t, m in moves if t < 0.9) == 1  # refused once, not asked again
        assert line.moves == 2  # asked again after OWNER_CHECK_S, refused again
        assert owners.forgotten == 2
    finally:
        await close()


async def test_a_silent_owner_is_looked_up_again(store: Sessions, bus: Connect) -> None:
    owners = Owners(["w0"])
    _, _, hosting, landing, game, close = await _relay_pair(store, bus, owners)
    try:
        line = landing.link("call", game, 1)
        for _ in range(10):
            line.push(1, voice(1))
            line.pull()
            await asyncio.sleep(0.02)
        assert hosting.hosted and line.owner == "w0" and owners.forgotten == 0
        await hosting.close()  # the owner dies: nothing answers any more
        silent = time.monotonic()
        while owners.forgotten == 0 and time.monotonic() - silent < 3.0:
            line.push(1, voice(1))
            line.pull()
            await asyncio.sleep(0.02)
        assert owners.forgotten == 1
        assert 0.9 < time.monotonic() - silent < 1.6  # OWNER_SILENT_S
    finally:
        await close()


def test_messages_carry_batches_of_records() -> None:
    pcm = voice(3).tobytes()
    records = [
        Record(UP, 7, "g1", 3, 3, 41, pcm),
        Record(DOWN, 8, "g2", SPECTATORS, 0, 42, b""),
        Record(NOT_OWNER, 2**32 - 1, "g3", None),
        Record(HEARD, 8, "g2", None, 0, 42, bytes([1, 200])),
    ]
    assert decode(encode("w7", records)) == ("w7", records)
    with pytest.raises(ValueError, match="size"):
        decode(encode("w7", [Record(UP, 1, "g", 1, 1, 1, b"xx")]))


async def test_relayed_lines_follow_their_game_to_the_node_that_took_it_over(
    store: Sessions, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three sharded hubs with leases on the local bus: a owns the game, c has four relayed
    lines in it; a goes away without giving its lease back; once the lease expired b takes the
    game over (resumed from its log). c's lines hear nothing from a, look the owner up again,
    find b, and b's room serves them as a's did (its routing, by day)."""
    clock = LeaseClock()
    broker = Broker(str(tmp_path / "bus.sock"))
    await broker.start()
    hubs = await lease_hubs(store, broker, clock, "abc", LEASE_TTL_S)
    a, b, c = hubs
    rooms = [VoiceRooms(hub) for hub in hubs]
    try:
        for hub, hub_rooms in zip(hubs, rooms, strict=True):
            assert await hub.start_voice_relay(hub_rooms) is not None
        options = STANDARD.decode_options({"players": 4, "world": "werwolf"})
        game = (await a.found(options, private=False, host_account_id=None)).game.id
        for name in "ABCD":
            await a.join(game, account_id=None, name=name)
        assert game in a.actors
        relay = c.voice_relay
        assert relay is not None
        lines = {s: relay.link(("call", s), game, s) for s in range(1, 5)}
        await _until_owner(lines, "a")
        await _who_hears_whom(lines, rooms[0], game)  # the night, through a

        await a.close()  # gone, its lease not given back
        clock.advance(LEASE_TTL_S)
        resume = b._resume
        taking_up: list[bool] = []

        async def resuming(stored: Any) -> bool:
            taking_up.append(b.taking_up(game))  # b's relay does not send a line away now
            return await resume(stored)

        monkeypatch.setattr(b, "_resume", resuming)
        assert await b.running_actor(game) is not None and game in b.actors  # b took it over
        assert taking_up == [True] and not b.taking_up(game)
        started = time.monotonic()
        await _until_owner(lines, "b")
        moved_after = time.monotonic() - started
        assert all(line.moves == 1 for line in lines.values())
        await to_day(b, game)
        day = await _who_hears_whom(lines, rooms[1], game)  # the day, through b
        assert sum(day.values()) >= 6
        # a went silent at its close; the lines looked again after OWNER_SILENT_S of silence, or
        # at their next OWNER_CHECK_S (the takeover's notice made c forget the cached owner).
        assert moved_after < 2.0, moved_after
    finally:
        for hub_rooms in rooms:
            hub_rooms.close()
        for hub in (b, c):
            await hub.close()
        await broker.close()


async def _until_owner(lines: dict[int, RelayedLine], owner: str) -> None:
    """Keep the lines' clock going until every line talks to `owner` and hears it."""
    deadline = time.monotonic() + 5.0
    while not all(line.owner == owner and line.waiting_since is None for line in lines.values()):
        assert time.monotonic() < deadline, {s: line.owner for s, line in lines.items()}
        for line in lines.values():
            line.pull()
        await asyncio.sleep(0.02)


def _landing(
    node: str,
    bus: Bus,
    owner_of: Callable[[str], str | None],
    forget: Callable[[str], None] = lambda _: None,
    *,
    clock: Callable[[], float] = time.monotonic,
) -> VoiceRelay:
    """A relay on a node that runs no game: its lines land here and are hosted elsewhere."""
    return VoiceRelay(node, bus, VoiceRooms(owner_of_nothing()), owner_of, forget, clock=clock)


async def _started(*relays: VoiceRelay) -> None:
    for relay in relays:
        await relay.start()


async def _closed(*relays: VoiceRelay) -> None:
    """Close every relay, started or not (closing an unstarted relay does nothing)."""
    for relay in relays:
        await relay.close()


class HeldBus:
    """The two processes' bus, in the test's hand: messages wait until delivered, so a
    process that stalls (its messages unread meanwhile) is played exactly."""

    def __init__(self) -> None:
        self.handlers: dict[str, Callable[[Any], None]] = {}
        self.waiting: list[tuple[str, bytes]] = []

    def publish(self, subject: str, data: bytes) -> None:
        self.waiting.append((subject, data))

    async def subscribe(self, subject: str, handler: Callable[[Any], None]) -> None:
        self.handlers[subject] = handler

    def deliver(self, held: str | None = None) -> None:
        """Hand every waiting message to its reader (and their answers), but those to
        `held`: that process does not read now. A message to a process without a reader
        (one that died) is lost."""
        kept: list[tuple[str, bytes]] = []
        while self.waiting:
            subject, data = self.waiting.pop(0)
            if subject == held:
                kept.append((subject, data))
            elif (handler := self.handlers.get(subject)) is not None:
                handler(Message(data))
        self.waiting = kept


class Message:
    def __init__(self, data: bytes) -> None:
        self.data = data


class StepClock:
    """Both processes' monotonic clock, one media tick (20 ms) at a time."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def _four_seats_by_day(hub: ShardedHub) -> str:
    """A public standard round of four on `hub`, at its first day."""
    options = STANDARD.decode_options({"players": 4, "world": "werwolf"})
    game = (await hub.found(options, private=False, host_account_id=None)).game.id
    for name in "ABCD":
        await hub.join(game, account_id=None, name=name)
    await to_day(hub, game)
    return game


def _hears_another(room: Room) -> tuple[int, int]:
    """A house (listener) that hears another (speaker) in the room's routing now."""
    gains = room.mixer.gains
    return next((h, s) for h in range(1, 5) for s in range(1, 5) if h != s and gains[h - 1, s - 1])


def _ticks_of(
    clock: StepClock, bus: HeldBus, room: Room, speaker: int, lines: dict[str, RelayedLine]
) -> Callable[[str | None], dict[str, bool]]:
    """One media tick at a time: the owner's local caller `speaker` talks, each relayed line
    pulls, the bus delivers (but what is `held`, a stalled process's); whether each line heard
    anything."""

    def tick(held: str | None) -> dict[str, bool]:
        clock.now += 0.02
        room.push(speaker, voice(speaker))
        frames = {name: line.pull() for name, line in lines.items()}
        bus.deliver(held)
        return {name: f is not None and bool(f.any()) for name, f in frames.items()}

    return tick


def _ticks(
    clock: StepClock, bus: HeldBus, room: Room, speaker: int, line: RelayedLine
) -> Callable[..., bool]:
    """`_ticks_of` for one line: whether it heard anything."""
    tick_all = _ticks_of(clock, bus, room, speaker, {"line": line})

    def tick(held: str | None = None) -> bool:
        return tick_all(held)["line"]

    return tick


async def test_a_relayed_line_hears_again_at_once_after_its_owner_stalled(
    store: Sessions, tmp_path: Path
) -> None:
    """The owner's process stalls by day for 1.6 s (a loaded machine): the landing, hearing
    nothing for OWNER_SILENT_S, tells the owner the line is gone and follows it again. The
    owner, once it runs again, answers the ticks still waiting for it as the old line, then
    drops it and hosts the line anew. Every mix it sends back must be played in the order of
    the landing's ticks: in CI the old line's mixes, numbered by the old line, came after the
    buffer had been reset, and the new line's were taken for late ones — the caller heard
    nothing for as long as the call had lasted (a whole day)."""
    async with open_bus("local", tmp_path) as connect:
        hub = ShardedHub(store, node="w0", ownership=OneOwner("w0"), transport=await connect())
        rooms = VoiceRooms(hub)
        bus, clock = HeldBus(), StepClock()
        owner = VoiceRelay("w0", bus, rooms, lambda _: "w0", clock=clock)
        landing = _landing("w1", bus, lambda _: "w0", clock=clock)
        try:
            await _started(owner, landing)
            game = await _four_seats_by_day(hub)
            room = rooms.room_for(game)
            assert room is not None
            rooms.attach("local caller", room)  # the owner's own caller, who speaks here
            listener, speaker = _hears_another(room)
            line = landing.link("call", game, listener)
            tick = _ticks(clock, bus, room, speaker, line)

            before = [tick() for _ in range(300)]  # six seconds of the day
            assert sum(before[-250:]) >= 245
            assert [tick(held="voice.w0") for _ in range(80)].count(True) <= 1  # the stall
            assert line.moves == 1  # looked for the owner again, and found it
            after = [tick() for _ in range(100)]  # the owner reads what waited for it
            assert sum(after[-95:]) >= 90, after
        finally:
            await _closed(landing, owner)
            rooms.close()
            await hub.close()


async def test_a_relayed_line_rides_out_an_owners_short_stalls_once_its_delay_has_grown(
    store: Sessions, tmp_path: Path
) -> None:
    """The owner's process stalls for three ticks (60 ms) once a second, for half a minute of
    the day, while its own caller talks: a relayed line with its playout delay fixed at one
    frame hears a gap at every stall; with the delay free to grow (the default), only at the
    first few, then nothing is lost to the stalls. Its own account says so (underruns, the
    delay it reached), and the owner's mixer keeps every frame its caller sent meanwhile."""
    async with open_bus("local", tmp_path) as connect:
        hub = ShardedHub(store, node="w0", ownership=OneOwner("w0"), transport=await connect())
        rooms = VoiceRooms(hub)
        bus, clock = HeldBus(), StepClock()
        owner = VoiceRelay("w0", bus, rooms, lambda _: "w0", clock=clock)
        fixed = VoiceRelay("w1", bus, VoiceRooms(owner_of_nothing()), lambda _: "w0",
                           clock=clock, most=PREFILL)  # fmt: skip
        grows = _landing("w2", bus, lambda _: "w0", clock=clock)
        try:
            await _started(owner, fixed, grows)
            game = await _four_seats_by_day(hub)
            room = rooms.room_for(game)
            assert room is not None
            rooms.attach("local caller", room)
            listener, speaker = _hears_another(room)
            lines = {relay.node: relay.link("call", game, listener) for relay in (fixed, grows)}
            tick_all = _ticks_of(clock, bus, room, speaker, lines)

            def tick(stalled: bool) -> dict[str, bool]:
                return tick_all("voice.w0" if stalled else None)

            for _ in range(100):  # two seconds of the day, no stall
                tick(False)
            heard = [tick(k % 50 < 3) for k in range(500)]
            underruns = {node: line.down.underruns for node, line in lines.items()}
            heard += [tick(k % 50 < 3) for k in range(1000)]
            buffers = {node: line.down for node, line in lines.items()}
            # The fixed delay: a gap at every stall, to the end.
            assert buffers["w1"].underruns >= 29 and buffers["w1"].deepest == PREFILL
            assert buffers["w1"].underruns - underruns["w1"] >= 19
            # Free to grow: gaps at the first stalls; in the last 20 s at most one each time
            # the delay, calm for CALM_TICKS, gave a frame back and the next stall took it.
            assert 0 < underruns["w2"] <= 5
            assert buffers["w2"].underruns - underruns["w2"] <= 1000 // CALM_TICKS
            assert PREFILL < buffers["w2"].deepest <= MAX_PREFILL
            # What an operator reads: the delay each relay's lines hold now.
            assert grows.stats().delay_frames == buffers["w2"].prefill > PREFILL
            assert fixed.stats().delay_frames == PREFILL
            # What the callers heard: with the delay fixed, at least two of each stall's three
            # ticks; free to grow, a handful of ticks in all, and in the last 20 s no more than
            # the probes of a delay given back. The owner lost none of its caller's frames
            # while it stalled: the burst fits in the mixer's queue (mixer.MAX_QUEUED).
            gaps = {node: [not h[node] for h in heard].count(True) for node in lines}
            assert gaps["w1"] >= 29 * 2, gaps
            assert gaps["w2"] <= 3 * 5, gaps
            assert [not h["w2"] for h in heard[-1000:]].count(True) <= 2 * (1000 // CALM_TICKS)
            assert room.mixer.overflowed == 0
        finally:
            await _closed(grows, fixed, owner)
            rooms.close()
            await hub.close()


async def test_a_line_that_followed_its_game_to_a_new_owner_hears_again_after_it_stalled(
    store: Sessions, tmp_path: Path
) -> None:
    """The failover of a CI run (tests/service/test_failover_mixed.py, a loaded machine): the
    game's owner a died, the landing's line heard nothing from it for OWNER_SILENT_S and
    followed the game to c, which had taken it over; c, busy with the game it had just
    resumed, stalled for over a second as the day began. The line followed c again, and c
    answered the ticks that had waited for it as the line it had hosted since the takeover,
    then hosted the line anew. Each mix must be played in the order of the landing's ticks,
    across both owners and both of c's lines: numbered by c's own count, the new line's mixes
    were taken for late ones for as long as c had hosted the old line (the caller heard
    nobody for the first seconds of the day, until the count caught up)."""
    async with open_bus("local", tmp_path) as connect:
        hub = ShardedHub(store, node="c", ownership=OneOwner("c"), transport=await connect())
        rooms = VoiceRooms(hub)
        bus, clock = HeldBus(), StepClock()
        owners = Owners(["a", "c"])  # the cached owner a, then (after a's silence) c
        new_owner = VoiceRelay("c", bus, rooms, lambda _: "c", clock=clock)
        landing = _landing("b", bus, owners.owner_of, owners.forget, clock=clock)
        try:
            await _started(new_owner, landing)  # a reads nothing: it was killed
            game = await _four_seats_by_day(hub)
            room = rooms.room_for(game)
            assert room is not None
            rooms.attach("local caller", room)  # c's own caller, who speaks there
            listener, speaker = _hears_another(room)
            line = landing.link("call", game, listener)
            tick = _ticks(clock, bus, room, speaker, line)

            dead = [tick() for _ in range(60)]  # a is silent: the line looks again
            assert not any(dead[:50]) and line.owner == "c" and owners.forgotten == 1
            before = [tick() for _ in range(150)]  # three seconds with the new owner
            assert sum(before[-140:]) >= 135, before
            assert [tick(held="voice.c") for _ in range(80)].count(True) <= 1  # c stalls
            assert line.moves == 2  # it left a, then the silent c (for c again)
            after = [tick() for _ in range(100)]  # c reads what waited for it
            assert sum(after[-95:]) >= 90, after
            assert line.down.late > 0  # c's answers to the ticks before it was followed again
        finally:
            await _closed(landing, new_owner)
            rooms.close()
            await hub.close()


class Resuming:
    """A node's games as its rooms see them while it takes one over: none runs until the
    test says the resume from the log is done."""

    def __init__(self) -> None:
        self.actors: dict[str, Any] = {}


async def test_a_line_that_reaches_the_new_owner_while_it_resumes_the_game_is_not_sent_away(
    store: Sessions, tmp_path: Path
) -> None:
    """After a takeover the landing's lookup names the new owner c from the moment c holds the
    lease, while c still reads the game's log to resume it. A tick that reaches c meanwhile is
    not answered "not here" (the landing would then not ask c again for OWNER_CHECK_S, and its
    caller would hear nothing for a second longer after every takeover — a loaded run's line
    was sent away so, 0.15 s before c ran the game); the line is hosted once the game runs."""
    async with open_bus("local", tmp_path) as connect:
        hub = ShardedHub(store, node="c", ownership=OneOwner("c"), transport=await connect())
        resuming = Resuming()
        rooms = VoiceRooms(resuming)
        bus, clock = HeldBus(), StepClock()
        new_owner = VoiceRelay("c", bus, rooms, lambda _: "c", clock=clock,
                               taking_up=lambda game: game not in resuming.actors)  # fmt: skip
        landing = _landing("b", bus, lambda _: "c", clock=clock)
        try:
            await _started(new_owner, landing)
            game = await _four_seats_by_day(hub)
            actor = hub.actors[game]
            gains = actor.ruleset.routing(actor.state)
            listener, speaker = next(
                (h, r.source) for h in range(1, 5) for r in gains.get(h, ()) if r.source != h
            )
            line = landing.link("call", game, listener)

            def tick() -> bool:
                """One tick: c's local caller `speaker` talks (once c runs the game), the
                relayed line pulls; whether it heard anything."""
                clock.now += 0.02
                room = rooms.room_for(game)
                if room is not None:
                    room.push(speaker, voice(speaker))
                frame = line.pull()
                bus.deliver()
                return frame is not None and bool(frame.any())

            assert not any(tick() for _ in range(10))  # c reads the game's log (0.2 s)
            resuming.actors[game] = actor  # the game runs on c
            room = rooms.room_for(game)
            assert room is not None
            rooms.attach("local caller", room)
            heard = [tick() for _ in range(20)]
            assert sum(heard[5:]) == 15, heard  # within a few ticks, not after OWNER_CHECK_S
            assert line.owner == "c" and line.moves == 0  # never sent away
        finally:
            await _closed(landing, new_owner)
            rooms.close()
            await hub.close()
