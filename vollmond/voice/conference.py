"""The voice of one conference room (X2): everyone who talks is heard by everyone else.

A conference room has no game and no routing table from a rule set; its table is made here
from who is in the room and who talks. Members have slots 1..size (the room's size limit);
a talking member's slot is a source heard by every other member at full gain; a member who
only listens (or muted themselves) is a listener and no source. The mixing itself is the
games' :class:`~vollmond.voice.mixer.GameMixer`, so a telephone line in a room is pulled and
pushed exactly like one in a game, and two rooms never share a matrix.

>>> voice = ConferenceVoice(3)
>>> voice.seat(1, talking=True); voice.seat(2, talking=True); voice.seat(3, talking=False)
>>> sorted(r.source for r in voice.routing()[3])
[1, 2]
>>> [r.source for r in voice.routing()[1]]
[2]
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np

from vollmond.engine.ruleset import RoutingTable
from vollmond.voice.frames import Int16Array
from vollmond.voice.mixer import FrameSink, GameMixer


@dataclass(frozen=True, slots=True)
class _Route:
    """One source a member hears (the routing table's route, at full gain)."""

    source: int
    gain: float = 1.0


class ConferenceVoice:
    """One room's mixer, its routing rebuilt whenever someone comes, goes or (un)mutes."""

    #: The room is mixed by :attr:`mixer` here (a media process may copy it); False for a
    #: room owned by another process, whose :meth:`pull` brings its mix through the relay.
    mixed_here = True

    def __init__(self, size: int) -> None:
        self.size = size
        self.mixer = GameMixer(size)
        self._present: set[int] = set()
        self._talking: set[int] = set()
        self._sink: FrameSink | None = None
        self.lines = 0  # other processes' lines the relay hosts here (VoiceRooms.attach)

    def seat(self, slot: int, *, talking: bool) -> None:
        """`slot` is in the room; `talking` False: listen-only or muted (heard by nobody)."""
        if not 1 <= slot <= self.size:
            raise ValueError(f"slot {slot} outside 1..{self.size}")
        self._present.add(slot)
        if talking:
            self._talking.add(slot)
        else:
            self._talking.discard(slot)
        self._rebuild()

    def unseat(self, slot: int) -> None:
        self._present.discard(slot)
        self._talking.discard(slot)
        self._rebuild()

    def routing(self) -> RoutingTable:
        """Every member hears every other talking member, nobody hears themselves."""
        talking = sorted(self._talking)
        return {
            slot: tuple(_Route(s) for s in talking if s != slot) for slot in sorted(self._present)
        }

    def _rebuild(self) -> None:
        self.mixer.set_routing(self.routing())
        self._record()

    def push(self, slot: int, samples: Int16Array) -> None:
        """One 20 ms frame of `slot`'s voice; dropped unless the slot talks now."""
        if slot in self._talking:
            self.mixer.push(slot, samples)

    def present(self, slot: int) -> bool:
        """Whether `slot` is in the room (and so hears it)."""
        return slot in self._present

    def pull(self, slot: int, puller: Hashable) -> Int16Array | None:
        """`slot`'s mix for this tick (None: nobody it hears is speaking)."""
        if slot not in self._present:
            return None
        return self.mixer.pull(slot, puller=puller)

    def close(self) -> None:
        """The relay's last line left; the room lives on with its members."""

    def record(self, sink: FrameSink | None) -> None:
        """Hand every tick's mix of all talking members to `sink` (None stops): what anyone
        in the room could hear (O2)."""
        self._sink = sink
        self._record()

    def _record(self) -> None:
        if self._sink is None:
            self.mixer.record(None)
            return
        gains = np.zeros(self.size, dtype=np.float32)
        for slot in self._talking:
            gains[slot - 1] = 1.0
        self.mixer.record(gains, self._sink)


@dataclass(frozen=True, slots=True)
class ConferenceSeat:
    """Where a line's audio goes in a room: the room's voice and the member's slot."""

    voice: ConferenceVoice
    slot: int
