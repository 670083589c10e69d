"""A line's voice relayed to its game's room on another process (docs/decisions.md, "The
telephone across workers and nodes: relay the frames").

Where games are sharded over processes (docs/scaling.md) a call stays on the process it landed
on — its SIP dialog, its RTP socket, its session with keys and prompts — while its game's room
(:class:`~vollmond.voice.rooms.Room`, one mixer per game) lives with the game's owner. This
module carries the 20 ms frames between the two over the processes' bus (the service's
`Transport`: the local bus of ``--workers`` or NATS between nodes; only ``publish`` and
``subscribe`` are used, so this package still knows nothing of the service):

- at every tick of its media clock the *landing* process sends each relayed line's record to
  the game's owner: the caller's uplink frame received in that tick (PCM, 160 samples of 16
  bit; none while the caller is silent, muted or only listening), the line's listener (its
  seat, or the spectators) and speaker (its seat when its voice may enter the room);
- the *owner* keeps a :class:`HostedLine` per remote line, attached to the game's room like a
  local line; at each record it pushes the frame into the mixer as that seat's source and
  pulls the listener's mix at once — the mixer's ticks are driven by its lines' pulls, so a
  remote line is pulled on its landing's clock exactly as a local line is on the owner's, and
  the owner's routing table alone decides what a remote caller hears — and sends it back;
- the mix waits in the landing's :class:`JitterBuffer` (a playout delay of :data:`PREFILL`
  frame, longer for a while after a gap) for the line's next tick. The uplink needs no
  buffer of its own: the mixer's queue per source (``mixer.MAX_QUEUED``, shedding a standing
  delay as this buffer does) is one.
  A mix carries the number of the tick it answers, counted by the landing for the line's
  whole life: a count of the owner's own would start again when it hosts the line anew (after
  a stall), while the old line's mixes are still on their way, and the new mixes would be
  taken for late ones (a caller heard nothing for as long as the call had lasted).

Why the owner has no clock of its own for remote lines: a first version mixed them on an owner
clock of 20 ms; the two clocks' unrelated phases then cost a wait on each side, and the delay
measured 50-65 ms mean; driven by the landing's clock the round trip fits between two of its
ticks, one frame (benchmarks/voice_relay.py; docs/decisions.md).

A browser's voice peer (`vollmond/voice/webrtc.py`) on a process that does not own its game
is a relayed line like a call: the same records, plus the houses speaking in each mix
(:data:`HEARD`) for the page's speaking indicator.

A conference room's member on a process that does not own the room is a relayed line too,
with the room's key (``conference:<room>``) in place of a game id and its slot as listener and
speaker (`vollmond/service/shards/conference_rooms.py`); the owner finds the room's mixer
through `VoiceRooms.mixed_for`.

Every message is addressed to one process (``voice.<node>``) and carries a batch of records.

A line follows its game's owner: the landing asks the owner again every
:data:`OWNER_CHECK_S`, at once when the owner answers that the game does not run there (it
was given up or moved), and when the owner has been silent for :data:`OWNER_SILENT_S` (it
died); the new owner takes the line up at its first frame — a process that has just taken
the game over and is still resuming it says nothing until the game runs (it does not send the
line away). The owner drops a line it has not heard from for :data:`EXPIRE_S` (the landing
process died or the line moved on).
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
from vollmond.voice.mixer import CATCH_UP_TICKS as MIXER_CATCH_UP_TICKS
from vollmond.voice.mixer import SPEAKING_RMS
from vollmond.voice.rooms import Mixed, VoiceRooms

log = structlog.get_logger(__name__)

#: Frames a buffer holds before it starts playing (after a start or an underrun). One: the
#: mix of a tick comes back before the line's next tick, which plays it; a mix that misses it
#: is played a tick later and the buffer sheds that delay again (CATCH_UP_TICKS).
PREFILL = 1
#: Frames a buffer holds at most at its first playout delay; beyond, the oldest is dropped.
#: The room above the delay (two frames) moves with it.
DEPTH = 3
#: The longest playout delay a relayed line's buffer grows to after gaps (100 ms): what a
#: stall up to that long costs is then a longer delay, not a gap.
MAX_PREFILL = 5
#: Pulls without a gap after which a grown playout delay gives back one frame (15 s).
CALM_TICKS = 750
#: Pulls with more than the playout delay waiting before one frame is skipped (0.5 s, as the
#: mixer's queues do).
CATCH_UP_TICKS = MIXER_CATCH_UP_TICKS
#: How often a landing line asks who owns its game (cheap: the ownership's own cache).
OWNER_CHECK_S = 1.0
#: An owner that sent nothing for this long while the line talked to it is looked up again.
OWNER_SILENT_S = 1.0
#: The owner drops a remote line not heard from for this long.
EXPIRE_S = 2.0

UP, DOWN, GONE, NOT_OWNER, TICK, HEARD = 1, 2, 3, 4, 5, 6
"""Record kinds: a caller's frame to the owner (one that came between ticks); a mix to the
landing (numbered as the tick it answers); the line ended; the game does not run on this
owner; a line's tick to the owner (with the tick's frame, if any: push it, pull the mix and
send it back); the houses speaking in the mix just sent (its payload one byte per house, sent
after a DOWN when any were: what a browser's speaking indicator shows, the listener's own row
only, as for a local peer)."""

_VERSION = 1
_HEAD = struct.Struct("!BB")  # version, length of the sender's node name
_RECORD = struct.Struct("!BIiiIBH")  # kind, line, listener, speaker, seq, game len, pcm len
_PCM_BYTES = FRAME_SAMPLES * 2
_MAX_HOUSE = 255  # a HEARD record names houses in one byte each (the engine deals 200 at most)
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
        if len(pcm) != pcm_len or (kind != HEARD and pcm_len not in (0, _PCM_BYTES)):
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
    """Frames in sequence order with a playout delay that grows after gaps and shrinks when
    calm.

    Playing starts once :attr:`prefill` entries wait (again after an underrun: a talk spurt
    starts :attr:`prefill` frames late and then keeps its pace); an entry older than the last
    one played is dropped (late or repeated); at most :attr:`depth` entries wait (a burst
    beyond drops the oldest); and when more than ``prefill`` entries have waited at every
    pull for :data:`CATCH_UP_TICKS` pulls, one is skipped — so a burst, or two clocks of the
    same rate whose phases drift, cannot leave a standing delay (a single late frame costs
    nothing, a lasting excess one skipped frame per half second at most).

    An entry is a frame or silence (``None``: the owner answered that the listener hears
    nothing this tick), so an underrun is only an answer that has not come, never a pause in
    the talk. Each underrun adds a frame to the playout delay, up to :attr:`most`
    (:data:`MAX_PREFILL`); after :data:`CALM_TICKS` pulls without one it gives a frame back,
    down to the delay it started with (the catch-up then sheds the frame). Why: both ends
    are processes of one service, where the bus adds well under a frame on a quiet machine
    (benchmarks/voice_relay.py) and the delay stays one frame; but a process that stalls —
    a busy machine, a collector's pause — left a relayed caller a gap at every stall, where a
    telephone's own jitter buffer would have grown (docs/decisions.md, "The relayed line's
    playout delay grows after a gap").
    """

    def __init__(self, prefill: int = PREFILL, depth: int = DEPTH, most: int = MAX_PREFILL) -> None:
        self.base = max(1, prefill)
        self.prefill = self.base
        self.most = max(self.base, most)
        # Room above the playout delay for a burst; it moves with the delay.
        self._headroom = max(0, depth - self.base)
        self._seqs: list[int] = []
        self._frames: list[Int16Array | None] = []
        self._playing = False
        self._last: int | None = None
        self._over = 0
        self._calm = 0
        self.late = 0
        self.dropped = 0
        self.underruns = 0
        self.deepest = self.prefill  # the longest playout delay this buffer has had

    @property
    def depth(self) -> int:
        return self.prefill + self._headroom

    def __len__(self) -> int:
        return len(self._seqs)

    def put(self, seq: int, frame: Int16Array | None) -> None:
        """The answer to tick `seq`: a frame, or None for silence."""
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
        """The next frame to play this tick, or None (silence, nothing yet, or an underrun)."""
        if not self._playing:
            if len(self._seqs) < self.prefill:
                return None
            self._playing = True
        if not self._seqs:
            self._playing = False
            self.underruns += 1
            self._calm = 0
            if self.prefill < self.most:
                self.prefill += 1
                self.deepest = max(self.deepest, self.prefill)
            return None
        self._calm += 1
        if self._calm >= CALM_TICKS and self.prefill > self.base:
            self._calm = 0
            self.prefill -= 1
        # More than the playout delay waiting, tick after tick: a standing delay (left by a
        # burst, by the two clocks' phases, or by a delay just given back); one entry is
        # skipped to shed it.
        self._over = self._over + 1 if len(self._seqs) > self.prefill else 0
        if self._over >= CATCH_UP_TICKS:
            self._over = 0
            self._seqs.pop(0)
            self._frames.pop(0)
            self.dropped += 1
        self._last = self._seqs.pop(0)
        return self._frames.pop(0)

    def reset(self, played: int | None = None) -> None:
        """Forget what waits (the other end changed), and take the entries up to `played`
        for late ones: they answer what was sent to the other end before. The playout delay
        learnt stays: it is the machine's, not the other end's."""
        self._seqs.clear()
        self._frames.clear()
        self._playing = False
        self._last = played
        self._over = 0


@dataclass(slots=True)
class EndedLines:
    """The buffer counters of the relayed lines that ended, so the relay's go on growing."""

    underruns: int = 0
    late: int = 0
    dropped: int = 0


@dataclass(frozen=True, slots=True)
class RelayStats:
    """The relay at one moment, for operators (`/metrics`): the lines now, and counters since
    the process started (the lines' buffers are summed in when a line ends, so they only grow).
    A relayed caller's gap is an underrun here, not a frame not sent: the clock still sends."""

    relayed_lines: int  # this process's lines whose game's room is on another process
    hosted_lines: int  # other processes' lines mixed in the games this process runs
    underruns: int  # ticks a relayed line had no mix frame to play (its caller heard a gap)
    late: int  # mix frames that came after their turn or twice, not played
    dropped: int  # mix frames dropped from a full buffer or to shed a standing delay
    bad_messages: int  # relay messages that could not be read
    #: The longest playout delay of a relayed line now, in 20 ms frames (1 on a calm machine:
    #: more says the lines have met gaps lately and hold their audio back to ride them out).
    delay_frames: int


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
    #: When the line began talking to its current owner without an answer since.
    waiting_since: float | None = None
    #: How often the line left an owner (moved, or looked for a silent or wrong one again).
    moves: int = 0
    #: The process that last said the game does not run there, and until when it is not
    #: asked again if the lookup still names it (an ended game whose page or call is still
    #: open: its owner dropped it, the hash still names that owner).
    refused_by: str | None = None
    refused_until: float = 0.0
    #: The caller's frames received since the last tick (sent with the next one), and as whom.
    pending: list[bytes] = field(default_factory=list)
    speaker: int = 0
    #: Houses heard speaking in the mixes received since the caller last took them (a
    #: browser's speaking indicator; a telephone line leaves them).
    heard: set[int] = field(default_factory=set)

    def push(self, seat: int, samples: Int16Array) -> None:
        """One received 20 ms frame of the caller's voice as house `seat`'s source; it goes
        to the owner with the line's next tick (in the same tick: the media clock hands the
        received audio on before it pulls the lines)."""
        if samples.shape != (FRAME_SAMPLES,):
            return
        if len(self.pending) >= DEPTH:
            self.pending.pop(0)
        self.pending.append(to_pcm(samples))
        self.speaker = seat

    def pull(self) -> Int16Array | None:
        """The caller's room audio for this tick (called by the line's media clock)."""
        return self.relay._pull(self)

    def take_heard(self) -> set[int]:
        """The houses heard speaking since the last call (and forget them)."""
        heard, self.heard = self.heard, set()
        return heard


@dataclass(eq=False)
class HostedLine:
    """A remote line as its game's owner keeps it: a line of the room like a local one."""

    node: str
    line: int
    game_id: str
    listener: Listener | None
    speaker: int = 0
    room: Mixed | None = None
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
        taking_up: Callable[[str], bool] = lambda _: False,
        clock: Callable[[], float] = time.monotonic,
        prefill: int = PREFILL,
        depth: int = DEPTH,
        most: int = MAX_PREFILL,
    ) -> None:
        """`owner_of`: the owner of a game if known without waiting (None: being looked up);
        `forget`: the cached owner of a game did not answer (look it up again); `taking_up`:
        the game is this process's, its run about to begin (a lease just acquired, the game
        being resumed from its log)."""
        self.node = node
        self.bus = bus
        self.rooms = rooms
        self.owner_of = owner_of
        self.forget = forget
        self.taking_up = taking_up
        self.clock = clock
        self.prefill, self.depth, self.most = prefill, depth, most
        self.lines: dict[Hashable, RelayedLine] = {}
        self._by_id: dict[int, RelayedLine] = {}
        self._next_id = 1
        self.hosted: dict[tuple[str, int], HostedLine] = {}
        self._sweeper: asyncio.TimerHandle | None = None
        self._subscription: Any = None
        self.bad_messages = 0
        self._ended = EndedLines()

    async def start(self) -> None:
        self._subscription = await self.bus.subscribe(voice_subject(self.node), self._on_message)

    async def close(self) -> None:
        for key in list(self.lines):
            self.unlink(key)
        for hosted in list(self.hosted.values()):
            self._drop(hosted)
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None
        if self._subscription is not None:
            with contextlib.suppress(Exception):
                await self._subscription.unsubscribe()
            self._subscription = None

    def stats(self) -> RelayStats:
        buffers = [line.down for line in self.lines.values()]
        ended = self._ended
        return RelayStats(
            relayed_lines=len(self.lines),
            hosted_lines=len(self.hosted),
            underruns=ended.underruns + sum(b.underruns for b in buffers),
            late=ended.late + sum(b.late for b in buffers),
            dropped=ended.dropped + sum(b.dropped for b in buffers),
            bad_messages=self.bad_messages,
            delay_frames=max((b.prefill for b in buffers), default=0),
        )

    # -- the landing side ----------------------------------------------------------------------
    def link(self, key: Hashable, game_id: str, listener: Listener) -> RelayedLine:
        """The relayed line of local line `key` in `game_id`, heard as `listener` (made at the
        first call; a change of game starts a new one)."""
        line = self.lines.get(key)
        if line is not None and line.game_id != game_id:
            self.unlink(key)
            line = None
        if line is None:
            down = JitterBuffer(self.prefill, self.depth, self.most)
            line = RelayedLine(self, self._next_id, game_id, listener, down=down)
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
        # A relayed caller's gaps, told once per line: what an operator (or a failed test)
        # reads to tell a choppy relay from a silent caller.
        log.info(
            "voice_line_ended",
            game=line.game_id,
            owner=line.owner,
            node=self.node,
            ticks=line.seq,
            underruns=line.down.underruns,
            delay_frames=line.down.deepest,
            late=line.down.late,
            dropped=line.down.dropped,
        )
        self._ended.underruns += line.down.underruns
        self._ended.late += line.down.late
        self._ended.dropped += line.down.dropped
        if line.owner is not None and line.owner != self.node:
            self._publish(line.owner, [Record(GONE, line.id, line.game_id)])

    def _pull(self, line: RelayedLine) -> Int16Array | None:
        """The line's tick: its record (and frames) to the owner, the mix it sent back for
        the previous tick out of the buffer."""
        pending, line.pending = line.pending, []
        owner = self._owner(line)
        if owner is None:
            return None
        now = self.clock()
        if line.waiting_since is None:
            line.waiting_since = now
        elif now - line.waiting_since > OWNER_SILENT_S:
            log.info("voice_owner_silent", game=line.game_id, owner=owner, node=self.node)
            self._lost_owner(line)
            return None
        speaker = line.speaker if pending else 0
        records = [
            Record(UP, line.id, line.game_id, line.listener, speaker, 0, pcm)
            for pcm in pending[:-1]
        ]
        line.seq += 1
        last = pending[-1] if pending else b""
        records.append(Record(TICK, line.id, line.game_id, line.listener, speaker, line.seq, last))
        self._publish(owner, records)
        return line.down.get()

    def _owner(self, line: RelayedLine) -> str | None:
        now = self.clock()
        if line.owner is None or now >= line.next_check:
            line.next_check = now + OWNER_CHECK_S
            owner = self.owner_of(line.game_id)
            if owner is not None and owner == line.refused_by and now < line.refused_until:
                owner = None  # it said no a moment ago: not 50 times a second
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
        # A mix of a tick sent before now answers the owner left (or the line it dropped and
        # hosts anew, after a stall): it may still come, and is not played.
        line.down.reset(played=line.seq)
        line.waiting_since = None

    def _lost_owner(self, line: RelayedLine) -> None:
        self.forget(line.game_id)
        self._moved(line, None)
        line.next_check = 0.0

    def _heard_down(self, node: str, record: Record) -> None:
        line = self._by_id.get(record.line)
        if line is None or line.owner != node or line.game_id != record.game_id:
            return
        line.waiting_since = None
        if record.kind == NOT_OWNER:
            log.info("voice_owner_moved", game=line.game_id, was=node, node=self.node)
            line.refused_by, line.refused_until = node, self.clock() + OWNER_CHECK_S
            self._lost_owner(line)
        elif record.kind == HEARD:
            line.heard.update(record.pcm)
        elif record.kind == DOWN:  # a mix, or silence: either way its tick's answer came
            line.down.put(record.seq, from_pcm(record.pcm) if record.pcm else None)

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
        room = self.rooms.mixed_for(record.game_id)
        if room is None:
            if hosted is not None:
                self._drop(hosted)
            # Taking the game over: the line is hosted at its first record once the game runs.
            # Told now that it does not run here, the landing would not ask again for
            # OWNER_CHECK_S — a second more of silence for its caller after every takeover.
            if not self.taking_up(record.game_id):
                # Not (or no longer) run here: the landing looks for the owner again.
                self._publish(node, [Record(NOT_OWNER, record.line, record.game_id)])
            return
        if hosted is None:
            hosted = HostedLine(node, record.line, record.game_id, record.listener)
            self.hosted[key] = hosted
            self._sweep_later()
        if room is not hosted.room:
            self._attach(hosted, room)
        hosted.last_heard = self.clock()
        hosted.listener = record.listener
        hosted.speaker = record.speaker
        if record.pcm and record.speaker:
            room.push(record.speaker, from_pcm(record.pcm))
        if record.kind != TICK:
            return
        mix = (
            room.mixer.pull(record.listener, puller=hosted) if record.listener is not None else None
        )
        pcm = b"" if mix is None else to_pcm(mix)
        # Numbered as the landing's tick: its count runs for the line's whole life, across the
        # owner hosting it anew (a count kept here would start again, behind mixes in flight).
        down = Record(DOWN, hosted.line, hosted.game_id, hosted.listener, 0, record.seq, pcm)
        records = [down]
        if mix is not None and record.listener is not None:
            heard = bytes(
                h for h in room.mixer.heard(record.listener, SPEAKING_RMS) if h <= _MAX_HOUSE
            )
            if heard:
                records.append(
                    Record(HEARD, hosted.line, hosted.game_id, None, 0, record.seq, heard)
                )
        self._publish(node, records)

    def _attach(self, hosted: HostedLine, room: Mixed | None) -> None:
        hosted.room = room
        self.rooms.attach(hosted, room)

    def _drop(self, hosted: HostedLine) -> None:
        if self.hosted.get((hosted.node, hosted.line)) is hosted:
            del self.hosted[(hosted.node, hosted.line)]
        self._attach(hosted, None)

    def _sweep_later(self) -> None:
        if self._sweeper is None:
            loop = asyncio.get_running_loop()
            self._sweeper = loop.call_later(EXPIRE_S / 2, self._sweep)

    def _sweep(self) -> None:
        """Drop the remote lines not heard from for EXPIRE_S (their process died, or they
        moved on without a word); look again while any are left."""
        self._sweeper = None
        now = self.clock()
        for hosted in list(self.hosted.values()):
            if now - hosted.last_heard > EXPIRE_S:
                self._drop(hosted)
        if self.hosted:
            self._sweep_later()

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
            if record.kind in (UP, TICK, GONE):
                self._heard_up(node, record)
            elif record.kind in (DOWN, NOT_OWNER, HEARD):
                self._heard_down(node, record)
