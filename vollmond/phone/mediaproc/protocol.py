"""The control channel between the signalling process and a media process.

One Unix stream socket per media process carries length-prefixed messages: a 5-byte header
(payload length, big-endian u32; kind, one byte) and the payload. Three kinds:

* ``J`` — a control message, a JSON object with an ``op`` (open, update, start, close, measure
  one way; opened, failed, digit, stats, measured the other).
* ``F`` — frames for one tick, signalling → media: every call's next 20 ms that is not silence.
* ``A`` — audio of one tick, media → signalling: every call's received 20 ms, decoded. It is
  also the tick itself: the signalling side answers each with the changes since the last
  (routes, prompts to play) and the frames it still makes (:ref:`fed`, below).
* ``C`` — a prompt clip, signalling → media: its id and its samples, sent once per media
  process; ``play`` then names it (:class:`Clip`).
* ``G`` — a room's gain matrix, signalling → media, sent when the routing changed
  (:class:`Gains`): the routing table stays in the signalling process, only numbers cross.
* ``S`` — frames of a room's sources the media process does not receive itself (browser
  peers, relayed lines, calls of another media process), signalling → media, as a block whose
  ids are ``room << 10 | house`` (:func:`source_id`).

"Fed" frames (``F``) are what the signalling process still makes for a call: the whole frame
of a call it does not drive (the tests' bare endpoints, the benchmark's echo) or the room
audio of a line whose game runs on another process (the relay). Everything else a caller hears
is made in the media process: its prompts from the clips, its room from the room's copy.

Both blocks have one layout (:class:`Block`): tick index (u64), the tick's deadline (f64,
``time.monotonic``, which is the system's one monotonic clock: the same in both processes; 0 in
``F`` blocks), count (u32), the calls' ids (u32 each), then ``count × 160`` int16 samples, all
little-endian, so a block is parsed with two ``numpy.frombuffer`` calls and no per-call Python.

Everything that arrives is checked: a message that does not parse raises
:class:`ProtocolError`, which the reader logs and skips (the framing is intact); a header that
announces more than :data:`MAX_MESSAGE` bytes cannot be resynchronised and ends the channel.
"""

from __future__ import annotations

import asyncio
import json
import struct
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from vollmond.phone.g711 import codec_by_name
from vollmond.phone.media import FRAME_SAMPLES, MediaParams

HEADER: Final = struct.Struct("!IB")
BLOCK_HEAD: Final = struct.Struct("<QdI")
#: The largest message either side accepts: 300 calls' frames are about 100 kB.
MAX_MESSAGE: Final = 8 * 1024 * 1024
CONTROL: Final = ord("J")
FRAMES: Final = ord("F")
AUDIO: Final = ord("A")
CLIP: Final = ord("C")
GAINS: Final = ord("G")
SOURCES: Final = ord("S")
KINDS: Final = frozenset((CONTROL, FRAMES, AUDIO, CLIP, GAINS, SOURCES))
#: Rooms and houses in a source id of an ``S`` block (:func:`source_id`).
MAX_SEATS: Final = 1023
MAX_ROOM: Final = 2**22 - 1
#: Bins of the send-lateness histogram a media process keeps while measuring (0.1 ms each;
#: the last bin takes everything later).
LATENESS_BINS: Final = 2000
LATENESS_BIN_S: Final = 0.0001

_FRAME_BYTES: Final = FRAME_SAMPLES * 2
_MAX_ID: Final = 2**32 - 1


class ProtocolError(ValueError):
    """A control-channel message that does not parse or breaks the protocol's rules."""


def frame(kind: int, payload: bytes) -> bytes:
    """One message on the wire."""
    if len(payload) > MAX_MESSAGE:
        raise ProtocolError(f"message of {len(payload)} bytes is over the limit")
    return HEADER.pack(len(payload), kind) + payload


def read_header(data: bytes) -> tuple[int, int]:
    """(payload length, kind) of a message header; a length over the limit or an unknown kind
    cannot be skipped safely and raises."""
    if len(data) != HEADER.size:
        raise ProtocolError("short header")
    length, kind = HEADER.unpack(data)
    if length > MAX_MESSAGE:
        raise ProtocolError(f"message of {length} bytes announced")
    if kind not in KINDS:
        raise ProtocolError(f"unknown message kind {kind}")
    return length, kind


# -- blocks of audio -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Block:
    """One tick's 20 ms frames of several calls: ``samples[i]`` belongs to ``ids[i]``;
    ``deadline``: when the tick was due (``time.monotonic``; 0 where it does not matter)."""

    index: int
    ids: npt.NDArray[np.uint32]
    samples: npt.NDArray[np.int16]
    deadline: float = 0.0

    def encode(self) -> bytes:
        count = len(self.ids)
        if self.samples.shape != (count, FRAME_SAMPLES):
            raise ProtocolError("a block needs one 160-sample frame per call")
        return b"".join(
            (
                BLOCK_HEAD.pack(self.index, self.deadline, count),
                self.ids.astype("<u4", copy=False).tobytes(),
                self.samples.astype("<i2", copy=False).tobytes(),
            )
        )

    @classmethod
    def decode(cls, payload: bytes) -> Block:
        if len(payload) < BLOCK_HEAD.size:
            raise ProtocolError("short block")
        index, deadline, count = BLOCK_HEAD.unpack_from(payload)
        if not 0.0 <= deadline < 1e12:  # NaN and infinities fail too
            raise ProtocolError("a block's deadline is out of range")
        if len(payload) != BLOCK_HEAD.size + count * (4 + _FRAME_BYTES):
            raise ProtocolError("block length does not match its count")
        ids = np.frombuffer(payload, dtype="<u4", count=count, offset=BLOCK_HEAD.size)
        samples = np.frombuffer(payload, dtype="<i2", offset=BLOCK_HEAD.size + 4 * count)
        # A copy in native order: the frames go on into mixers that may work in place.
        frames = samples.reshape(count, FRAME_SAMPLES).astype(np.int16)
        return cls(index, ids.astype(np.uint32), frames, deadline)


def source_id(room: int, house: int) -> int:
    """The id of house ``house``'s frame in room ``room`` in an ``S`` block."""
    return room << 10 | house


def split_source(ident: int) -> tuple[int, int]:
    """(room, house) of an ``S`` block's id."""
    return ident >> 10, ident & MAX_SEATS


_CLIP_HEAD: Final = struct.Struct("<Q")
_GAINS_HEAD: Final = struct.Struct("<II")


@dataclass(frozen=True, slots=True)
class Clip:
    """A prompt's audio (8 kHz int16), sent once; ``play`` names it by ``clip``."""

    clip: int
    samples: npt.NDArray[np.int16]

    def encode(self) -> bytes:
        return _CLIP_HEAD.pack(self.clip) + self.samples.astype("<i2", copy=False).tobytes()

    @classmethod
    def decode(cls, payload: bytes) -> Clip:
        if len(payload) < _CLIP_HEAD.size or (len(payload) - _CLIP_HEAD.size) % 2:
            raise ProtocolError("a clip is an id and whole samples")
        (clip,) = _CLIP_HEAD.unpack_from(payload)
        samples = np.frombuffer(payload, dtype="<i2", offset=_CLIP_HEAD.size).astype(np.int16)
        return cls(clip, samples)


@dataclass(frozen=True, slots=True)
class Gains:
    """Room ``room``'s gain matrix: ``seats + 1`` rows (houses, then the spectators) of
    ``seats`` columns, as :func:`vollmond.voice.mixer.gain_matrix` makes it."""

    room: int
    gains: npt.NDArray[np.float32]

    def encode(self) -> bytes:
        rows, seats = self.gains.shape
        if rows != seats + 1:
            raise ProtocolError("gains need one row more than columns")
        head = _GAINS_HEAD.pack(self.room, seats)
        return head + self.gains.astype("<f4", copy=False).tobytes()

    @classmethod
    def decode(cls, payload: bytes) -> Gains:
        if len(payload) < _GAINS_HEAD.size:
            raise ProtocolError("short gains")
        room, seats = _GAINS_HEAD.unpack_from(payload)
        if not 1 <= seats <= MAX_SEATS or room > MAX_ROOM:
            raise ProtocolError("gains of an impossible room")
        if len(payload) != _GAINS_HEAD.size + 4 * seats * (seats + 1):
            raise ProtocolError("gains' length does not match their room")
        gains = np.frombuffer(payload, dtype="<f4", offset=_GAINS_HEAD.size)
        matrix = gains.reshape(seats + 1, seats).astype(np.float32)
        if not np.all(np.isfinite(matrix)) or float(np.abs(matrix).max(initial=0.0)) > 16.0:
            raise ProtocolError("gains out of range")
        return cls(room, matrix)


# -- control messages ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Open:
    """Bind an RTP port on ``host`` for call ``call`` (answered by Opened or Failed)."""

    call: int
    host: str
    params: MediaParams


@dataclass(frozen=True, slots=True)
class Update:
    """A re-negotiation (re-INVITE, the late offer's ACK)."""

    call: int
    params: MediaParams


@dataclass(frozen=True, slots=True)
class Start:
    """The ACK came: send the call's frames from the next tick."""

    call: int


@dataclass(frozen=True, slots=True)
class Close:
    """The call ended: stop and release the port."""

    call: int


@dataclass(frozen=True, slots=True)
class Measure:
    """Start (``on``) or end a measurement of send lateness; ending it answers Measured."""

    on: bool


@dataclass(frozen=True, slots=True)
class Route:
    """Where call ``call``'s room audio comes from and where its voice goes, in the media
    process: it hears row ``listener`` of room ``room`` (None: no room) and speaks as house
    ``source`` there (None: heard by nobody — muted, spectating, in a menu). ``fed``: its room
    audio is made by the signalling process and comes in ``F`` blocks (a relayed game)."""

    call: int
    room: int | None
    listener: int | None
    source: int | None
    fed: bool = False


@dataclass(frozen=True, slots=True)
class PlayItem:
    """One prompt of a playlist: ``tag`` names it in ``played``; ``offset``: the sample to
    start at, None to go on where it is (it is playing already)."""

    tag: int
    clip: int
    offset: int | None


@dataclass(frozen=True, slots=True)
class Play:
    """Call ``call``'s prompts from now on, back to back (empty: stop — a barge-in)."""

    call: int
    items: tuple[PlayItem, ...]


@dataclass(frozen=True, slots=True)
class Forget:
    """Clip ``clip`` will not be played again: its samples may go."""

    clip: int


@dataclass(frozen=True, slots=True)
class DropRoom:
    """Room ``room`` has no call of this media process any more."""

    room: int


@dataclass(frozen=True, slots=True)
class Played:
    """The prompts tagged ``tags`` of call ``call`` were played to their end."""

    call: int
    tags: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Opened:
    call: int
    port: int


@dataclass(frozen=True, slots=True)
class Failed:
    """Opening the call's port failed (``error`` says why); the INVITE gets a 503."""

    call: int
    error: str


@dataclass(frozen=True, slots=True)
class Digit:
    call: int
    key: str


@dataclass(frozen=True, slots=True)
class CallStats:
    """A call's counters in the media process; ``quiet_s``: seconds since its last packet."""

    call: int
    latched: tuple[str, int] | None
    sent: int
    unsent: int
    received: int
    foreign: int
    dropped: int
    quiet_s: float


@dataclass(frozen=True, slots=True)
class Stats:
    """Sent twice a second: every call's counters and the clock's."""

    calls: tuple[CallStats, ...]
    counters: dict[str, int]
    #: How long before its deadline the clock starts making a tick (MediaTicker.lead_s).
    lead_s: float = 0.0


@dataclass(frozen=True, slots=True)
class Measured:
    """Since Measure(on): the send lateness of every packet (a histogram of 0.1 ms bins),
    how long after its cue (the tick LEAD_TICKS before its own) each block of frames came from
    the signalling process (the same bins), and the clock's counters."""

    histogram: tuple[int, ...]
    response: tuple[int, ...]
    counters: dict[str, int]
    #: (call, time.monotonic) of the first audible frame of every prompt that began playing
    #: (benchmarks: a key's answer is the first to begin after the key).
    starts: tuple[tuple[int, float], ...] = ()


Control = (
    Open
    | Update
    | Start
    | Close
    | Measure
    | Route
    | Play
    | Forget
    | DropRoom
    | Opened
    | Failed
    | Digit
    | Stats
    | Measured
    | Played
)
#: Prompts a playlist may hold at once.
MAX_PLAYLIST: Final = 64

_KEYS: Final = frozenset("0123456789*#ABCD")


def _params_json(params: MediaParams) -> dict[str, object]:
    return {
        "remote": [params.remote[0], params.remote[1]],
        "codec": params.codec.name,
        "audio_pt": params.audio_pt,
        "dtmf_pt": params.dtmf_pt,
        "send": params.send,
    }


def _stats_row(c: CallStats) -> list[object]:
    latched = list(c.latched) if c.latched else None
    return [c.call, latched, c.sent, c.unsent, c.received, c.foreign, c.dropped, c.quiet_s]


def encode_control(message: Control) -> bytes:
    """The JSON payload of a control message."""
    body: dict[str, object]
    match message:
        case Open(call, host, params):
            body = {"op": "open", "call": call, "host": host, "params": _params_json(params)}
        case Update(call, params):
            body = {"op": "update", "call": call, "params": _params_json(params)}
        case Start(call):
            body = {"op": "start", "call": call}
        case Close(call):
            body = {"op": "close", "call": call}
        case Measure(on):
            body = {"op": "measure", "on": on}
        case Route(call, room, listener, source, fed):
            body = {
                "op": "route",
                "call": call,
                "room": room,
                "listener": listener,
                "source": source,
                "fed": fed,
            }
        case Play(call, items):
            playlist = [[i.tag, i.clip, i.offset] for i in items]
            body = {"op": "play", "call": call, "items": playlist}
        case Forget(clip):
            body = {"op": "forget", "clip": clip}
        case DropRoom(room):
            body = {"op": "drop_room", "room": room}
        case Played(call, tags):
            body = {"op": "played", "call": call, "tags": list(tags)}
        case Opened(call, port):
            body = {"op": "opened", "call": call, "port": port}
        case Failed(call, error):
            body = {"op": "failed", "call": call, "error": error}
        case Digit(call, key):
            body = {"op": "digit", "call": call, "key": key}
        case Stats(calls, counters, lead_s):
            rows = [_stats_row(c) for c in calls]
            body = {"op": "stats", "calls": rows, "counters": counters, "lead": lead_s}
        case Measured(histogram, response, counters, starts):
            body = {
                "op": "measured",
                "histogram": list(histogram),
                "response": list(response),
                "counters": counters,
                "starts": [list(start) for start in starts],
            }
    return json.dumps(body, separators=(",", ":")).encode()


def _int(value: object, what: str, low: int = 0, high: int = _MAX_ID) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise ProtocolError(f"{what} must be an integer in {low}..{high}")
    return value


def _str(value: object, what: str, limit: int = 256) -> str:
    if not isinstance(value, str) or len(value) > limit:
        raise ProtocolError(f"{what} must be a string of at most {limit} characters")
    return value


def _address(value: object, what: str) -> tuple[str, int]:
    if not isinstance(value, list) or len(value) != 2:
        raise ProtocolError(f"{what} must be [host, port]")
    return _str(value[0], what), _int(value[1], what, 0, 65535)


def _params(value: object) -> MediaParams:
    if not isinstance(value, dict):
        raise ProtocolError("params must be an object")
    try:
        codec = codec_by_name(_str(value.get("codec"), "codec", 8))
    except KeyError as exc:
        raise ProtocolError("unknown codec") from exc
    dtmf = value.get("dtmf_pt")
    send = value.get("send")
    if not isinstance(send, bool):
        raise ProtocolError("send must be true or false")
    return MediaParams(
        remote=_address(value.get("remote"), "remote"),
        codec=codec,
        audio_pt=_int(value.get("audio_pt"), "audio_pt", 0, 127),
        dtmf_pt=None if dtmf is None else _int(dtmf, "dtmf_pt", 0, 127),
        send=send,
    )


def _counters(value: object) -> dict[str, int]:
    if not isinstance(value, dict) or len(value) > 64:
        raise ProtocolError("counters must be an object")
    return {_str(k, "counter", 64): _int(v, "counter", 0, 2**63) for k, v in value.items()}


def _number(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 1e9:
        raise ProtocolError(f"{what} must be a non-negative number")
    return float(value)


def _histogram(value: object) -> tuple[int, ...]:
    if not isinstance(value, list) or len(value) != LATENESS_BINS:
        raise ProtocolError(f"a histogram is a list of {LATENESS_BINS} counts")
    return tuple(_int(v, "bin", 0, 2**63) for v in value)


def _call_stats(row: object) -> CallStats:
    if not isinstance(row, list) or len(row) != 8:
        raise ProtocolError("a call's stats are a list of 8")
    latched = None if row[1] is None else _address(row[1], "latched")
    sent, unsent, received, foreign, dropped = (_int(v, "count", 0, 2**63) for v in row[2:7])
    call = _int(row[0], "call")
    quiet = _number(row[7], "quiet_s")
    return CallStats(call, latched, sent, unsent, received, foreign, dropped, quiet)


def _optional(value: object, what: str, high: int) -> int | None:
    return None if value is None else _int(value, what, 0, high)


def _play_item(row: object) -> PlayItem:
    if not isinstance(row, list) or len(row) != 3:
        raise ProtocolError("a playlist item is [tag, clip, offset]")
    tag = _int(row[0], "tag", 0, 2**53)
    clip = _int(row[1], "clip", 0, 2**53)
    return PlayItem(tag, clip, _optional(row[2], "offset", 2**31))


def _start(row: object) -> tuple[int, float]:
    if not isinstance(row, list) or len(row) != 2:
        raise ProtocolError("a start is [call, time]")
    return _int(row[0], "call"), _number(row[1], "time")


def _measured(body: dict[str, object]) -> Measured:
    histogram = _histogram(body.get("histogram"))
    response = _histogram(body.get("response"))
    starts = body.get("starts", [])
    if not isinstance(starts, list) or len(starts) > 100_000:
        raise ProtocolError("starts must be a list")
    counters = _counters(body.get("counters"))
    return Measured(histogram, response, counters, tuple(_start(row) for row in starts))


def decode_control(payload: bytes) -> Control:
    """The control message in ``payload``; anything else raises :class:`ProtocolError`."""
    try:
        body = json.loads(payload)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ProtocolError("not JSON") from exc
    if not isinstance(body, dict):
        raise ProtocolError("a control message is a JSON object")
    op = body.get("op")
    match op:
        case "open":
            call = _int(body.get("call"), "call")
            return Open(call, _str(body.get("host"), "host"), _params(body.get("params")))
        case "update":
            return Update(_int(body.get("call"), "call"), _params(body.get("params")))
        case "start":
            return Start(_int(body.get("call"), "call"))
        case "close":
            return Close(_int(body.get("call"), "call"))
        case "measure":
            on = body.get("on")
            if not isinstance(on, bool):
                raise ProtocolError("on must be true or false")
            return Measure(on)
        case "route":
            fed = body.get("fed")
            if not isinstance(fed, bool):
                raise ProtocolError("fed must be true or false")
            return Route(
                _int(body.get("call"), "call"),
                _optional(body.get("room"), "room", MAX_ROOM),
                _optional(body.get("listener"), "listener", MAX_SEATS),
                _optional(body.get("source"), "source", MAX_SEATS),
                fed,
            )
        case "play":
            items = body.get("items")
            if not isinstance(items, list) or len(items) > MAX_PLAYLIST:
                raise ProtocolError(f"items must be a list of at most {MAX_PLAYLIST}")
            return Play(_int(body.get("call"), "call"), tuple(_play_item(i) for i in items))
        case "forget":
            return Forget(_int(body.get("clip"), "clip", 0, 2**53))
        case "drop_room":
            return DropRoom(_int(body.get("room"), "room", 0, MAX_ROOM))
        case "played":
            tags = body.get("tags")
            if not isinstance(tags, list) or len(tags) > MAX_PLAYLIST:
                raise ProtocolError("tags must be a short list")
            call = _int(body.get("call"), "call")
            return Played(call, tuple(_int(t, "tag", 0, 2**53) for t in tags))
        case "opened":
            port = _int(body.get("port"), "port", 1, 65535)
            return Opened(_int(body.get("call"), "call"), port)
        case "failed":
            return Failed(_int(body.get("call"), "call"), _str(body.get("error"), "error", 1000))
        case "digit":
            key = _str(body.get("key"), "key", 1)
            if key not in _KEYS:
                raise ProtocolError("not a key")
            return Digit(_int(body.get("call"), "call"), key)
        case "stats":
            rows = body.get("calls")
            if not isinstance(rows, list):
                raise ProtocolError("calls must be a list")
            calls = tuple(_call_stats(row) for row in rows)
            return Stats(calls, _counters(body.get("counters")), _number(body.get("lead"), "lead"))
        case "measured":
            return _measured(body)
    raise ProtocolError(f"unknown op {op!r}")


async def read_message(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """The next (kind, payload); :class:`asyncio.IncompleteReadError` at the channel's end, and
    :class:`ProtocolError` for a header that cannot be skipped."""
    length, kind = read_header(await reader.readexactly(HEADER.size))
    return kind, await reader.readexactly(length)
