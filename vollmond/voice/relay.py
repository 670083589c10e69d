"""A line's voice relayed to its game's room on another process (docs/decisions.md, "The
telephone across workers and nodes: relay the frames").

Where games are sharded over processes (docs/scaling.md) a call stays on the process it landed
on — its SIP dialog, its RTP socket, its session with keys and prompts — while its game's room
(:class:`~vollmond.voice.rooms.Room`, one mixer per game) lives with the game's owner. This
module carries the 20 ms frames between the two over the processes' bus (the service's
`Transport`: the local bus of ``--workers`` or NATS between nodes; only ``publish`` and
``subscribe`` are used, so this package still knows nothing of the service):

- the *landing* process publishes the caller's uplink frames (PCM, 160 samples of 16 bit) to
  the owner, with the line's listener (its seat, or the spectators) and speaker (its seat when
  its voice may enter the room: seated, not spectating, not muted);
- the *owner* keeps a :class:`HostedLine` per remote line, attached to the game's room like a
  local line, pushes the caller's frames into the mixer as that seat's source and, on its own
  20 ms clock, pulls the listener's mix exactly as a local line does — so the owner's routing
  table alone decides what a remote caller hears, as for a local one — and publishes it back;
- each direction passes through a :class:`JitterBuffer` (a fixed playout delay of
  :data:`PREFILL` frames, at most :data:`DEPTH` waiting, the oldest dropped beyond).

Every message is addressed to one process (``voice.<node>``) and carries a batch of records:
the owner sends one message per landing process per tick, whatever the number of its lines.

A line follows its game's owner: the landing asks the owner again every
:data:`OWNER_CHECK_S`, at once when the owner answers that the game does not run there (it
was given up or moved), and when the owner has been silent for :data:`OWNER_SILENT_S` (it
died); the new owner takes the line up at its first frame. The owner drops a line it has not
heard from for :data:`EXPIRE_S` (the landing process died or the line moved on).
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import struct
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import structlog

from vollmond.engine.ruleset import SPECTATORS, Listener
from vollmond.voice.frames import FRAME_SAMPLES, Int16Array
from vollmond.voice.rooms import Room, VoiceRooms

log = structlog.get_logger(__name__)

FRAME_S = 0.02
#: Frames a buffer holds before it starts playing (after a start or an underrun): 20 ms of
#: added delay that absorbs a frame arriving up to 20 ms late.
PREFILL = 1
#: Frames a buffer holds at most; beyond, the oldest is dropped (the delay cannot grow).
DEPTH = 3
#: Pulls with more than the playout delay waiting before one frame is skipped (0.5 s).
CATCH_UP_TICKS = 25
#: A landing line with nothing to say still tells its owner it is there this often.
KEEPALIVE_S = 0.5
#: How often a landing line asks who owns its game (cheap: the ownership's own cache).
OWNER_CHECK_S = 1.0
#: An owner that sent nothing for this long while the line talked to it is looked up again.
OWNER_SILENT_S = 1.0
#: The owner drops a remote line not heard from for this long.
EXPIRE_S = 2.0

UP, DOWN, GONE, NOT_OWNER = 1, 2, 3, 4
"""Record kinds: a caller's frame (or keep-alive) to the owner; a mix to the landing; the line
ended; the game does not run on this owner."""

_VERSION = 1
_HEAD = struct.Struct("!BB")  # version, length of the sender's node name
_RECORD = struct.Struct("!BIiiIBH")  # kind, line, listener, speaker, seq, game len, pcm len
_PCM_BYTES = FRAME_SAMPLES * 2
_NO_LISTENER = -1
_SPECTATORS = 0


class Bus(Protocol):
    """What the relay needs of the service's Transport (``service/shards/transport.py``)."""

    def publish(self, subject: str, data: bytes) -> None: ...

    async def subscribe(self, subject: str, handler: Callable[[Any], None]) -> Any: ...


def voice_subject(node: str) -> str:
    """Where a process hears the voice records addressed to it."""
    return f"voice.{node}"


@dataclass(frozen=True, slots=True)
class Record:
    """One line's frame (or notice) in a message."""

    kind: int
    line: int
    game_id: str
    listener: Listener | None = None
    speaker: int = 0
    seq: int = 0
    pcm: bytes = b""


def encode(node: str, records: list[Record]) -> bytes:
    """A message from `node` carrying `records`."""
    name = node.encode()
    parts = [_HEAD.pack(_VERSION, len(name)), name]
    for r in records:
        game = r.game_id.encode()
        listener = (
            _NO_LISTENER
            if r.listener is None
            else _SPECTATORS
            if r.listener == SPECTATORS
            else int(r.listener)
        )
        parts.append(
            _RECORD.pack(r.kind, r.line, listener, r.speaker, r.seq, len(game), len(r.pcm))
        )
        parts.append(game)
        parts.append(r.pcm)
    return b"".join(parts)


def decode(data: bytes) -> tuple[str, list[Record]]:
    """The sender and the records of a message (ValueError if it is not one)."""
    version, name_len = _HEAD.unpack_from(data, 0)
    if version != _VERSION:
        raise ValueError(f"voice relay message version {version}")
    at = _HEAD.size
    node = data[at : at + name_len].decode()
    at += name_len
    records: list[Record] = []
    while at < len(data):
        kind, line, listener, speaker, seq, game_len, pcm_len = _RECORD.unpack_from(data, at)
        at += _RECORD.size
        game = data[at : at + game_len].decode()
        at += game_len
        pcm = data[at : at + pcm_len]
        at += pcm_len
        if pcm_len not in (0, _PCM_BYTES) or len(pcm) != pcm_len:
            raise ValueError("voice relay frame of the wrong size")
        heard: Listener | None = listener
        if listener == _NO_LISTENER:
            heard = None
        elif listener == _SPECTATORS:
            heard = SPECTATORS
        records.append(Record(kind, line, game, heard, speaker, seq, pcm))
    return node, records


def to_pcm(frame: Int16Array) -> bytes:
    return np.ascontiguousarray(frame, dtype="<i2").tobytes()


def from_pcm(pcm: bytes) -> Int16Array:
    frame: Int16Array = np.frombuffer(pcm, dtype="<i2").astype(np.int16)
    return frame


class JitterBuffer:
    """Frames in sequence order with a fixed playout delay.

    Playing starts once :attr:`prefill` frames wait (again after an underrun: a talk spurt
    starts :attr:`prefill` frames late and then keeps its pace); a frame older than the last
    one played is dropped (late or repeated); at most :attr:`depth` frames wait (a burst
    beyond drops the oldest); and when more than ``prefill`` frames have waited at every
    pull for :data:`CATCH_UP_TICKS` pulls, one is skipped — so a burst, or two clocks of the
    same rate whose phases drift, cannot leave a standing delay (a single late frame costs
    nothing, a lasting excess one skipped frame per half second at most). Why fixed and
    small: both ends are processes of one service on a LAN or one machine, where the bus adds
    well under a frame (measured: benchmarks/voice_relay.py); a deeper buffer only adds
    delay.
    """

    def __init__(self, prefill: int = PREFILL, depth: int = DEPTH) -> None:
        self.prefill = max(1, prefill)
        self.depth = max(self.prefill, depth)
        self._seqs: list[int] = []
        self._frames: list[Int16Array] = []
        self._playing = False
        self._last: int | None = None
        self._over = 0
        self.late = 0
        self.dropped = 0
        self.underruns = 0

    def __len__(self) -> int:
        return len(self._seqs)

    def put(self, seq: int, frame: Int16Array) -> None:
        if (self._last is not None and seq <= self._last) or seq in self._seqs:
            self.late += 1
            return
        at = bisect.bisect(self._seqs, seq)
        self._seqs.insert(at, seq)
        self._frames.insert(at, frame)
        if len(self._seqs) > self.depth:
            self._seqs.pop(0)
            self._frames.pop(0)
            self.dropped += 1

    def get(self) -> Int16Array | None:
        """The next frame to play this tick, or None (nothing yet, or an underrun)."""
        if not self._playing:
            if len(self._seqs) < self.prefill:
                return None
            self._playing = True
        if not self._seqs:
            self._playing = False
            self.underruns += 1
            return None
        # More than the playout delay waiting, tick after tick: a standing delay (left by a
        # burst, or by the two clocks' phases); one frame is skipped to shed it.
        self._over = self._over + 1 if len(self._seqs) > self.prefill else 0
        if self._over >= CATCH_UP_TICKS:
            self._over = 0
            self._seqs.pop(0)
            self._frames.pop(0)
            self.dropped += 1
        self._last = self._seqs.pop(0)
        return self._frames.pop(0)

    def reset(self) -> None:
        """Forget everything (the other end changed: its sequence numbers start anew)."""
        self._seqs.clear()
        self._frames.clear()
        self._playing = False
        self._last = None
        self._over = 0


@dataclass(eq=False)
class RelayedLine:
    """A local line whose game runs on another process: the landing side of the relay."""

    relay: VoiceRelay
    id: int
    game_id: str
    listener: Listener
    owner: str | None = None
    seq: int = 0
    down: JitterBuffer = field(default_factory=JitterBuffer)
    next_check: float = 0.0
    last_sent: float = 0.0
    last_heard: float = 0.0
    #: When the line began talking to its current owner without an answer since.
    waiting_since: float | None = None
    moves: int = 0

    def push(self, seat: int, samples: Int16Array) -> None:
        """One received 20 ms frame of the caller's voice as house `seat`'s source."""
        if samples.shape != (FRAME_SAMPLES,):
            return
        self.relay._send_up(self, seat, to_pcm(samples))

    def pull(self) -> Int16Array | None:
        """The caller's room audio for this tick (called by the line's media clock)."""
        return self.relay._pull(self)


@dataclass(eq=False)
class HostedLine:
    """A remote line as its game's owner keeps it: a line of the room like a local one."""

    node: str
    line: int
    game_id: str
    listener: Listener | None
    speaker: int = 0
    up: JitterBuffer = field(default_factory=JitterBuffer)
    room: Room | None = None
    seq: int = 0
    last_heard: float = 0.0


class VoiceRelay:
    """Both sides of the relay in one process: the landing side of its own lines whose games
    run elsewhere, and the owner side of the other processes' lines in its games."""

    def __init__(
        self,
        node: str,
        bus: Bus,
        rooms: VoiceRooms,
        owner_of: Callable[[str], str | None],
        forget: Callable[[str], None] = lambda _: None,
        *,
        clock: Callable[[], float] = time.monotonic,
        prefill: int = PREFILL,
        depth: int = DEPTH,
    ) -> None:
        """`owner_of`: the owner of a game if known without waiting (None: being looked up);
        `forget`: the cached owner of a game did not answer (look it up again)."""
        self.node = node
        self.bus = bus
        self.rooms = rooms
        self.owner_of = owner_of
        self.forget = forget
        self.clock = clock
        self.prefill, self.depth = prefill, depth
        self.lines: dict[Hashable, RelayedLine] = {}
        self._by_id: dict[int, RelayedLine] = {}
        self._next_id = 1
        self.hosted: dict[tuple[str, int], HostedLine] = {}
        self._ticker: asyncio.Task[None] | None = None
        self._subscription: Any = None
        self.bad_messages = 0
        #: Told after each owner tick with the records it sent (benchmarks).
        self.on_tick: Callable[[], None] | None = None

    async def start(self) -> None:
        self._subscription = await self.bus.subscribe(voice_subject(self.node), self._on_message)

    async def close(self) -> None:
        for key in list(self.lines):
            self.unlink(key)
        for hosted in list(self.hosted.values()):
            self._drop(hosted)
        if self._ticker is not None:
            self._ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._ticker
            self._ticker = None
        if self._subscription is not None:
            with contextlib.suppress(Exception):
                await self._subscription.unsubscribe()
            self._subscription = None

    # -- the landing side ----------------------------------------------------------------------
    def link(self, key: Hashable, game_id: str, listener: Listener) -> RelayedLine:
        """The relayed line of local line `key` in `game_id`, heard as `listener` (made at the
        first call; a change of game starts a new one)."""
        line = self.lines.get(key)
        if line is not None and line.game_id != game_id:
            self.unlink(key)
            line = None
        if line is None:
            line = RelayedLine(
                self, self._next_id, game_id, listener, down=JitterBuffer(self.prefill, self.depth)
            )
            self._next_id += 1
            self.lines[key] = line
            self._by_id[line.id] = line
        line.listener = listener
        return line

    def unlink(self, key: Hashable) -> None:
        """Local line `key` no longer relays (it ended, left its game, or its game runs here
        now): its owner is told at once rather than after EXPIRE_S."""
        line = self.lines.pop(key, None)
        if line is None:
            return
        self._by_id.pop(line.id, None)
        if line.owner is not None and line.owner != self.node:
            self._publish(line.owner, [Record(GONE, line.id, line.game_id)])

    def _send_up(self, line: RelayedLine, speaker: int, pcm: bytes) -> None:
        owner = self._owner(line)
        if owner is None:
            return
        line.seq += 1
        record = Record(UP, line.id, line.game_id, line.listener, speaker, line.seq, pcm)
        self._sent(line)
        self._publish(owner, [record])

    def _sent(self, line: RelayedLine) -> None:
        now = self.clock()
        line.last_sent = now
        if line.waiting_since is None:
            line.waiting_since = now

    def _pull(self, line: RelayedLine) -> Int16Array | None:
        owner = self._owner(line)
        if owner is None:
            return None
        now = self.clock()
        if line.waiting_since is not None and now - line.waiting_since > OWNER_SILENT_S:
            log.info("voice_owner_silent", game=line.game_id, owner=owner, node=self.node)
            self._lost_owner(line)
            return None
        if now - line.last_sent >= KEEPALIVE_S:
            line.seq += 1
            self._sent(line)
            self._publish(owner, [Record(UP, line.id, line.game_id, line.listener, 0, line.seq)])
        return line.down.get()

    def _owner(self, line: RelayedLine) -> str | None:
        now = self.clock()
        if line.owner is None or now >= line.next_check:
            line.next_check = now + OWNER_CHECK_S
            owner = self.owner_of(line.game_id)
            if owner != line.owner:
                self._moved(line, owner)
        if line.owner == self.node:  # the game runs here: the local room serves the line
            return None
        return line.owner

    def _moved(self, line: RelayedLine, owner: str | None) -> None:
        if line.owner is not None and line.owner != self.node:
            self._publish(line.owner, [Record(GONE, line.id, line.game_id)])
        line.moves += line.owner is not None  # left an owner (for a new one, or to look)
        if owner is not None:
            log.info("voice_line_follows", game=line.game_id, owner=owner, node=self.node)
        line.owner = owner
        line.down.reset()
        line.waiting_since = None
        line.last_sent = 0.0

    def _lost_owner(self, line: RelayedLine) -> None:
        self.forget(line.game_id)
        self._moved(line, None)
        line.next_check = 0.0

    def _heard_down(self, node: str, record: Record) -> None:
        line = self._by_id.get(record.line)
        if line is None or line.owner != node or line.game_id != record.game_id:
            return
        line.last_heard = self.clock()
        line.waiting_since = None
        if record.kind == NOT_OWNER:
            log.info("voice_owner_moved", game=line.game_id, was=node, node=self.node)
            self._lost_owner(line)
        elif record.pcm:
            line.down.put(record.seq, from_pcm(record.pcm))

    # -- the owner side ------------------------------------------------------------------------
    def _heard_up(self, node: str, record: Record) -> None:
        key = (node, record.line)
        hosted = self.hosted.get(key)
        if record.kind == GONE:
            if hosted is not None and hosted.game_id == record.game_id:
                self._drop(hosted)
            return
        if hosted is not None and hosted.game_id != record.game_id:
            self._drop(hosted)
            hosted = None
        if hosted is None:
            room = self.rooms.room_for(record.game_id)
            if room is None:
                self._publish(node, [Record(NOT_OWNER, record.line, record.game_id)])
                return
            hosted = HostedLine(
                node, record.line, record.game_id, record.listener,
                up=JitterBuffer(self.prefill, self.depth),
            )  # fmt: skip
            self._attach(hosted, room)
            self.hosted[key] = hosted
            self._run()
        hosted.last_heard = self.clock()
        hosted.listener = record.listener
        hosted.speaker = record.speaker
        if record.pcm and record.speaker:
            hosted.up.put(record.seq, from_pcm(record.pcm))

    def _attach(self, hosted: HostedLine, room: Room | None) -> None:
        hosted.room = room
        self.rooms.attach(hosted, room)

    def _drop(self, hosted: HostedLine) -> None:
        if self.hosted.get((hosted.node, hosted.line)) is hosted:
            del self.hosted[(hosted.node, hosted.line)]
        self._attach(hosted, None)

    def _run(self) -> None:
        if self._ticker is None or self._ticker.done():
            self._ticker = asyncio.get_running_loop().create_task(self._tick_forever())

    async def _tick_forever(self) -> None:
        """The owner's 20 ms clock for its remote lines, on an absolute schedule (tick k is
        due at start + k * 20 ms; a late tick does not push the later ones back)."""
        start = self.clock()
        k = 0
        while self.hosted:
            k += 1
            due = start + k * FRAME_S
            now = self.clock()
            if now > due + FRAME_S:  # stalled: skip what is past, keep the phase
                k += int((now - due) / FRAME_S)
                due = start + k * FRAME_S
            await asyncio.sleep(max(0.0, due - self.clock()))
            try:
                self.tick()
            except Exception:  # one bad tick must not silence every remote line
                log.exception("voice_relay_tick_failed", node=self.node)

    def tick(self) -> None:
        """One 20 ms frame for every remote line: their voices into their rooms, then each
        listener's mix back to its process (one message per process)."""
        now = self.clock()
        hosted_lines = list(self.hosted.values())
        out: dict[str, list[Record]] = {}
        live: list[HostedLine] = []
        for hosted in hosted_lines:
            if now - hosted.last_heard > EXPIRE_S:
                self._drop(hosted)
                continue
            room = self.rooms.room_for(hosted.game_id)
            if room is None:  # given up or ended: the landing looks for the owner again
                self._drop(hosted)
                out.setdefault(hosted.node, []).append(
                    Record(NOT_OWNER, hosted.line, hosted.game_id)
                )
                continue
            if room is not hosted.room:
                self._attach(hosted, room)
            frame = hosted.up.get()
            if frame is not None and hosted.speaker:
                room.mixer.push(hosted.speaker, frame)
            live.append(hosted)
        for hosted in live:
            assert hosted.room is not None
            mix = (
                hosted.room.mixer.pull(hosted.listener, puller=hosted)
                if hosted.listener is not None
                else None
            )
            hosted.seq += 1
            out.setdefault(hosted.node, []).append(
                Record(
                    DOWN,
                    hosted.line,
                    hosted.game_id,
                    hosted.listener,
                    seq=hosted.seq,
                    pcm=b"" if mix is None else to_pcm(mix),
                )
            )
        for node, records in out.items():
            self._publish(node, records)
        if self.on_tick is not None:
            self.on_tick()

    # -- the bus -------------------------------------------------------------------------------
    def _publish(self, node: str, records: list[Record]) -> None:
        self.bus.publish(voice_subject(node), encode(self.node, records))

    def _on_message(self, message: Any) -> None:
        try:
            node, records = decode(message.data)
        except (ValueError, struct.error, UnicodeDecodeError):
            self.bad_messages += 1
            if self.bad_messages in (1, 10, 100) or self.bad_messages % 1000 == 0:
                log.warning("voice_relay_bad_message", node=self.node, count=self.bad_messages)
            return
        for record in records:
            if record.kind in (UP, GONE):
                self._heard_up(node, record)
            elif record.kind in (DOWN, NOT_OWNER):
                self._heard_down(node, record)
