"""One asyncio task per running game (DESIGN §3).

The actor owns the game's state. Commands queue up and are applied one at a time; each
accepted command is appended to the command log, its events to the event log, and only then
are the events sent to the subscribers whose audience includes them. Timers are persisted
with absolute deadlines in the command log, so a restarted server resumes every game with
the same state and the same timers.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import structlog

from vollmond.engine.core import (
    Audience,
    AudienceKind,
    Event,
    Rejection,
    Timer,
    Viewer,
    ViewerKind,
)
from vollmond.engine.ruleset import AnyRuleSet
from vollmond.service.logwriter import LogAppend, LogWriter
from vollmond.store import (
    Fence,
    LeaseLostError,
    NewEvent,
    Sessions,
    append_commands,
    append_events,
    next_event_seq,
    read_commands,
    read_events,
)

log = structlog.get_logger(__name__)

Clock = Callable[[], float]
GameState = Any
"""The state of the game's rule set: the actor only hands it to the rule set and channels."""
Command = Any
"""A command of the game's rule set, decoded by it (`RuleSet.decode_command`)."""


class Subscriber(Protocol):
    """A connected client of one game (browser socket, phone line, bot)."""

    viewer: Viewer

    def deliver(self, seq: int, event: Event) -> None:
        """Called with every event the viewer may receive, in log order; must not block."""

    def state_changed(
        self, state: GameState, phase_changed: bool, *, view_unchanged: bool = False
    ) -> None:
        """Called after each accepted command, so the client may refresh its view.

        `view_unchanged`: this viewer's view is the same as before the command (no event of
        it reached the viewer, and the rule set says such a change is seen by none else:
        `RuleSet.views_follow_events`), so a client that shows views need not rebuild it."""


@runtime_checkable
class ReadsSpectatorRoom(Protocol):
    """A subscriber that can show the spectators' room (the browser socket)."""

    viewer: Viewer

    def spectator_line(self, line: SpectatorLine) -> None:
        """Called with each line of the spectators' room this viewer may read."""


@runtime_checkable
class FollowsTheGameElsewhere(Protocol):
    """A subscriber that can follow the game on another node (the browser socket): told when
    this node stops running the game because another node took it over, it reconnects, and
    its reconnect finds a mirror of the game (service/shards)."""

    viewer: Viewer

    def game_moved(self) -> None:
        """The actor it follows stopped for good here; must not block."""


@dataclass(frozen=True, slots=True)
class SpectatorLine:
    """A line of the spectators' room (issue 12): who wrote it (an account's name) and what.

    Spectators are no seats, so their words are not the rule set's events: the room lives in
    the actor's memory (the last `SPECTATOR_LINES`), not in the game's log.
    """

    name: str
    text: str


SPECTATOR_LINES = 200
TIMER_RETRY_FIRST_S = 0.5
"""A timer whose command the store refused is tried again after this, then twice as long..."""
TIMER_RETRY_MAX_S = 10.0
"""...up to this, for as long as the game runs in this process."""
CHAT_CODE = "chat"
"""The code of every rule set's chat event (engine/kit/chat.py): revealed after the end."""


#: Told of every command entry once the log holds it: (command seq, the logged entry, the seq
#: of its first event). The owner of a game shared across processes publishes it from here to
#: the read-only mirrors elsewhere (service/shards): the command log is the replication stream.
OnCommitted = Callable[[int, Any, int], None]


#: Server-side only: sees every event of a command (secret ones too) and the new state.
#: The table recorder is the one user (the chat of the recorded rooms, the end of the round);
#: what it keeps goes only into the encrypted vault, never to a client.
Observer = Callable[[int, Sequence[Event], GameState], None]


@dataclass(frozen=True, slots=True)
class Accepted:
    """A command applied and logged; `repeated`: a retry of it (same client id), answered
    from what was recorded, not applied again."""

    first_seq: int
    events: tuple[Event, ...]
    repeated: bool = False


@dataclass(frozen=True, slots=True)
class Remembered:
    """A logged command that came with a client id: where its events began, and what it was
    (so a client id reused for another command is told apart from a retry)."""

    first_seq: int
    command: Any


class ReplayDivergedError(RuntimeError):
    """A logged command was refused on replay: the log or the rules changed."""


class GameClosedError(RuntimeError):
    """The game's actor has stopped (the game ended, or the server is shutting down)."""


class GameMovedError(GameClosedError):
    """The game's actor stopped because another node runs the game now: the store refused its
    append under a lease that was taken over (LeaseLostError). Ask the game's owner."""


class ClientIdReusedError(ValueError):
    """A seat sent a different command under a client id it had already used."""


def client_key(ruleset: AnyRuleSet, command: Command, cid: str) -> str:
    """A client id scoped to the seat that sent it: seats choose their ids independently."""
    seat = ruleset.actor_of(command)
    if seat is None:
        raise TypeError("only players' commands carry client ids")
    return f"{seat}:{cid}"


def _entry(
    ruleset: AnyRuleSet, command: Command | None, timers: Sequence[Timer[Any]], now: float
) -> Any:
    return {
        "command": ruleset.encode_command(command) if command is not None else None,
        "timers": [
            {"due": now + timer.delay_s, "command": ruleset.encode_command(timer.command)}
            for timer in timers
        ],
    }


def _event_row(event: Event) -> NewEvent:
    return NewEvent(event.code, dict(event.params), event.audience.to_json())


class GameActor:
    def __init__(
        self,
        game_id: str,
        ruleset: AnyRuleSet,
        options: Any,
        seed: int,
        sessions: Sessions,
        *,
        clock: Clock = time.time,
        writer: LogWriter | None = None,
    ) -> None:
        self.game_id = game_id
        self.ruleset = ruleset
        self.writer = writer
        self.options = options
        self.seed = seed
        self.sessions = sessions
        self.clock = clock
        self.state: GameState | None = None
        self.commands_applied = 0
        self.next_event_seq = 1
        self.subscribers: set[Subscriber] = set()
        self.observers: set[Observer] = set()
        self.on_seat_followers: Callable[[int, int], None] | None = None
        self.on_committed: OnCommitted | None = None
        self.on_spectator_line: Callable[[SpectatorLine], None] | None = None
        # With leases (nodes): every append carries the lease this node runs the game under;
        # once the store refuses one, the actor stops and `on_moved` tells its hub.
        self.fence: Fence | None = None
        self.on_moved: Callable[[], None] | None = None
        self._queue: asyncio.Queue[
            tuple[Command, str | None, asyncio.Future[Rejection | Accepted]]
        ] = asyncio.Queue()
        # Client ids (seat-scoped, client_key) of the logged commands: rebuilt from the log at
        # resume, so a retry after a restart is still answered rather than applied again.
        self._cids: dict[str, Remembered] = {}
        self._timers: dict[int, asyncio.TimerHandle] = {}
        self._next_timer = 0
        # The seats out of the game in one state (identity): every line and page asks after
        # each command, and the answer needs the public view.
        self._out: tuple[GameState, frozenset[int]] | None = None
        # phase_seq -> due (clock time) of its PhaseTimeout, so "how long is left" is answered
        # from memory (GET /api/games/{id}/clock) instead of by reading the command log.
        self._phase_due: dict[int, float] = {}
        self._firing: set[asyncio.Task[None]] = set()
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self.finished = asyncio.Event()
        self.spectator_lines: deque[SpectatorLine] = deque(maxlen=SPECTATOR_LINES)

    # -- life cycle ------------------------------------------------------------------------
    async def start(self) -> None:
        """Deal and open night 1 of a new game."""
        result = self.ruleset.new_game(self.options, self.ruleset.rng_for(self.seed, 0))
        now = self.clock()
        entry = _entry(self.ruleset, None, result.timers, now)
        await append_commands(self.sessions, self.game_id, 1, [entry], fence=self.fence)
        events = [_event_row(e) for e in result.events]
        await append_events(self.sessions, self.game_id, 1, events, fence=self.fence)
        self.state = result.state
        self.next_event_seq = 1 + len(result.events)
        self._schedule([(now + t.delay_s, t.command) for t in result.timers])
        self._launch()

    async def resume(self) -> None:
        """Rebuild the state from the command log; repair an event log cut short by a crash."""
        replayed = await self._replay()
        if replayed is None:
            await self.start()
            return
        events, timers = replayed
        stored = await next_event_seq(self.sessions, self.game_id) - 1
        if stored < len(events):
            missing = events[stored:]
            await append_events(
                self.sessions,
                self.game_id,
                stored + 1,
                [_event_row(e) for e in missing],
                fence=self.fence,
            )
            log.warning("event_log_repaired", game=self.game_id, events=len(missing))
        assert self.state is not None
        live = [(due, cmd) for due, cmd in timers if self.ruleset.validate(self.state, cmd) is None]
        self._schedule(live)
        self._launch()

    async def open_archived(self) -> bool:
        """Rebuild a finished game from its log for readers only (views, history, a retried
        command's answer): no timers, no task, no writes; every new command is refused with
        GameClosedError. False if the game has no log."""
        self._closed = True
        if await self._replay() is None:
            return False
        self.finished.set()
        return True

    async def _replay(self) -> tuple[list[Event], list[tuple[float, Any]]] | None:
        """Apply the command log to a fresh deal: sets the state, the counters and the client
        ids seen; returns every event and every timer the log ever set (None: empty log)."""
        entries = await read_commands(self.sessions, self.game_id)
        if not entries:
            return None
        rules = self.ruleset
        result = rules.new_game(self.options, rules.rng_for(self.seed, 0))
        state = result.state
        events: list[Event] = list(result.events)
        timers: list[tuple[float, Any]] = []
        for index, entry in enumerate(entries):
            data = entry.command
            assert isinstance(data, dict)
            raw = data.get("command")
            if raw is not None:
                command = rules.decode_command(raw)
                outcome = rules.apply(state, command, rules.rng_for(self.seed, index))
                if isinstance(outcome, Rejection):
                    raise ReplayDivergedError(f"log of {self.game_id} diverges at {entry.seq}")
                if entry.cid is not None:
                    self._cids[entry.cid] = Remembered(len(events) + 1, raw)
                state = outcome.state
                events.extend(outcome.events)
            for timer in data.get("timers", []):
                timers.append((float(timer["due"]), rules.decode_command(timer["command"])))
        self.commands_applied = len(entries) - 1
        self.state = state
        self.next_event_seq = len(events) + 1
        return events, timers

    def _launch(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"game:{self.game_id}")
        if self.state is not None and self.ruleset.is_over(self.state):
            self.finished.set()

    async def stop(self) -> None:
        self._closed = True
        for handle in self._timers.values():
            handle.cancel()
        self._timers.clear()
        for firing in list(self._firing):  # a timer waiting to try its command again
            firing.cancel()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        while not self._queue.empty():
            _, _, future = self._queue.get_nowait()
            if not future.done():
                future.set_exception(GameClosedError(self.game_id))

    # -- commands --------------------------------------------------------------------------
    async def submit(self, command: Command, *, cid: str | None = None) -> Rejection | Accepted:
        """Queue a command; resolves once it was applied, persisted and sent out.

        With a client id `cid`, a command the log already holds under the same id (a retry
        after a lost acknowledgement) is answered with its original outcome and not applied
        again — also by a finished game's archive. Raises ClientIdReusedError if the id was
        used for another command.
        """
        key = client_key(self.ruleset, command, cid) if cid is not None else None
        if key is not None:
            known = self._recall(key, command)
            if known is not None:
                return known
        if self._closed:
            raise GameClosedError(self.game_id)
        future: asyncio.Future[Rejection | Accepted] = asyncio.get_running_loop().create_future()
        await self._queue.put((command, key, future))
        return await future

    def _recall(self, key: str, command: Command) -> Accepted | None:
        remembered = self._cids.get(key)
        if remembered is None:
            return None
        if remembered.command != self.ruleset.encode_command(command):
            raise ClientIdReusedError(key)
        return Accepted(remembered.first_seq, (), repeated=True)

    async def _run(self) -> None:
        while True:
            command, key, future = await self._queue.get()
            try:
                # A retry queued while the original was still in flight is answered here.
                known = self._recall(key, command) if key is not None else None
                outcome = known if known is not None else await self._apply(command, key)
            except asyncio.CancelledError:  # stopped mid-command: its sender must not hang
                if not future.done():
                    future.set_exception(GameClosedError(self.game_id))
                raise
            except ClientIdReusedError as exc:
                if not future.done():
                    future.set_exception(exc)
                continue
            except LeaseLostError:
                # Another node took the game over; nothing of this command was written (or, if
                # its command entry was, the new owner replayed it). Stop: it runs there now.
                log.warning("game_moved_away", game=self.game_id, fence=str(self.fence))
                if not future.done():
                    future.set_exception(GameMovedError(self.game_id))
                self._moved_away()
                return
            except Exception as exc:  # a store failure must not kill the game's task silently
                log.exception("command_failed", game=self.game_id)
                if not future.done():
                    future.set_exception(exc)
                continue
            if not future.done():
                future.set_result(outcome)

    def _moved_away(self) -> None:
        """Stop taking commands and firing timers (the new owner has them from the log), tell
        the waiting senders to ask the owner, and tell the hub (which stops this actor)."""
        self._closed = True
        for handle in self._timers.values():
            handle.cancel()
        self._timers.clear()
        while not self._queue.empty():
            _, _, future = self._queue.get_nowait()
            if not future.done():
                future.set_exception(GameMovedError(self.game_id))
        if self.on_moved is not None:
            self.on_moved()

    async def _apply(self, command: Command, key: str | None = None) -> Rejection | Accepted:
        state = self.state
        assert state is not None
        index = self.commands_applied + 1
        rules = self.ruleset
        outcome = rules.apply(state, command, rules.rng_for(self.seed, index))
        if isinstance(outcome, Rejection):
            return outcome
        now = self.clock()
        first = self.next_event_seq
        entry = _entry(rules, command, outcome.timers, now)
        if self.writer is not None:  # group commit with other games' appends (logwriter.py)
            await self.writer.append(
                LogAppend(
                    self.game_id,
                    index + 1,
                    entry,
                    first,
                    [_event_row(e) for e in outcome.events],
                    cid=key,
                    fence=self.fence,
                )
            )
        else:
            await append_commands(
                self.sessions, self.game_id, index + 1, [entry], cids=[key], fence=self.fence
            )
            await append_events(
                self.sessions,
                self.game_id,
                first,
                [_event_row(e) for e in outcome.events],
                fence=self.fence,
            )
        self.commands_applied = index
        self.next_event_seq = first + len(outcome.events)
        if key is not None:
            self._cids[key] = Remembered(first, rules.encode_command(command))
        self.state = outcome.state
        self._schedule([(now + t.delay_s, t.command) for t in outcome.timers])
        if self.on_committed is not None:
            self.on_committed(index + 1, entry, first)
        self._deliver(first, state, outcome.state, outcome.events)
        return Accepted(first, outcome.events)

    def _deliver(self, first_seq: int, before: Any, after: Any, events: Sequence[Event]) -> None:
        """Fan a command's events out and mark a game that it ended: the same for the owner
        and for a worker's mirror (`shards/mirror.py`), which applies the owner's entries."""
        rules = self.ruleset
        phase_changed = rules.phase_seq(before) != rules.phase_seq(after)
        quiet = not phase_changed and rules.views_follow_events(before, after)
        self._fan_out(first_seq, events, phase_changed=phase_changed, quiet=quiet)
        if rules.is_over(after):
            self.finished.set()

    # -- timers ----------------------------------------------------------------------------
    def _schedule(self, timers: Iterable[tuple[float, Any]]) -> None:
        loop = asyncio.get_running_loop()
        now = self.clock()
        for due, command in sorted(timers, key=lambda t: t[0]):
            ends = self.ruleset.timer_phase(command)
            if ends is not None:
                self._phase_due = {seq: at for seq, at in self._phase_due.items() if seq > ends}
                self._phase_due[ends] = due
            self._next_timer += 1
            key = self._next_timer
            self._timers[key] = loop.call_later(max(0.0, due - now), self._fire, key, command)

    def _fire(self, key: int, command: Any) -> None:
        self._timers.pop(key, None)
        if self._closed:
            return
        task = asyncio.get_running_loop().create_task(self._fire_async(command))
        self._firing.add(task)
        task.add_done_callback(self._firing.discard)

    async def _fire_async(self, command: Any) -> None:
        """A timer's command that the store could not take (the database away for a moment)
        is tried again, backing off, for as long as the game runs here: otherwise the phase
        would wait for a restart. A rejection (a player's command ended the phase meanwhile)
        or the game leaving this process ends the tries."""
        pause = TIMER_RETRY_FIRST_S
        while not self._closed:
            try:
                await self.submit(command)
            except GameClosedError:  # also GameMovedError: it runs elsewhere now
                return
            except Exception as exc:  # the store's failure, logged by the command loop
                log.warning("timer_retry", game=self.game_id, error=repr(exc), in_s=pause)
                await asyncio.sleep(pause)
                pause = min(pause * 2, TIMER_RETRY_MAX_S)
                continue
            return

    # -- fan-out ---------------------------------------------------------------------------
    def _fan_out(
        self, first_seq: int, events: Sequence[Event], *, phase_changed: bool, quiet: bool
    ) -> None:
        """`quiet`: the change shows only to the viewers its events reach; the others are told
        that their view stayed as it was."""
        state = self.state
        assert state is not None
        for subscriber in list(self.subscribers):
            reached = False
            for offset, event in enumerate(events):
                if event.audience.includes(subscriber.viewer):
                    subscriber.deliver(first_seq + offset, event)
                    reached = True
            subscriber.state_changed(state, phase_changed, view_unchanged=quiet and not reached)
        for observer in list(self.observers):
            try:
                observer(first_seq, events, state)
            except Exception:  # an observer's failure must not stop the game
                log.exception("observer_failed", game=self.game_id)

    def subscribe(self, subscriber: Subscriber) -> None:
        if subscriber not in self.subscribers:
            self.subscribers.add(subscriber)
            self._seat_followers(subscriber, +1)

    def unsubscribe(self, subscriber: Subscriber) -> None:
        if subscriber in self.subscribers:
            self.subscribers.discard(subscriber)
            self._seat_followers(subscriber, -1)

    def _seat_followers(self, subscriber: Subscriber, change: int) -> None:
        """Tell presence (presence.py) that a channel started or stopped following a seat:
        every channel subscribes here, so none has to report its players separately."""
        viewer = subscriber.viewer
        if self.on_seat_followers is not None and viewer.kind is ViewerKind.PLAYER:
            assert viewer.seat is not None
            self.on_seat_followers(viewer.seat, change)

    # -- the spectators' room (issue 12) ----------------------------------------------------
    def reads_spectator_room(self, viewer: Viewer, out: frozenset[int] | None = None) -> bool:
        """Spectators, and the players who are out of the game (never the living: the room is
        written by anyone who opens the table, a living player too); everyone after the end.
        `out`: the seats out of the game, when the caller already has them."""
        if viewer.kind is ViewerKind.SPECTATOR or self.is_over:
            return True
        if viewer.kind is not ViewerKind.PLAYER:
            return False
        return viewer.seat in (self._out_seats() if out is None else out)

    def _out_seats(self) -> frozenset[int]:
        """The seats out of the game, from the public view (any rule set's `seats`); worked
        out once per state, however many lines and pages ask."""
        state = self.state
        if state is None:
            return frozenset()
        if self._out is not None and self._out[0] is state:
            return self._out[1]
        seats = self.ruleset.view(state, Viewer.spectator()).to_json().get("seats", [])
        out = frozenset(s["seat"] for s in seats if s.get("alive") is False)
        self._out = (state, out)
        return out

    def seat_out(self, seat: int) -> bool:
        """Whether `seat` is out of the game now (dead, or left it): public knowledge."""
        return seat in self._out_seats()

    def say_as_spectator(self, name: str, text: str) -> SpectatorLine:
        """Keep a spectator's line and hand it to every subscriber who reads the room (and
        to `on_spectator_line`: where games are sharded, the other workers' copies)."""
        line = SpectatorLine(name, text)
        self.hear_spectator_line(line)
        if self.on_spectator_line is not None:
            self.on_spectator_line(line)
        return line

    def hear_spectator_line(self, line: SpectatorLine) -> None:
        """Keep a line of the spectators' room and hand it to its readers here."""
        self.spectator_lines.append(line)
        out = self._out_seats()
        for subscriber in list(self.subscribers):
            if isinstance(subscriber, ReadsSpectatorRoom) and self.reads_spectator_room(
                subscriber.viewer, out
            ):
                subscriber.spectator_line(line)

    def phase_deadline(self, phase_seq: int) -> float | None:
        """When phase `phase_seq` times out (clock time), if a timer is scheduled for it."""
        return self._phase_due.get(phase_seq)

    def view_for(self, viewer: Viewer) -> dict[str, Any]:
        assert self.state is not None
        return dict(self.ruleset.view(self.state, viewer).to_json())

    @property
    def is_over(self) -> bool:
        return self.state is not None and self.ruleset.is_over(self.state)

    async def history_for(self, viewer: Viewer, after_seq: int = 0) -> list[tuple[int, Event]]:
        """Events the viewer may see since `after_seq`, read from the log (for reconnects).

        Once the game is over, every room's chat (night room, calls, the dead) is shown to
        everyone (issue 12, docs/decisions.md "After the game"); before, only its audience."""
        out: list[tuple[int, Event]] = []
        reveal = self.is_over
        for stored in await read_events(self.sessions, self.game_id, after_seq):
            raw = stored.audience
            assert isinstance(raw, dict)
            audience = Audience(AudienceKind(raw["kind"]), frozenset(raw.get("seats", ())))
            revealed = reveal and stored.kind == CHAT_CODE
            if revealed or audience.includes(viewer):
                payload = stored.payload if isinstance(stored.payload, dict) else {}
                out.append((stored.seq, Event(stored.kind, audience, payload)))
        return out
