"""The voice rooms of the running games, shared by every line of every channel.

A game's :class:`Room` is one :class:`~vollmond.voice.mixer.GameMixer` kept in step with the
game state (it subscribes to the game's actor). Lines — a telephone call, a browser peer — find
the room of the game they follow with :meth:`VoiceRooms.room_for`, push their seat's voice into
it and pull their listener's mix from it; :meth:`VoiceRooms.attach` counts them, so a room is
dropped (and unsubscribed) when its last line leaves.

A room also follows its table's recording notice (O2): while a recording runs, the mixer hands
the recorded rooms' mix (:func:`~vollmond.voice.recorded.recorded_gains`) to the recording's
tap. The notice board is passed in as the small :class:`Notices` protocol, so this package
knows neither the service nor the vault.

Because every channel of a service uses one ``VoiceRooms``, a caller and a browser player of
the same game are mixed by the same matrix, and secrecy stays the routing table's alone.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from vollmond.engine.core import Event, Viewer
from vollmond.engine.ruleset import AnyRuleSet, Listener, RoutingTable, WhereAmI, place_of
from vollmond.voice.frames import Int16Array
from vollmond.voice.mixer import FrameSink, GameMixer
from vollmond.voice.recorded import recorded_gains

if TYPE_CHECKING:
    from vollmond.voice.relay import VoiceRelay


class GameSource(Protocol):
    """What a room needs of a game's actor (``vollmond.service.actor.GameActor``): its rule
    set makes the routing table, whatever rules the game follows."""

    @property
    def state(self) -> Any: ...

    @property
    def ruleset(self) -> AnyRuleSet: ...

    @property
    def options(self) -> Any: ...

    def subscribe(self, subscriber: Room) -> None: ...

    def unsubscribe(self, subscriber: Room) -> None: ...


class Actors(Protocol):
    """Where the running games are found (``vollmond.service.hub.Hub``)."""

    @property
    def actors(self) -> Mapping[str, GameSource]: ...


class Notice(Protocol):
    """What a room needs of a recording notice (``vollmond.service.notices.RecordingNotice``)."""

    @property
    def seats(self) -> frozenset[int]: ...

    @property
    def recording(self) -> bool: ...


class Notices(Protocol):
    """Where a table's recording notice and tap are found
    (``vollmond.service.notices.RecordingNotices``)."""

    def current(self, game_id: str) -> Notice | None: ...

    def tap(self, game_id: str) -> FrameSink | None: ...

    def watch(
        self, game_id: str, watcher: Callable[[Notice | None], None]
    ) -> Callable[[], None]: ...


class Mixed(Protocol):
    """What lines are attached to: a game's :class:`Room`, or a conference room's voice
    (``vollmond.voice.conference.ConferenceVoice``) whose remote lines the relay hosts."""

    lines: int

    @property
    def mixer(self) -> GameMixer: ...

    def push(self, seat: int, samples: Int16Array) -> None: ...

    def close(self) -> None: ...


class Room:
    """One game's mixer, kept in step with the game state (a subscriber of its actor) and
    with the table's recording notice (while a recording runs, the mixer also hands the
    recorded rooms' mix to the recording's tap)."""

    def __init__(
        self, actor: GameSource, state: Any, notices: Notices | None = None, game_id: str = ""
    ) -> None:
        self.actor = actor
        self.viewer = Viewer.spectator()
        self.state = state
        self.mixer = GameMixer(int(actor.options.players))
        self.mixer.set_routing(self._routing(state))
        self.lines = 0
        self.game_id = game_id
        self._notices = notices
        self._recording: Notice | None = None
        self._unwatch = notices.watch(game_id, self._notice) if notices is not None else None
        if notices is not None:
            self._notice(notices.current(game_id))

    def place(self, listener: Listener) -> WhereAmI:
        """The room `listener` is in now, as the voice page names it."""
        return place_of(self.actor.ruleset, self.state, listener)

    def _routing(self, state: Any) -> RoutingTable:
        table: RoutingTable = self.actor.ruleset.routing(state)
        return table

    def push(self, seat: int, samples: Int16Array) -> None:
        """One 20 ms frame of house `seat`'s voice (the routing decides who hears it)."""
        self.mixer.push(seat, samples)

    def deliver(self, seq: int, event: Event) -> None:
        """Events are the lines' business; the room only follows the state."""

    def state_changed(
        self, state: Any, phase_changed: bool, *, view_unchanged: bool = False
    ) -> None:
        self.state = state
        table = self._routing(state)
        self.mixer.set_routing(table)
        if self._recording is not None:
            self._record(table)

    def _notice(self, notice: Notice | None) -> None:
        self._recording = notice if notice is not None and notice.recording else None
        self._record()

    def _record(self, table: RoutingTable | None = None) -> None:
        tap = self._notices.tap(self.game_id) if self._notices is not None else None
        if self._recording is None or tap is None:
            self.mixer.record(None)
            return
        table = self._routing(self.state) if table is None else table
        gains = recorded_gains(table, self._recording.seats, self.mixer.seats)
        self.mixer.record(gains, tap)

    def close(self) -> None:
        """Leave the game and the notice board (the room is dropped)."""
        self.actor.unsubscribe(self)
        self.mixer.record(None)
        if self._unwatch is not None:
            self._unwatch()
            self._unwatch = None


class VoiceRooms:
    """Every game's room, made on the first line that needs it, dropped after the last."""

    def __init__(self, hub: Actors, notices: Notices | None = None) -> None:
        self.hub = hub
        self.notices = notices
        self.rooms: dict[str, Room] = {}
        self._lines: dict[Hashable, Mixed] = {}
        #: Where games are sharded over processes: the relay to the rooms of the games that
        #: run on another process (None: every game a line can follow runs here).
        self.relay: VoiceRelay | None = None
        #: The games this process follows, its own and (where sharded) the mirrors of other
        #: processes' games (``Hub.followed_games``): where a relayed browser peer is placed.
        self.followed: Callable[[], Mapping[str, GameSource]] = lambda: self.hub.actors
        #: Where conference rooms are shared by processes: the voice of a room run here, by
        #: its key (``conference:<room>``), for the lines the relay hosts in it.
        self.conference: Callable[[str], Mixed | None] = lambda _key: None

    def place(self, game_id: str, listener: Listener) -> WhereAmI | None:
        """The room `listener` is in now in a game this process runs or follows (None: it
        follows no such game), for a line whose mix comes from here or through the relay."""
        room = self.rooms.get(game_id)
        if room is not None:
            return room.place(listener)
        game = self.followed().get(game_id)
        if game is None or game.state is None:
            return None
        return place_of(game.ruleset, game.state, listener)

    def room_for(self, game_id: str) -> Room | None:
        """The room of a running game (None when the game does not run here)."""
        room = self.rooms.get(game_id)
        actor = self.hub.actors.get(game_id)
        if room is not None and room.actor is actor:
            return room
        if room is not None:  # the game ended or was resumed by a new actor
            room.close()
            del self.rooms[game_id]
        if actor is None or actor.state is None:
            return None
        room = Room(actor, actor.state, self.notices, game_id)
        actor.subscribe(room)
        self.rooms[game_id] = room
        return room

    def mixed_for(self, key: str) -> Mixed | None:
        """What a relayed line with `key` is mixed in here: a conference room run here, or
        the room of a game running here (None: neither runs here)."""
        return self.conference(key) or self.room_for(key)

    def room_of(self, line: Hashable) -> Mixed | None:
        """The room ``line`` is attached to."""
        return self._lines.get(line)

    def attach(self, line: Hashable, room: Mixed | None) -> None:
        """Attach ``line`` to ``room`` (None: detach); a room nobody uses is dropped."""
        old = self._lines.get(line)
        if old is room:
            return
        if room is None:
            self._lines.pop(line, None)
        else:
            self._lines[line] = room
            room.lines += 1
        if old is not None:
            old.lines -= 1
            if old.lines <= 0:
                old.close()
                for game_id, known in list(self.rooms.items()):
                    if known is old:
                        del self.rooms[game_id]

    def close(self) -> None:
        """Leave every game (the service stops)."""
        for room in list(self.rooms.values()):
            room.close()
        self.rooms.clear()
        self._lines.clear()
