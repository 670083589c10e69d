"""Voice rooms: per game, per 20 ms tick, every listener's mix is one matrix product.

The rule set's routing table (`RuleSet.routing`, :mod:`vollmond.engine.ruleset`) says who hears
whom at what gain; this module only multiplies. Rows of the gain matrix ``G`` are listeners
(house 1..n, then the spectators), columns are sources (house 1..n)::

    out = G @ frames        # (listeners, 160) = (listeners, sources) @ (sources, 160)

followed by a limiter per listener. ``G`` is rebuilt only when the game state changes, so the
secrecy of the rooms lives entirely in the routing table and is tested there without audio.

A tick has no clock of its own: the media ticker pulls every call's next frame once per
20 ms, so the first listener that pulls a *second* time starts the next mix. Received frames
wait in a short per-source queue (a jitter buffer of at most :data:`MAX_QUEUED` frames) and
each mix takes one frame per source; a source with nothing queued is silent, and a source that
keeps more than one frame waiting for :data:`CATCH_UP_TICKS` ticks loses one, so a burst does
not leave a standing delay.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Sequence

import numpy as np
import numpy.typing as npt

from vollmond.engine.ruleset import SPECTATORS, Listener, RoutingTable
from vollmond.voice.frames import FRAME_SAMPLES, Int16Array

Float32Array = npt.NDArray[np.float32]
BoolArray = npt.NDArray[np.bool_]
#: Every row of one tick's mix: the frames, and whether each row hears anything.
Mix = tuple[Int16Array, BoolArray]

#: Frames a source may queue before the oldest is dropped (100 ms). A source keeps one
#: waiting in normal running; the room above is for a burst — what a source sent while the
#: process stalled, delivered at once — which is then played late and shed by the catch-up
#: below, not dropped (three, until session 18, lost a frame at every stall of 60 ms: the
#: relayed line's buffer grows to five frames for the same reason, docs/decisions.md).
MAX_QUEUED = 5
#: Ticks in a row a source may have more than one frame waiting before one is skipped (0.5 s):
#: a burst (network jitter, a line whose clock has another phase than the mixer's ticks)
#: would otherwise leave its extra frames as a delay for as long as the source speaks.
CATCH_UP_TICKS = 25
#: The limiter keeps every mix below this level (of int16 full scale).
CEILING = 0.89 * 32767
#: Per tick, the limiter gain recovers this fraction of the way back to 1 (about 0.2 s).
RELEASE = 0.1
#: A house counts as speaking above this RMS (of int16 full scale; about -40 dBFS): the
#: browser's speaking indicator, for a peer on the game's process and a relayed one alike.
SPEAKING_RMS = 300.0
#: Room audio under a spoken prompt (the room is ducked so the prompt is understood).
ROOM_UNDER_PROMPT = 0.3

#: Takes one recorded 20 ms frame; must not block (the media clock calls it).
FrameSink = Callable[[Int16Array], None]
#: Told of every frame pushed into a mixer (house, frame): a media process mixing a copy of
#: this room hears the sources it does not receive itself (browser peers, relayed lines).
PushTee = Callable[[int, Int16Array], None]


def gain_matrix(table: RoutingTable, seats: int) -> Float32Array:
    """The dense gain matrix of a routing table: rows are houses 1..``seats`` then the
    spectators, columns houses 1..``seats``.

    >>> from types import SimpleNamespace as Route
    >>> to_1, to_spectators = Route(source=2, gain=1.0), Route(source=1, gain=0.25)
    >>> table = {1: (to_1,), 2: (), "spectators": (to_spectators,)}
    >>> gain_matrix(table, 2).tolist()
    [[0.0, 1.0], [0.0, 0.0], [0.25, 0.0]]
    """
    g = np.zeros((seats + 1, seats), dtype=np.float32)
    for listener, routes in table.items():
        row = seats if listener == SPECTATORS else int(listener) - 1
        if not 0 <= row <= seats:
            continue
        for route in routes:
            if 1 <= route.source <= seats:
                g[row, route.source - 1] = route.gain
    return g


def limit(mix: Float32Array, gains: Float32Array) -> Float32Array:
    """A peak limiter per row with instant attack and smooth release (``gains`` is updated in
    place and carries over to the next tick); a final clip only catches rounding."""
    peaks = np.max(np.abs(mix), axis=1)
    target = np.minimum(1.0, CEILING / np.maximum(peaks, 1.0)).astype(np.float32)
    recovered = gains + (1.0 - gains) * RELEASE
    np.minimum(target, recovered, out=gains)
    out = mix * gains[:, None]
    np.clip(out, -32767.0, 32767.0, out=out)
    return out


def overlay(prompt: Int16Array | None, room: Int16Array | None) -> Int16Array | None:
    """A listener's line: the prompt on top, the room ducked under it (or either alone)."""
    if prompt is None:
        return room
    if room is None:
        return prompt
    ducked = (room.astype(np.float32) * ROOM_UNDER_PROMPT).astype(np.int32)
    mixed: Int16Array = np.clip(prompt.astype(np.int32) + ducked, -32767, 32767).astype(np.int16)
    return mixed


class GameMixer:
    """The rooms of one game: sources go in with :meth:`push`, each listener pulls its mix."""

    def __init__(self, seats: int) -> None:
        self.seats = seats
        self._g = np.zeros((seats + 1, seats), dtype=np.float32)
        self._links = np.zeros((seats + 1, seats), dtype=np.float32)  # 1 where G != 0
        self._active = np.zeros(seats, dtype=np.float32)  # 1 for a source in this tick's mix
        self._unity = True  # every limiter gain is 1: the limiter has nothing to undo
        self._queues: list[deque[Int16Array]] = [deque() for _ in range(seats)]
        self._queued = 0
        self._backlog = [0] * seats  # ticks in a row a source had more than one frame waiting
        #: Frames skipped to shed a standing delay (CATCH_UP_TICKS), and dropped because a
        #: source's queue was full (MAX_QUEUED).
        self.skipped = 0
        self.overflowed = 0
        self._frames = np.zeros((seats, FRAME_SAMPLES), dtype=np.float32)
        self._gains = np.ones(seats + 1, dtype=np.float32)
        self._out: Int16Array | None = None
        self._audible = np.zeros(seats + 1, dtype=bool)
        self._pulled: set[Hashable] = set()
        self._recorded: Float32Array | None = None  # one gain row while a recording runs
        self._sink: FrameSink | None = None
        self._levels = np.zeros(seats, dtype=np.float32)  # RMS of each source in this tick
        #: The levels are made only when asked (:meth:`heard`: browser peers and the relay),
        #: not at every tick of every game: most rooms have only telephone lines.
        self._levels_due = False
        self.ticks = 0
        #: Counts routing changes, so a copy of this room elsewhere (a media process) knows
        #: when to take the gains again.
        self.version = 0
        #: Told of every pushed frame (see :data:`PushTee`); empty costs one truth test.
        self.tees: list[PushTee] = []

    def set_routing(self, table: RoutingTable) -> None:
        """Take a new routing table (call when the game state changed)."""
        self.set_gains(gain_matrix(table, self.seats))

    def set_gains(self, gains: Float32Array) -> None:
        """Take a gain matrix made by :func:`gain_matrix` (here, or in the signalling process
        for a media process's copy of the room: the routing table stays where the game is)."""
        if gains.shape != (self.seats + 1, self.seats):
            raise ValueError(f"a {self.seats}-seat room needs {self.seats + 1}x{self.seats} gains")
        self._g = np.asarray(gains, dtype=np.float32)
        self._links = (self._g != 0.0).astype(np.float32)
        self.version += 1

    @property
    def recording(self) -> bool:
        """A recording's tap takes this room's mix (the mixer must tick to feed it)."""
        return self._sink is not None

    def record(self, gains: Float32Array | None, sink: FrameSink | None = None) -> None:
        """Hand every tick's mix of the sources in ``gains`` (one gain per house,
        :func:`~vollmond.voice.recorded.recorded_gains`) to ``sink``; None stops.

        The recorded row is mixed from the same frames as the listeners, so the recording is
        the room as the mixer has it; silent ticks are recorded as silence, keeping time.
        """
        if gains is None or sink is None:
            self._recorded, self._sink = None, None
            return
        self._recorded = np.asarray(gains, dtype=np.float32).reshape(self.seats)
        self._sink = sink

    def _tap(self, speaking: int) -> None:
        if self._sink is None or self._recorded is None:
            return
        if speaking:
            mix = self._recorded @ self._frames
            frame = np.clip(mix, -32767.0, 32767.0).astype(np.int16)
        else:
            frame = np.zeros(FRAME_SAMPLES, dtype=np.int16)
        self._sink(frame)

    @property
    def gains(self) -> Float32Array:
        """The current gain matrix (read-only view, for tests and tools)."""
        view = self._g.view()
        view.flags.writeable = False
        return view

    def push(self, seat: int, samples: Int16Array) -> None:
        """One received frame of house ``seat``'s voice."""
        if not 1 <= seat <= self.seats or samples.shape != (FRAME_SAMPLES,):
            return
        if self.tees:
            for tee in self.tees:
                tee(seat, samples)
        queue = self._queues[seat - 1]
        if len(queue) >= MAX_QUEUED:
            queue.popleft()
            self.overflowed += 1
        else:
            self._queued += 1
        queue.append(samples)

    def _row(self, listener: Listener) -> int | None:
        if listener == SPECTATORS:
            return self.seats
        if isinstance(listener, int) and 1 <= listener <= self.seats:
            return listener - 1
        return None

    def pull(self, listener: Listener, puller: Hashable | None = None) -> Int16Array | None:
        """The listener's room audio for this tick, or None when it hears nothing.

        ``puller`` identifies the line asking (defaults to the listener); when a line asks a
        second time, a new tick has begun and the next mix is made.
        """
        key = listener if puller is None else puller
        if key in self._pulled or self._out is None:
            self.tick()
        self._pulled.add(key)
        row = self._row(listener)
        if row is None or self._out is None or not self._audible[row]:
            return None
        frame: Int16Array = self._out[row]
        return frame

    def pull_all(self, pullers: Sequence[Hashable]) -> tuple[int, Mix, Mix]:
        """A tick in which ``pullers`` (distinct, at least one) each pull once, in this order,
        at once: ``(k, before, after)`` — ``pullers[:k]`` hear ``before``, the others
        ``after``, each a mix of every row (frames, and whether the row hears anything): row
        ``r`` of it is what :meth:`pull` would give that puller for row ``r``, zeros where it
        gives None.

        The media process's tick: every line's row is then one index of these arrays, not a
        call per line. In the steady state the first puller already pulled in the last tick,
        so the room mixes once and ``k`` is 0. A line new to the room that comes first hears
        the last tick's mix until a puller of the last tick starts the next, as with
        :meth:`pull` (``k`` > 0; it stays so while the lines pull in this order).
        """
        pulled = self._pulled
        if self._out is None or pullers[0] in pulled:
            k = 0
        else:
            k = next((i for i, puller in enumerate(pullers) if puller in pulled), len(pullers))
        before: Mix | None = None
        if k:
            assert self._out is not None
            before = (self._out, self._audible.copy())  # tick() may clear it in place
            if k == len(pullers):  # nobody pulls a second time: no new mix in this tick
                pulled.update(pullers)
                return k, before, before
        self.tick()
        self._pulled.update(pullers[k:])
        assert self._out is not None  # made by tick()
        after = (self._out, self._audible)
        return k, before or after, after

    def heard(self, listener: Listener, threshold: float = 0.0) -> tuple[int, ...]:
        """The houses this listener hears speaking in the current tick (RMS above
        ``threshold``): only sources of the listener's own row, so a speaking indicator built
        on this shows nothing the listener's audio would not already tell."""
        row = self._row(listener)
        if row is None:
            return ()
        if self._levels_due:
            frames = self._frames
            self._levels = np.sqrt(np.mean(frames * frames, axis=1)) * self._active
            self._levels_due = False
        speaking = (self._links[row] > 0.0) & (self._levels > threshold)
        return tuple(int(i) + 1 for i in np.flatnonzero(speaking))

    def tick(self) -> None:
        """Mix the next frame for every listener.

        Sources without a queued frame are zero rows, so the product is always the full
        ``G @ frames``; a listener is audible when one of its sources is active. The limiter
        only runs while some mix is (or recently was) above the ceiling.
        """
        self._pulled.clear()
        self.ticks += 1
        frames, active = self._frames, self._active
        speaking = 0
        if self._queued:
            backlog = self._backlog
            for index, queue in enumerate(self._queues):
                if queue:
                    if len(queue) > 1:  # a frame waits behind this one: a standing delay?
                        backlog[index] += 1
                        if backlog[index] >= CATCH_UP_TICKS:
                            backlog[index] = 0
                            queue.popleft()
                            self._queued -= 1
                            self.skipped += 1
                    else:
                        backlog[index] = 0
                    frames[index] = queue.popleft()
                    active[index] = 1.0
                    speaking += 1
                elif active[index]:
                    frames[index] = 0.0
                    active[index] = 0.0
            self._queued -= speaking
        self._tap(speaking)
        if not speaking:
            # Nobody speaks: every listener hears silence; the limiter recovers meanwhile.
            if active.any():
                frames.fill(0.0)
                active.fill(0.0)
            self._recover()
            self._levels.fill(0.0)
            self._levels_due = False
            self._audible[:] = False
            if self._out is None:
                self._out = np.zeros((self.seats + 1, FRAME_SAMPLES), dtype=np.int16)
            return
        self._audible = (self._links @ active) > 0.0
        self._levels_due = True
        mix = self._g @ frames
        if self._unity and float(np.abs(mix).max()) <= CEILING:  # the method: no wrapper
            self._out = mix.astype(np.int16)
            return
        self._out = limit(mix, self._gains).astype(np.int16)
        self._unity = False
        self._recover(0.0)

    def _recover(self, rate: float = RELEASE) -> None:
        """Let the limiter gains recover by ``rate``; snap to exactly 1 when close."""
        if self._unity:
            return
        if rate:
            self._gains += (1.0 - self._gains) * rate
        if float(self._gains.min()) > 0.999:
            self._gains.fill(1.0)
            self._unity = True
