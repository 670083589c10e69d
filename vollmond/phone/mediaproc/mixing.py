"""What a call hears, made in the media process: its prompts over its room.

The signalling process decides (the routing table, the prompt queue's rules); this module only
plays and mixes what it was told, on the media process's own clock:

* a room is a :class:`~vollmond.voice.mixer.GameMixer`, the same class the signalling process
  mixes with, holding the gain matrix sent when the routing changed (``G``); the calls of this
  media process push their voice into it at the tick they are received, the room's other
  sources (browser peers, relayed lines) come in ``S`` blocks;
* a call's prompts are a :class:`Playlist` of clips (``C``, sent once per media process), played
  back to back; the end of each is reported (``played``) so the signalling process's queue
  moves on.

A call hears ``overlay(prompt, room)`` — the function the in-process path uses — so a line
sounds the same in both modes. The media process's tick makes every driven call's frame at
once (:meth:`Mixing.fill` with a :class:`MixPlan`, made again only when a line, a room or the
clock's order changed): the same samples as :meth:`Mixing.frame` call by call, with no Python
per call but for the calls playing a prompt. Secrecy needs nothing here: a call hears one
row of one room's matrix, and the matrix is the routing table's.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from vollmond.engine.ruleset import SPECTATORS
from vollmond.phone.mediaproc import protocol as p
from vollmond.voice.frames import FRAME_SAMPLES, Int16Array
from vollmond.voice.mixer import GameMixer, overlay

#: Tags a playlist remembers as played, so a playlist crossing its own ``played`` report on
#: the way does not play a finished prompt again.
_REMEMBERED = 16
#: Prompt starts kept for the next measurement.
STARTS_KEPT = 10_000


@dataclass(eq=False)
class _Item:
    tag: int
    clip: Int16Array
    pos: int


class Playlist:
    """One call's prompts, played back to back, 160 samples a tick."""

    def __init__(self) -> None:
        self._items: deque[_Item] = deque()
        self._done: deque[int] = deque(maxlen=_REMEMBERED)
        #: Tags finished since the last :meth:`take_played`.
        self.played: list[int] = []
        #: The tag whose first frame the last :meth:`next_frame` began (None: none began).
        self.began: int | None = None

    def replace(self, items: list[tuple[int, Int16Array, int | None]]) -> None:
        """Play these from now on (tag, clip, offset; offset None: a prompt that is playing
        goes on where it is, one that is not starts at 0)."""
        current = {item.tag: item.pos for item in self._items}
        fresh: deque[_Item] = deque()
        for tag, clip, offset in items:
            if tag in self._done:
                continue
            pos = current.get(tag, 0) if offset is None else offset
            fresh.append(_Item(tag, clip, min(max(pos, 0), len(clip))))
        self._items = fresh

    @property
    def busy(self) -> bool:
        return bool(self._items)

    def next_frame(self) -> Int16Array | None:
        """The next 20 ms of prompts (None: nothing to play)."""
        items = self._items
        if not items:
            return None
        head = items[0]
        if head.pos and head.pos + FRAME_SAMPLES < len(head.clip):  # the common frame: a view
            self.began = None
            frame = head.clip[head.pos : head.pos + FRAME_SAMPLES]
            head.pos += FRAME_SAMPLES
            return frame
        out = np.zeros(FRAME_SAMPLES, dtype=np.int16)
        filled = 0
        self.began = None
        while filled < FRAME_SAMPLES and items:
            head = items[0]
            if head.pos == 0 and self.began is None:
                self.began = head.tag
            chunk = head.clip[head.pos : head.pos + FRAME_SAMPLES - filled]
            out[filled : filled + len(chunk)] = chunk
            filled += len(chunk)
            head.pos += len(chunk)
            if head.pos >= len(head.clip):
                items.popleft()
                self._done.append(head.tag)
                self.played.append(head.tag)
        return out


@dataclass(eq=False, slots=True)
class _RoomPlan:
    """One room's pullers in a batched tick: ``pullers[i]`` hears row ``rows[i]`` (-1: none)
    and is row ``out_rows[i]`` of the batch."""

    room: GameMixer
    rows: npt.NDArray[np.intp]
    out_rows: npt.NDArray[np.intp]
    pullers: list[int]


@dataclass(eq=False, slots=True)
class MixPlan:
    """How a batched tick goes through its calls (:meth:`Mixing.plan`)."""

    version: int
    #: (batch row, call, line) of every call, in the clock's order.
    lines: list[tuple[int, int, MixLine]]
    #: The same by call.
    places: dict[int, tuple[int, int, MixLine]]
    rows: npt.NDArray[np.intp]
    #: (batch row, call) of the lines whose room audio the signalling process makes.
    fed: list[tuple[int, int]]
    rooms: list[_RoomPlan]
    #: The batch rows of the rooms' pullers, room after room.
    room_out: npt.NDArray[np.intp]
    #: Where each of them finds its row in the rooms' mixes laid end to end.
    gather: npt.NDArray[np.intp]
    #: False for a puller whose row is outside its room (None: there is none).
    valid: npt.NDArray[np.bool_] | None


@dataclass(eq=False)
class MixLine:
    """One call as the media process mixes it. ``driven``: the signalling process routes it
    (or plays it a prompt); a call never driven takes its whole frame from ``F`` blocks."""

    driven: bool = False
    room: int | None = None
    listener: int | None = None
    source: int | None = None
    fed: bool = False
    playlist: Playlist = field(default_factory=Playlist)
    #: A prompt began and its first audible frame is still to come.
    awaiting: bool = False


class Mixing:
    """The rooms, clips and lines of one media process."""

    def __init__(self) -> None:
        self.rooms: dict[int, GameMixer] = {}
        self.clips: dict[int, Int16Array] = {}
        self.lines: dict[int, MixLine] = {}
        self.prompt_frames = 0
        self.mixed_frames = 0
        self.unknown_clips = 0
        #: Counts changes of the lines and rooms (not of gains or prompts), so the batched
        #: tick's :class:`MixPlan` is made again only when its grouping may have changed.
        self.version = 0
        #: Calls whose playlist may be busy (a superset: the batched tick looks only at these).
        self.playing: set[int] = set()
        #: (call, time) of each prompt's first audible frame, since the last Measured (the
        #: latest STARTS_KEPT): a benchmark's key-to-answer.
        self.starts: deque[tuple[int, float]] = deque(maxlen=STARTS_KEPT)

    def line(self, call: int) -> MixLine:
        line = self.lines.get(call)
        if line is None:
            line = self.lines[call] = MixLine()
        return line

    def forget_call(self, call: int) -> None:
        self.playing.discard(call)
        if self.lines.pop(call, None) is not None:
            self.version += 1

    # -- what the signalling process says --------------------------------------------------------
    def gains(self, message: p.Gains) -> None:
        seats = message.gains.shape[1]
        room = self.rooms.get(message.room)
        if room is None or room.seats != seats:
            room = self.rooms[message.room] = GameMixer(seats)
            self.version += 1
        room.set_gains(message.gains)

    def drop_room(self, room: int) -> None:
        self.version += 1
        self.rooms.pop(room, None)
        for line in self.lines.values():
            if line.room == room:
                line.room = line.listener = line.source = None

    def route(self, message: p.Route) -> None:
        """A call's place; a room not known yet (its gains come first) or a row outside it
        is refused, so a call can never hear a row that is not its own."""
        if message.room is not None:
            room = self.rooms.get(message.room)
            if room is None:
                raise p.ProtocolError(f"no room {message.room}")
            if message.listener is not None and message.listener > room.seats:
                raise p.ProtocolError("a listener outside its room")
            if message.source is not None and not 1 <= message.source <= room.seats:
                raise p.ProtocolError("a source outside its room")
        line = self.line(message.call)
        place = (
            True,
            message.room,
            message.listener if message.room is not None else None,
            message.source if message.room is not None else None,
            message.fed,
        )
        if place != (line.driven, line.room, line.listener, line.source, line.fed):
            line.driven, line.room, line.listener, line.source, line.fed = place
            self.version += 1

    def play(self, message: p.Play) -> None:
        items: list[tuple[int, Int16Array, int | None]] = []
        for item in message.items:
            clip = self.clips.get(item.clip)
            if clip is None:  # a clip forgotten meanwhile: nothing to play for it
                self.unknown_clips += 1
                continue
            items.append((item.tag, clip, item.offset))
        line = self.line(message.call)
        if not line.driven:
            line.driven = True
            self.version += 1
        line.playlist.replace(items)
        if line.playlist.busy:
            self.playing.add(message.call)

    def sources(self, block: p.Block) -> None:
        """Frames of sources the media process does not receive (``S``)."""
        for row, ident in enumerate(block.ids.tolist()):
            room_id, house = p.split_source(ident)
            room = self.rooms.get(room_id)
            if room is not None:
                room.push(house, block.samples[row])

    # -- the tick ------------------------------------------------------------------------------
    def heard(self, call: int, samples: Int16Array) -> None:
        """A call's voice, received at this tick: into its room as its house."""
        line = self.lines.get(call)
        if line is None or line.source is None or line.room is None:
            return
        room = self.rooms.get(line.room)
        if room is not None:
            room.push(line.source, samples)

    def frame(self, call: int, line: MixLine, fed: Int16Array | None) -> Int16Array | None:
        """What a driven call hears at this tick: its prompt over its room. ``fed``, from the
        signalling process, is the room audio of a relayed game (``line.fed``), or else a
        prompt of a session without a prompt queue."""
        prompt = line.playlist.next_frame()
        if prompt is not None:
            self.prompt_frames += 1
            line.awaiting = line.awaiting or line.playlist.began is not None
            if line.awaiting and prompt.any():  # the first audible frame, as in process
                self.starts.append((call, time.monotonic()))
                line.awaiting = False
        elif not line.fed:
            prompt = fed  # made in the signalling process (a session without a prompt queue)
        room_audio: Int16Array | None = None
        if line.fed:
            room_audio = fed
        elif line.room is not None and line.listener is not None:
            room = self.rooms.get(line.room)
            if room is not None:
                room_audio = _pull(room, line.listener, call)
                if room_audio is not None:
                    self.mixed_frames += 1
        return overlay(prompt, room_audio)

    def plan(self, calls: Sequence[tuple[int, int]]) -> MixPlan:
        """The grouping of a batched tick for these ``(batch row, call)`` pairs (driven
        calls, in the clock's order): each room's pullers with their rows, the fed lines.
        Valid while :attr:`version` is unchanged."""
        lines: list[tuple[int, int, MixLine]] = []
        fed: list[tuple[int, int]] = []
        pulls: dict[int, tuple[GameMixer, list[int], list[int], list[int]]] = {}
        for row, call in calls:
            line = self.lines[call]
            lines.append((row, call, line))
            if line.fed:
                fed.append((row, call))
                continue
            if line.room is None or line.listener is None:
                continue
            room = self.rooms.get(line.room)
            if room is None:
                continue
            _, out_rows, room_rows, pullers = pulls.setdefault(line.room, (room, [], [], []))
            out_rows.append(row)
            room_rows.append(line.listener if 0 <= line.listener <= room.seats else -1)
            pullers.append(call)
        rooms: list[_RoomPlan] = []
        gather: list[int] = []
        offset = 0
        for room, out_rows, room_rows, pullers in pulls.values():
            rows = np.asarray(room_rows, np.intp)
            rooms.append(_RoomPlan(room, rows, np.asarray(out_rows, np.intp), pullers))
            gather.extend(offset + max(row, 0) for row in room_rows)
            offset += room.seats + 1
        room_rows_all = [row for room in rooms for row in room.rows.tolist()]
        valid = np.asarray([row >= 0 for row in room_rows_all], bool)
        return MixPlan(
            self.version,
            lines,
            {call: (row, call, line) for row, call, line in lines},
            np.asarray([row for row, _ in calls], np.intp),
            fed,
            rooms,
            np.asarray([row for room in rooms for row in room.out_rows.tolist()], np.intp),
            np.asarray(gather, np.intp),
            None if valid.all() else valid,
        )

    def fill(
        self, plan: MixPlan, fed: Mapping[int, int], samples: Int16Array, out: Int16Array
    ) -> None:
        """The batched tick of the plan's calls: what :meth:`frame` gives each, written to
        its row of ``out`` (zeros where it returns None), the same samples and counters.

        ``fed`` maps a call to its row of ``samples`` (this tick's ``F`` block). Per call,
        only a prompt playing costs Python; the rooms are one :meth:`GameMixer.pull_all`
        each, and the prompts go over their rooms in one :func:`overlay`.
        """
        out[plan.rows] = 0
        heard = np.zeros(len(out), bool)  # the rows that have room audio
        if plan.rooms:
            self._rooms_into(plan, out, heard)
        for row, call in plan.fed:
            fed_row = fed.get(call)
            if fed_row is not None:
                out[row] = samples[fed_row]
                heard[row] = True
        self._prompts_over(plan, fed, samples, out, heard)

    def _rooms_into(self, plan: MixPlan, out: Int16Array, heard: npt.NDArray[np.bool_]) -> None:
        """Each room mixes (at most) once; every puller's row is taken from the mixes laid
        end to end in one index, a line that pulled first from the last tick's mix."""
        mixes: list[Int16Array] = []
        hears: list[npt.NDArray[np.bool_]] = []
        early = []
        for room in plan.rooms:
            k, before, after = room.room.pull_all(room.pullers)
            mixes.append(after[0])
            hears.append(after[1])
            if k:  # lines new to the room pulled first: they hear the last tick's mix
                early.append((room, k, before))
        audible = np.concatenate(hears)[plan.gather]
        if plan.valid is not None:
            audible &= plan.valid
        frames = np.concatenate(mixes)[plan.gather]
        frames[~audible] = 0
        out[plan.room_out] = frames
        heard[plan.room_out] = audible
        for room, k, (mix, hear) in early:
            rows, out_rows = room.rows[:k], room.out_rows[:k]
            hears_early = hear[rows] & (rows >= 0)
            out[out_rows] = mix[rows] * hears_early[:, None]
            heard[out_rows] = hears_early
        self.mixed_frames += int(np.count_nonzero(heard[plan.room_out]))

    def _prompts_over(
        self,
        plan: MixPlan,
        fed: Mapping[int, int],
        samples: Int16Array,
        out: Int16Array,
        heard: npt.NDArray[np.bool_],
    ) -> None:
        """Every prompt frame of this tick, over its line's room audio (``overlay``, all rows
        at once); a line with a prompt and no room audio hears the prompt as it is."""
        prompt_rows: list[int] = []
        prompts: list[Int16Array] = []
        lines = plan.lines
        if not fed:  # only lines playing a prompt have one (no session's own frames to take)
            places = plan.places
            lines = sorted(places[call] for call in self.playing if call in places)
        for row, call, line in lines:
            playlist = line.playlist
            prompt = playlist.next_frame() if playlist.busy else None
            if prompt is not None:
                self.prompt_frames += 1
                line.awaiting = line.awaiting or playlist.began is not None
                if line.awaiting and prompt.any():  # the first audible frame, as in process
                    self.starts.append((call, time.monotonic()))
                    line.awaiting = False
                if not playlist.busy:
                    self.playing.discard(call)
            elif not line.fed and fed and call in fed:
                prompt = samples[fed[call]]  # a session without a prompt queue
            else:
                continue
            prompt_rows.append(row)
            prompts.append(prompt)
        if not prompt_rows:
            return
        rows = np.asarray(prompt_rows, np.intp)
        over = np.stack(prompts)
        under = heard[rows]
        if under.any():
            mixed = overlay(over, out[rows])
            assert mixed is not None
            over = np.where(under[:, None], mixed, over)
        out[rows] = over

    def take_played(self) -> list[p.Played]:
        reports = []
        for call, line in self.lines.items():
            if line.playlist.played:
                reports.append(p.Played(call, tuple(line.playlist.played)))
                line.playlist.played = []
        return reports


def _pull(room: GameMixer, row: int, call: int) -> Int16Array | None:
    """Row ``row`` of the room (houses 0..seats-1, then the spectators)."""
    listener = SPECTATORS if row == room.seats else row + 1
    return room.pull(listener, puller=call)  # a copy is pulled by this process's calls only
