"""A game owned by another process, followed read-only where its subscribers are.

The owner publishes every committed command entry on the game's log subject (the command log
is the replication stream). A mirror subscribes first, then rebuilds the state from the log in
the store, then applies each published entry with the same rules and the same seeded chance —
so it holds the same state, the same events with the same seqs, and does its own subscribers'
fan-out, views and socket writes in its own process. An entry it already holds is dropped (the
seq makes every delivery idempotent); an entry after a gap makes it read the missing ones from
the log first. It never writes and runs no timers: commands go to the owner (`submit`), and
their answer is returned only after the mirror has sent their events, as the owner does.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import structlog

from vollmond.engine.core import Rejection
from vollmond.service.actor import (
    Accepted,
    Command,
    GameActor,
    GameClosedError,
    ReplayDivergedError,
    SpectatorLine,
    Subscriber,
)
from vollmond.service.shards.transport import Message, Subscription, Transport, game_log_subject
from vollmond.store import read_commands

log = structlog.get_logger(__name__)

CATCH_UP_WAIT_S = 5.0
"""How long an answered command waits for its events on the stream before the log is read."""

SubmitToOwner = Callable[[str, Any, str | None], Awaitable["Accepted | Rejection"]]
"""(game id, encoded command, client id) -> the owner's outcome; `Accepted.first_seq` and the
seq after its last event (`OwnerAccepted.next_seq`)."""


@dataclass(frozen=True, slots=True)
class OwnerAccepted(Accepted):
    """The owner's acceptance as a mirror hears it: `next_seq` follows the command's last
    event, so the mirror answers only once it has sent them."""

    next_seq: int = 0


class MirrorActor(GameActor):
    """The read-only follower of a game whose owner is another process (or node)."""

    def __init__(
        self,
        *args: Any,
        submit_to_owner: SubmitToOwner,
        on_idle: Callable[[MirrorActor], None],
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self._submit_to_owner = submit_to_owner
        self._on_idle = on_idle
        self._stream: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._subscription: Subscription | None = None
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []

    async def follow(self, transport: Transport) -> bool:
        """Subscribe to the owner's stream, then rebuild from the log; False if the game has
        no log yet. Entries published meanwhile wait in the stream and are applied in order."""
        self._subscription = await transport.subscribe(
            game_log_subject(self.game_id), self._on_entry
        )
        replayed = await self._replay()
        if replayed is None:
            await self.stop()
            return False
        for due, command in replayed[1]:
            self._note_deadline(due, command)
        if self.is_over:
            self.finished.set()
        self._task = asyncio.create_task(self._follow(), name=f"mirror:{self.game_id}")
        return True

    def _on_entry(self, message: Message) -> None:
        self._stream.put_nowait(json.loads(message.data))

    async def _follow(self) -> None:
        while True:
            item = await self._stream.get()
            try:
                await self._take(int(item["seq"]), item["entry"])
            except ReplayDivergedError:
                log.exception("mirror_diverged", game=self.game_id)
                self._closed = True
                raise
            except Exception:  # e.g. the store failed while filling a gap: the next entry
                log.exception("mirror_entry_failed", game=self.game_id)  # reads it again

    async def _take(self, seq: int, entry: Any) -> None:
        """Apply the logged entry at command seq `seq` unless it is already held."""
        if seq <= self.commands_applied + 1:
            return  # held already (replayed from the log, or delivered twice)
        if seq > self.commands_applied + 2:
            await self._read_missing()
            if seq <= self.commands_applied + 1:
                return
        self._apply_entry(seq, entry)

    async def _read_missing(self) -> None:
        for stored in await read_commands(self.sessions, self.game_id, self.commands_applied + 1):
            self._apply_entry(stored.seq, stored.command)

    def _apply_entry(self, seq: int, entry: Any) -> None:
        """The owner's `_apply` again, without its writes: same command, same chance index."""
        assert self.state is not None and isinstance(entry, dict)
        index = seq - 1
        rules = self.ruleset
        raw = entry.get("command")
        if raw is None:
            raise ReplayDivergedError(f"{self.game_id}: a second deal at {seq}")
        state = self.state
        outcome = rules.apply(state, rules.decode_command(raw), rules.rng_for(self.seed, index))
        if isinstance(outcome, Rejection):
            raise ReplayDivergedError(f"stream of {self.game_id} diverges at {seq}")
        first = self.next_event_seq
        self.commands_applied = index
        self.next_event_seq = first + len(outcome.events)
        self.state = outcome.state
        for timer in entry.get("timers", []):
            self._note_deadline(float(timer["due"]), rules.decode_command(timer["command"]))
        self._deliver(first, state, outcome.state, outcome.events)
        self._wake_waiters()

    def _note_deadline(self, due: float, command: Any) -> None:
        """Remember when a phase times out (the clock API), without running the timer."""
        ends = self.ruleset.timer_phase(command)
        if ends is not None:
            self._phase_due = {seq: at for seq, at in self._phase_due.items() if seq > ends}
            self._phase_due[ends] = due

    def _wake_waiters(self) -> None:
        waiting = []
        for seq, future in self._waiters:
            if self.next_event_seq >= seq:
                if not future.done():
                    future.set_result(None)
            else:
                waiting.append((seq, future))
        self._waiters = waiting

    async def _sent_through(self, next_seq: int) -> None:
        """Return once every event before `next_seq` went to this mirror's subscribers."""
        if self.next_event_seq >= next_seq:
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append((next_seq, future))
        try:
            await asyncio.wait_for(asyncio.shield(future), CATCH_UP_WAIT_S)
        except TimeoutError:
            log.warning("mirror_stream_late", game=self.game_id, waiting_for=next_seq)

    # -- what a channel does with it --------------------------------------------------------
    async def submit(self, command: Command, *, cid: str | None = None) -> Rejection | Accepted:
        """Send the command to the owner; its answer comes back once its events went out here."""
        if self._closed:
            raise GameClosedError(self.game_id)
        outcome = await self._submit_to_owner(
            self.game_id, self.ruleset.encode_command(command), cid
        )
        if isinstance(outcome, OwnerAccepted):
            await self._sent_through(outcome.next_seq)
        return outcome

    def say_as_spectator(self, name: str, text: str) -> SpectatorLine:
        """The spectators' room is kept in the owner's order: the line goes to the owner and
        comes back here with everyone else's (`on_spectator_line`, set by the hub)."""
        line = SpectatorLine(name, text)
        if self.on_spectator_line is not None:
            self.on_spectator_line(line)
        return line

    def unsubscribe(self, subscriber: Subscriber) -> None:
        super().unsubscribe(subscriber)
        if not self.subscribers:
            self._on_idle(self)

    async def stop(self) -> None:
        if self._subscription is not None:
            await self._subscription.unsubscribe()
            self._subscription = None
        await super().stop()
