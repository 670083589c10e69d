"""The hub of one worker among several: it runs the games it owns and follows the others.

- A game's owner (`ownership`) runs its actor, takes its commands, writes its log and
  publishes each committed entry on ``game.<id>.log``.
- A socket on another worker gets a `MirrorActor` from `readable`: it follows that stream and
  does the fan-out of its own subscribers; their commands go to the owner (`owner_calls`).
- Every change of a game's lobby (join, start, abort, bots, leaving) goes to its owner too, so
  the one hub lock that guards a table is still the only one for that table. Founding creates
  a new game and may happen anywhere; the founder's seat is then taken at the owner.

With one worker nothing here is used: `vollmond serve` builds the plain `Hub`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import time
from collections.abc import Callable
from typing import Any

import structlog

from vollmond.engine.core import Rejection, ViewerKind
from vollmond.engine.ruleset import get_ruleset
from vollmond.service.actor import (
    Accepted,
    ClientIdReusedError,
    Command,
    FollowsTheGameElsewhere,
    GameActor,
    GameClosedError,
    GameMovedError,
    SpectatorLine,
)
from vollmond.service.hub import Hub, Joined, LobbyError, TableInfo
from vollmond.service.policy import Policy
from vollmond.service.shards import owner_calls
from vollmond.service.shards.group_metrics import GroupMetrics
from vollmond.service.shards.lease_ownership import LeaseOwnership
from vollmond.service.shards.mirror import MirrorActor, OwnerAccepted
from vollmond.service.shards.notices import SharedNotices
from vollmond.service.shards.ownership import HashOwnership, Ownership
from vollmond.service.shards.shared_limits import SharedLimits
from vollmond.service.shards.stats import NodeStats
from vollmond.service.shards.transport import (
    Message,
    NoRespondersError,
    Subscription,
    Transport,
    game_log_subject,
    node_calls_subject,
)
from vollmond.service.web.limits import LimitTable
from vollmond.settings.karma import KarmaSettings
from vollmond.store import Game, GameNotFoundError, Sessions, get_game, list_games
from vollmond.store.models import GameStatus
from vollmond.store.seats import list_seats
from vollmond.voice.relay import VoiceRelay
from vollmond.voice.rooms import VoiceRooms

log = structlog.get_logger(__name__)

CALL_TIMEOUT_S = 30.0  # a join that starts the game deals and writes it before answering
SPECTATORS = "spectators"  # subject prefix of the spectators' room lines, per game
MOVED = "moved"  # subject prefix: a game's new owner (leases) resumed it
HANDED_ON = "handed_on"  # subject prefix: a node that stops cleanly expired its leases
MIRROR_LINGER_S = 30.0  # a mirror nobody watches is kept this long (reloads, reconnects)
KNOWN_ERRORS = (
    LobbyError,
    GameNotFoundError,
    GameClosedError,
    ClientIdReusedError,
    owner_calls.NotOwnerError,
)
ASK_AGAIN_S = 0.25  # with leases: how soon an owner that did not answer is looked up again


class ShardedHub(Hub):
    def __init__(
        self,
        sessions: Sessions,
        policy: Policy | None = None,
        *,
        node: str,
        ownership: Ownership,
        transport: Transport,
        invitation_key: bytes | None = None,
        karma: KarmaSettings | None = None,
        mirror_linger_s: float = MIRROR_LINGER_S,
        group: tuple[str, ...] = (),
    ) -> None:
        """`group`: the worker processes that answer one port together (`--workers`), whose
        `/metrics` each of them answers for; empty for nodes over NATS."""
        super().__init__(sessions, policy, invitation_key=invitation_key, karma=karma)
        self.node = node
        self.group = group
        self.ownership = ownership
        self.transport = transport
        self.mirror_linger_s = mirror_linger_s
        self.notices = SharedNotices(node, transport)  # a player on any worker is told
        self.mirrors: dict[str, MirrorActor] = {}
        self._opening: dict[str, asyncio.Task[MirrorActor | None]] = {}
        self._answering: set[asyncio.Task[None]] = set()
        self._calls: Subscription | None = None
        self.leases = ownership if isinstance(ownership, LeaseOwnership) else None
        self.voice_relay: VoiceRelay | None = None
        self._taking_up = asyncio.Lock()
        if self.leases is not None:
            self.leases.on_acquired = self._take_up
            self.leases.on_lost = self._give_up

    def owns(self, game_id: str) -> bool:
        """Whether this node owns the game, as far as it knows without asking (with leases:
        the games whose lease it holds)."""
        try:
            return self.ownership.owner_of(game_id) == self.node
        except LookupError:
            return False

    async def _owner(self, game_id: str) -> str:
        """The game's owner; with leases, read (or acquired) from its lease if not known."""
        if self.leases is not None:
            return await self.leases.resolve(game_id)
        return self.ownership.owner_of(game_id)

    def owner_known(self, game_id: str) -> str | None:
        """The game's owner if known without waiting; with leases, an unknown one is looked
        up (or its free lease acquired) in the background and None is the answer meanwhile."""
        try:
            return self.ownership.owner_of(game_id)
        except LookupError:
            if self.leases is not None:
                task = asyncio.create_task(self._look_up_owner(game_id))
                self._answering.add(task)
                task.add_done_callback(self._answering.discard)
            return None

    async def _look_up_owner(self, game_id: str) -> None:
        with contextlib.suppress(GameNotFoundError):
            await self._owner(game_id)

    def forget_owner(self, game_id: str) -> None:
        """The game's owner did not answer or no longer runs it: look it up again."""
        if self.leases is not None:
            self.leases.forget(game_id)

    async def share_limits(self, table: LimitTable) -> SharedLimits | None:
        """Each key of the web's limits counted by one process: the hash over the same fixed
        list as the games (`--workers`, `--nodes` without leases). With leases the nodes come
        and go, and each counts its own (docs/scaling.md)."""
        if not isinstance(self.ownership, HashOwnership):
            return None
        shared = SharedLimits(self.node, self.ownership, self.transport, table)
        await shared.start()
        return shared

    async def gather_metrics(self, render: Callable[[], bytes]) -> GroupMetrics | None:
        """The workers of one port (`--workers`) answer `/metrics` for all of them; nodes
        over NATS are scraped one by one."""
        if not self.group:
            return None
        group = GroupMetrics(self.node, self.group, self.transport, render)
        await group.start()
        return group

    async def start_voice_relay(self, rooms: VoiceRooms) -> VoiceRelay | None:
        """Callers on this node in games owned elsewhere, and other nodes' callers in the
        games owned here, meet in the owner's voice room (docs/decisions.md)."""
        relay = VoiceRelay(
            self.node,
            self.transport,
            rooms,
            self.owner_known,
            self.forget_owner,
            taking_up=self.taking_up,
        )
        await relay.start()
        self.voice_relay = relay
        return relay

    async def _owns(self, game_id: str) -> bool:
        """Whether this node owns the game; a game whose lease it has just acquired counts
        once its resume from the log is done (`_taken_up`), so no caller of this — a command,
        a socket's hello, a lobby call — is told in between that the game does not run."""
        if await self._owner(game_id) != self.node:
            return False
        await self._taken_up(game_id)
        return True

    async def _owns_known(self, game_id: str) -> bool | None:
        """`_owns` for readers: None for a game the store does not know (leases are only
        made for known games)."""
        try:
            return await self._owns(game_id)
        except GameNotFoundError:
            return None

    # -- leases: games that come to this node and leave it -------------------------------------
    async def boot(self) -> None:
        """Resume the running games this node owns; with leases, every running game whose
        lease is free, expired or from before the leases, then keep and take over leases."""
        if self.leases is None:
            await super().boot()
            return
        for game in await list_games(self.sessions, statuses=(GameStatus.RUNNING,)):
            await self.leases.resolve(game.id)
        self.leases.start()

    async def _take_up(self, game_id: str) -> None:
        """This node acquired the game's lease: run the game if it is running (from its log,
        as at boot); give the lease back if the game is over."""
        assert self.leases is not None
        # Not the hub's lobby lock: a join holding it may resolve (and acquire) a lease. A
        # game this node starts is not taken up: the node held its lease before the start.
        async with self._taking_up:
            running = self.actors.get(game_id)
            if running is not None:
                fence = self.leases.fence(game_id)
                if running.fence is None or running.fence == fence:
                    return
                # Ours again in a new epoch (lost and taken back): that actor's appends would
                # be refused, and the log may have grown elsewhere. Start again from the log.
                await self._give_up(game_id)
            try:
                game = await get_game(self.sessions, game_id)
            except GameNotFoundError:
                return
            if game.status is GameStatus.RUNNING:
                if await self._resume(game):
                    self.transport.publish(f"{MOVED}.{game_id}", self.node.encode())
            elif game.status in (GameStatus.FINISHED, GameStatus.ABORTED):
                await self.leases.release(game_id)

    async def _taken_up(self, game_id: str) -> None:
        """Wait for the take-up of a game whose lease this node holds but whose actor does
        not run yet. The lease is this node's from the moment it is acquired; the actor runs
        once the game is resumed from its log, under `_taking_up` (held from the acquisition
        on, without a pause between). Asked by `_owns` (every path that asks the owner here)
        and by an owner call from another node."""
        if self.taking_up(game_id):
            async with self._taking_up:
                pass

    def taking_up(self, game_id: str) -> bool:
        """This node holds the game's lease and is taking it up (`_take_up`: its log read,
        the game resumed): the game is this node's, though its actor does not run yet (what
        `_taken_up` waits for)."""
        return (
            self.leases is not None and game_id in self.leases.held and game_id not in self.actors
        )

    def _on_moved(self, message: Message) -> None:
        """A game changed hands: this node's mirror of it tells the new owner which seats its
        sockets follow (the old owner's presence counts died with it)."""
        game_id, owner = message.subject.split(".", 1)[1], message.data.decode()
        mirror = self.mirrors.get(game_id)
        if self.leases is not None:
            self.leases.forget(game_id)
        if mirror is None:
            return
        follows: dict[int, int] = {}
        for subscriber in mirror.subscribers:
            seat = subscriber.viewer.seat
            if subscriber.viewer.kind is ViewerKind.PLAYER and seat is not None:
                follows[seat] = follows.get(seat, 0) + 1
        for seat, count in sorted(follows.items()):
            notice = owner_calls.request("followers", game_id, seat=seat, change=count)
            self.transport.publish(node_calls_subject(owner), notice)

    async def _give_up(self, game_id: str, actor: GameActor | None = None) -> None:
        """The game's lease is no longer this node's (it missed renewing, or the store refused
        an append under it): stop running it. `actor`: only if that is still the game's."""
        if actor is not None and self.actors.get(game_id) is not actor:
            return
        actor = self.actors.pop(game_id, None)
        if actor is not None:
            await self.presence.forget(game_id)
            await actor.stop()
            for subscriber in list(actor.subscribers):  # sockets: reconnect, to a mirror
                if isinstance(subscriber, FollowsTheGameElsewhere):
                    subscriber.game_moved()
            log.warning("game_given_up", game=game_id, node=self.node)

    def _moved_away(self, actor: GameActor) -> None:
        """The store refused the actor's append: the game's lease is another node's now."""
        assert self.leases is not None
        self.leases.moved_away(actor.game_id)
        task = asyncio.create_task(self._give_up(actor.game_id, actor))
        self._answering.add(task)
        task.add_done_callback(self._answering.discard)

    async def release(self, actor: GameActor) -> None:
        await super().release(actor)
        if self.leases is not None:
            await self.leases.release(actor.game_id)

    def _resumes_here(self, game_id: str) -> bool:
        return self.owns(game_id)

    async def serve_calls(self) -> None:
        """Answer the other workers' requests about the games this one owns, and hear their
        recording notices."""
        assert isinstance(self.notices, SharedNotices)
        await self.notices.follow()
        await self.transport.subscribe(f"{SPECTATORS}.>", self._on_spectator_line)
        if self.leases is not None:
            await self.transport.subscribe(f"{MOVED}.>", self._on_moved)
            await self.transport.subscribe(f"{HANDED_ON}.>", self._on_handed_on)
        self._calls = await self.transport.subscribe(node_calls_subject(self.node), self._on_call)

    async def close(self) -> None:
        """Stop; with leases, hand the games on once the actors have stopped and the log
        writer is closed (nothing more is written here): their leases expire now and the other
        nodes are told, so they take them over at once instead of a time-to-live later."""
        if self.voice_relay is not None:
            await self.voice_relay.close()
        if self.leases is not None:
            await self.leases.stop()
        if self._calls is not None:
            await self._calls.unsubscribe()
        for task in [*self._opening.values(), *self._answering]:
            task.cancel()
        for mirror in list(self.mirrors.values()):
            await mirror.stop()
        self.mirrors.clear()
        await super().close()
        if self.leases is not None:
            try:
                handed_on = await self.leases.hand_on()
            except Exception:  # the store is away: the leases expire by themselves
                log.exception("leases_not_handed_on", node=self.node)
            else:
                if handed_on:
                    self.transport.publish(f"{HANDED_ON}.{self.node}", b"")
        await self.transport.close()

    def _on_handed_on(self, message: Message) -> None:
        """Another node stopped cleanly and expired its leases: take its games over now."""
        if self.leases is None or message.subject.split(".", 1)[1] == self.node:
            return
        task = asyncio.create_task(self._take_over_now())
        self._answering.add(task)
        task.add_done_callback(self._answering.discard)

    async def _take_over_now(self) -> None:
        assert self.leases is not None
        try:
            await self.leases.take_over()
        except Exception:  # the loop's next round tries again
            log.exception("lease_take_over_failed", node=self.node)

    # -- the owner: publish what it commits, answer what it is asked -------------------------
    def _new_actor(self, game: Game, players: int) -> GameActor:
        actor = super()._new_actor(game, players)
        if self.leases is not None:  # what it writes carries the lease it runs the game under
            actor.fence = self.leases.fence(game.id)
            actor.on_moved = lambda: self._moved_away(actor)
        actor.on_committed = lambda seq, entry, first: self._publish(game.id, seq, entry, first)
        actor.on_spectator_line = lambda line: self._tell_spectators(game.id, line)
        return actor

    # -- the spectators' room: the owner orders it, every worker with a copy keeps it ---------
    def _spectator_line_to_owner(self, game_id: str, line: SpectatorLine) -> None:
        notice = owner_calls.request("spectator_say", game_id, name=line.name, text=line.text)
        self._tell_owner(game_id, notice)

    def _tell_owner(self, game_id: str, notice: bytes) -> None:
        """Publish a notice to the game's owner: at once if it is known (in order with what
        this node sends next), else once it has been looked up (leases)."""
        try:
            owner = self.ownership.owner_of(game_id)
        except LookupError:
            task = asyncio.create_task(self._tell_owner_later(game_id, notice))
            self._answering.add(task)
            task.add_done_callback(self._answering.discard)
            return
        self.transport.publish(node_calls_subject(owner), notice)

    async def _tell_owner_later(self, game_id: str, notice: bytes) -> None:
        self.transport.publish(node_calls_subject(await self._owner(game_id)), notice)

    def _tell_spectators(self, game_id: str, line: SpectatorLine) -> None:
        body = {"from": self.node, "name": line.name, "text": line.text}
        self.transport.publish(f"{SPECTATORS}.{game_id}", json.dumps(body).encode())

    def _on_spectator_line(self, message: Message) -> None:
        body = json.loads(message.data)
        actor = self.followed_games().get(message.subject.split(".", 1)[1])
        if body["from"] != self.node and actor is not None:
            actor.hear_spectator_line(SpectatorLine(body["name"], body["text"]))

    def _publish(self, game_id: str, seq: int, entry: Any, first: int) -> None:
        data = json.dumps({"seq": seq, "entry": entry, "first": first}).encode()
        self.transport.publish(game_log_subject(game_id), data)

    def _on_call(self, message: Message) -> None:
        if message.reply is None:  # a notice, handled at once and in the order sent
            self._notice(json.loads(message.data))
            return
        task = asyncio.create_task(self._answer(message))
        self._answering.add(task)
        task.add_done_callback(self._answering.discard)

    async def _answer(self, message: Message) -> None:
        body = json.loads(message.data)
        try:
            data = owner_calls.answer_ok(await self._call(body["op"], body["game"], body["args"]))
        except KNOWN_ERRORS as exc:
            data = owner_calls.answer_error(exc)
        except Exception as exc:
            log.exception("owner_call_failed", op=body.get("op"), game=body.get("game"))
            data = owner_calls.answer_error(exc)
        self.transport.reply(message, data)

    async def _call(self, op: str, game_id: str, args: dict[str, Any]) -> Any:
        if not self.owns(game_id):  # never forwarded twice
            raise owner_calls.NotOwnerError(f"{self.node} does not own {game_id}")
        await self._taken_up(game_id)  # every call, not only a command
        if op == "submit":
            actor = self.actors.get(game_id)
            if actor is None:
                raise GameClosedError(game_id)
            command = actor.ruleset.decode_command(args["command"])
            try:
                outcome = await actor.submit(command, cid=args["cid"])
            except GameMovedError as exc:  # the asker looks the owner up again
                raise owner_calls.NotOwnerError(f"{self.node} lost {game_id}") from exc
            if isinstance(outcome, Rejection):
                return owner_calls.outcome_json(outcome)
            next_seq = outcome.first_seq + len(outcome.events)
            return owner_calls.outcome_json(
                OwnerAccepted(outcome.first_seq, (), outcome.repeated, next_seq=next_seq)
            )
        if op == "join":
            return owner_calls.joined_json(await self.join(game_id, **args))
        if op == "start":
            await self.start(game_id, by_account_id=args["by_account_id"])
            return None
        if op == "abort":
            await self.abort(game_id)
            return None
        if op == "fill_with_bots":
            return await self.fill_with_bots(game_id, by_account_id=args["by_account_id"])
        if op == "leave_lobby":
            await self.leave_lobby(game_id, args["token"])
            return None
        if op == "stop_aborted":
            await self.stop_aborted(game_id)
            return None
        if op == "phase":
            return self.running_phase(game_id)
        raise owner_calls.OwnerCallError(f"unknown call {op!r}")

    def _notice(self, body: dict[str, Any]) -> None:
        """A mirror's socket started or stopped following a seat: the owner's presence counts
        it as it counts its own (a player on another worker is not away). Or a spectator on
        another worker wrote a line: the owner keeps it and publishes it to every copy."""
        actor = self.actors.get(body["game"])
        if actor is None:
            return
        args = body["args"]
        if body["op"] == "followers" and actor.on_seat_followers is not None:
            actor.on_seat_followers(int(args["seat"]), int(args["change"]))
        elif body["op"] == "spectator_say":
            actor.say_as_spectator(str(args["name"]), str(args["text"]))

    def _tell_followers(self, game_id: str, seat: int, change: int) -> None:
        notice = owner_calls.request("followers", game_id, seat=seat, change=change)
        self._tell_owner(game_id, notice)

    # -- everyone else: ask the owner ---------------------------------------------------------
    async def _ask(self, op: str, game_id: str, **args: Any) -> Any:
        """The owner's answer. With leases, an owner that is gone (no responders) or says it
        is not the owner is looked up again until its lease expired and someone — maybe this
        node — took the game over (`LeaseOwnership.retry_for_s`)."""
        data = owner_calls.request(op, game_id, **args)
        retry_for_s = 0.0 if self.leases is None else self.leases.retry_for_s
        deadline = time.monotonic() + retry_for_s
        while True:
            owner = node_calls_subject(await self._owner(game_id))
            try:
                answer = await self.transport.request(owner, data, CALL_TIMEOUT_S)
                return owner_calls.result(game_id, answer)
            except (NoRespondersError, owner_calls.NotOwnerError):
                if self.leases is None or time.monotonic() > deadline:
                    raise
                self.leases.forget(game_id)
            log.info("owner_not_answering", game=game_id, op=op, node=self.node)
            await asyncio.sleep(ASK_AGAIN_S)

    async def _submit_to_owner(
        self, game_id: str, raw: Any, cid: str | None
    ) -> Accepted | Rejection:
        return owner_calls.outcome_of(await self._ask("submit", game_id, command=raw, cid=cid))

    async def submit(self, game_id: str, command: Command) -> Rejection | Accepted:
        if await self._owns(game_id):
            try:
                return await super().submit(game_id, command)
            except GameMovedError:  # refused by the store: the game runs elsewhere now
                pass
        ruleset = get_ruleset((await get_game(self.sessions, game_id)).ruleset)
        return await self._submit_to_owner(game_id, ruleset.encode_command(command), None)

    async def join(
        self,
        game_id: str,
        *,
        account_id: int | None,
        name: str,
        channel: str = "web",
        phone_identity_id: int | None = None,
    ) -> Joined:
        if await self._owns(game_id):
            return await super().join(
                game_id,
                account_id=account_id,
                name=name,
                channel=channel,
                phone_identity_id=phone_identity_id,
            )
        answer = await self._ask(
            "join",
            game_id,
            account_id=account_id,
            name=name,
            channel=channel,
            phone_identity_id=phone_identity_id,
        )
        return owner_calls.joined_of(answer)

    async def start(self, game_id: str, *, by_account_id: int | None) -> GameActor:
        if await self._owns(game_id):
            return await super().start(game_id, by_account_id=by_account_id)
        await self._ask("start", game_id, by_account_id=by_account_id)
        actor = await self.readable(game_id)
        if actor is None:
            raise LobbyError("not_running")
        return actor

    async def abort(self, game_id: str) -> None:
        if await self._owns(game_id):
            await super().abort(game_id)
        else:
            await self._ask("abort", game_id)

    async def fill_with_bots(self, game_id: str, *, by_account_id: int | None) -> int:
        if await self._owns(game_id):
            return await super().fill_with_bots(game_id, by_account_id=by_account_id)
        return int(await self._ask("fill_with_bots", game_id, by_account_id=by_account_id))

    async def leave_lobby(self, game_id: str, token: str) -> None:
        if await self._owns(game_id):
            await super().leave_lobby(game_id, token)
        else:
            await self._ask("leave_lobby", game_id, token=token)

    async def stop_aborted(self, game_id: str) -> None:
        if await self._owns(game_id):
            await super().stop_aborted(game_id)
            if self.leases is not None:
                await self.leases.release(game_id)
            return
        mirror = self.mirrors.pop(game_id, None)
        if mirror is not None:
            await mirror.stop()
        await self._ask("stop_aborted", game_id)

    def followed_games(self) -> dict[str, GameActor]:
        return {**self.actors, **self.mirrors}

    def node_stats(self) -> NodeStats:
        relay = self.voice_relay.stats() if self.voice_relay is not None else None
        if self.leases is None:
            return NodeStats(
                self.node, "hash", self.running_games(), len(self.mirrors), relay=relay
            )
        return NodeStats(
            self.node,
            "leases",
            self.running_games(),
            len(self.mirrors),
            leases_held=len(self.leases.held),
            next_expiry_s=self.leases.next_expiry_s(),
            leases=dataclasses.replace(self.leases.counters),
            relay=relay,
        )

    def running_phase(self, game_id: str) -> str | None:
        mirror = self.mirrors.get(game_id)
        if mirror is not None:
            return self._phase(mirror)
        return super().running_phase(game_id)

    async def table(self, game_id: str) -> TableInfo:
        table = await super().table(game_id)
        if table.phase is not None or table.game.status is not GameStatus.RUNNING:
            return table
        if await self._owns(game_id):
            return table
        phase = self.running_phase(game_id)
        if phase is None:
            phase = await self._ask("phase", game_id)
        return dataclasses.replace(table, phase=phase)

    # -- mirrors of the games owned elsewhere ---------------------------------------------------
    async def running_actor(self, game_id: str) -> GameActor | None:
        if game_id in self.actors:
            return await super().running_actor(game_id)
        owns = await self._owns_known(game_id)
        if owns is None:
            return None
        if owns:
            return await super().running_actor(game_id)
        mirror = self.mirrors.get(game_id)
        if mirror is not None:
            return mirror
        with contextlib.suppress(GameNotFoundError):
            if (await get_game(self.sessions, game_id)).status is GameStatus.RUNNING:
                return await self.readable(game_id)
        return None

    async def readable(self, game_id: str) -> GameActor | None:
        if game_id in self.actors or game_id in self._archived:
            return await super().readable(game_id)
        mirror = self.mirrors.get(game_id)
        if mirror is not None:
            return mirror
        owns = await self._owns_known(game_id)
        if owns is None:
            return None
        if owns:
            return await super().readable(game_id)
        try:
            game = await get_game(self.sessions, game_id)
        except GameNotFoundError:
            return None
        if game.status is not GameStatus.RUNNING:
            return await super().readable(game_id)  # a finished game: its archive, read-only
        opening = self._opening.get(game_id)
        if opening is None:
            opening = asyncio.create_task(self._open_mirror(game))
            self._opening[game_id] = opening
            opening.add_done_callback(lambda _: self._opening.pop(game_id, None))
        return await asyncio.shield(opening)

    async def _open_mirror(self, game: Game) -> MirrorActor | None:
        seated = sum(1 for s in await list_seats(self.sessions, game.id) if s.house)
        ruleset = get_ruleset(game.ruleset)
        options = ruleset.decode_options({**game.options["engine"], "players": seated})
        mirror = MirrorActor(
            game.id,
            ruleset,
            options,
            game.seed,
            self.sessions,
            submit_to_owner=self._submit_to_owner,
            on_idle=self._mirror_idle,
        )
        mirror.on_seat_followers = lambda seat, change: self._tell_followers(game.id, seat, change)
        mirror.on_spectator_line = lambda line: self._spectator_line_to_owner(game.id, line)
        if not await mirror.follow(self.transport):
            return None
        self.mirrors[game.id] = mirror
        self._mirror_idle(mirror)  # released unless someone subscribes within the linger
        log.info("game_mirrored", game=game.id, node=self.node)
        return mirror

    def _mirror_idle(self, mirror: MirrorActor) -> None:
        loop = asyncio.get_running_loop()
        loop.call_later(self.mirror_linger_s, self._release_if_idle, mirror)

    def _release_if_idle(self, mirror: MirrorActor) -> None:
        if mirror.subscribers or self.mirrors.get(mirror.game_id) is not mirror:
            return
        del self.mirrors[mirror.game_id]
        task = asyncio.create_task(mirror.stop())
        self._answering.add(task)
        task.add_done_callback(self._answering.discard)
