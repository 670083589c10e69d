"""The hub: every game on this node — founding, the lobby, starting, and the running actors.

Channels (web, phone, bots) talk to the hub; the hub talks to the store and the actors.
"""

from __future__ import annotations

import asyncio
import secrets
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import structlog

from vollmond.bots.table import BOT_CHANNEL, PATIENCE, bot_name, seat_bots
from vollmond.engine.core import Rejection
from vollmond.engine.ruleset import (
    AnyRuleSet,
    CommandDecodeError,
    OptionsDecodeError,
    UnknownRuleSetError,
    get_ruleset,
    load_rulesets,
)
from vollmond.service.actor import Accepted, Command, GameActor, ReplayDivergedError
from vollmond.service.founding import founding_problem
from vollmond.service.identity import PhoneIdentities
from vollmond.service.karma import KarmaBooks
from vollmond.service.logwriter import LogWriter
from vollmond.service.notices import RecordingNotices
from vollmond.service.policy import (
    PRIVATE_SEATS_GRANT,
    Policy,
    SizeNotAllowedError,
    Standing,
    unlock_private_size,
)
from vollmond.service.presence import Presence
from vollmond.service.seat_codes import SeatCodes
from vollmond.service.shards.stats import NodeStats
from vollmond.settings.karma import KarmaSettings
from vollmond.store import (
    Game,
    GameNotFoundError,
    InsufficientCreditError,
    KarmaEntry,
    LeaseLostError,
    Sessions,
    active_grants,
    create_game,
    credit_balance,
    credit_change,
    find_game_by_invitation,
    get_account,
    get_game,
    has_premium,
    karma_history,
    karma_total,
    list_games,
    set_game_status,
)
from vollmond.store.games import SEED_MAX
from vollmond.store.karma import seat_owner
from vollmond.store.models import GameStatus
from vollmond.store.owners import Owner, OwnerLike
from vollmond.store.seats import (
    Seat,
    add_seat,
    list_seats,
    number_houses,
    remove_seat,
    seat_by_token,
)
from vollmond.worlds import world_ids

if TYPE_CHECKING:
    from vollmond.service.shards.group_metrics import GroupMetrics
    from vollmond.service.shards.shared_limits import SharedLimits
    from vollmond.service.web.limits import LimitTable
    from vollmond.voice.relay import VoiceRelay
    from vollmond.voice.rooms import VoiceRooms

__all__ = [
    "INVITATION_ALPHABET",
    "INVITATION_LENGTH",
    "Founded",
    "GameStatus",  # the store's, for the channels: they read games through the hub only
    "Hub",
    "Joined",
    "LobbyError",
    "Owner",  # the store's, for the channels: whose ledgers (account or phone identity)
    "TableInfo",
    "new_invitation_code",
]

log = structlog.get_logger(__name__)

INVITATION_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
INVITATION_LENGTH = 10


class LobbyError(Exception):
    """A lobby request that cannot be granted; `code` is shown to the user."""

    def __init__(self, code: str, message: str = "") -> None:
        super().__init__(message or code)
        self.code = code


@dataclass(frozen=True, slots=True)
class Founded:
    game: Game
    invitation_code: str | None
    seat: Seat | None
    token: str | None


@dataclass(frozen=True, slots=True)
class Joined:
    game_id: str
    seat: Seat
    token: str
    started: bool


@dataclass(frozen=True, slots=True)
class TableInfo:
    game: Game
    size: int
    seats: list[Seat]
    phase: str | None

    def to_json(self, *, include_names: bool = True) -> dict[str, Any]:
        return {
            "id": self.game.id,
            "world": self.game.world,
            "ruleset": self.game.ruleset,
            "status": self.game.status.value,
            "private": self.game.private,
            "size": self.size,
            "taken": len(self.seats),
            "free": max(0, self.size - len(self.seats)),
            "phase": self.phase,
            # Spectators (X6) may follow it now: hello {"game": id, "spectate": true} on /ws.
            "watchable": self.phase is not None and not self.game.private,
            "deck": self.game.options.get("engine", {}).get("deck"),
            "options": self.game.options.get("engine"),
            "players": [
                {"name": s.name, "channel": s.channel, "house": s.house} for s in self.seats
            ]
            if include_names
            else [],
        }


def new_invitation_code() -> str:
    """Unguessable: 10 symbols of 32 = 50 bits, and attempts are rate-limited."""
    return "".join(secrets.choice(INVITATION_ALPHABET) for _ in range(INVITATION_LENGTH))


def _now() -> datetime:
    return datetime.now(UTC)


class Hub:
    def __init__(
        self,
        sessions: Sessions,
        policy: Policy | None = None,
        *,
        invitation_key: bytes | None = None,
        karma: KarmaSettings | None = None,
    ) -> None:
        """`invitation_key` (store.hashing.invitation_key of the service secret) keys the
        invitation codes' HMACs; without one (tools, tests) a random key serves, and codes of
        that hub's private rounds are found only while it lives."""
        load_rulesets()  # not on a player's first choice, with every game's loop waiting
        self.sessions = sessions
        self.policy = policy or Policy()
        self.invitation_key = invitation_key or secrets.token_bytes(32)
        # Running games, and finished ones for `policy.finished_linger_s` after their end.
        self.actors: dict[str, GameActor] = {}
        # Finished games rebuilt from their logs for readers, least recently read first.
        self._archived: OrderedDict[str, GameActor] = OrderedDict()
        self._lock = asyncio.Lock()
        # Games this hub is starting: their status says RUNNING before their actor has
        # written the first events and is followed; readers wait for that (`_opened`).
        self._starting: dict[str, asyncio.Event] = {}
        self._watchers: set[asyncio.Task[None]] = set()
        self.presence = Presence(self.policy)
        self.identities = PhoneIdentities(sessions)  # the telephone's sign-in
        self.seat_codes = SeatCodes(sessions, self.invitation_key)  # guests' way back
        self.log_writer = LogWriter(sessions)
        # Whether a table is being recorded (O2/O4), for every channel to read and follow.
        self.notices = RecordingNotices()
        # Karma for finished games and the unlock above the threshold (P3-P5).
        self.karma = KarmaBooks(sessions, karma or KarmaSettings(), self.policy)
        # When bots first act in a phase, as fractions of its length (vollmond/bots/table.py):
        # a person's pace; tests that must not wait a phase's minutes make them quick.
        self.bot_patience: tuple[float, float] = PATIENCE

    # -- start and stop --------------------------------------------------------------------
    async def boot(self) -> None:
        """Resume every running game from its log (after a restart or a crash)."""
        for game in await list_games(self.sessions, statuses=(GameStatus.RUNNING,)):
            if self._resumes_here(game.id):
                await self._resume(game)

    async def _resume(self, game: Game) -> bool:
        """Run a running game here again from its log; False if its log cannot be replayed."""
        actor = await self._actor_for(game)
        try:
            await actor.resume()
        except (ReplayDivergedError, CommandDecodeError, OptionsDecodeError):
            # One unreadable log must not keep every other table from coming back.
            log.exception("game_resume_failed", game=game.id)
            await actor.stop()
            return False
        except LeaseLostError:  # nodes: another node took the game over meanwhile
            log.warning("game_resume_moved_away", game=game.id)
            await actor.stop()
            return False
        self._adopt(actor)
        await self._seat_bots(actor)
        log.info("game_resumed", game=game.id, phase=self._phase(actor))
        return True

    def _resumes_here(self, game_id: str) -> bool:
        """Whether this hub runs the game: every game, unless the games are sharded over
        worker processes (service/shards: then only the games this worker owns)."""
        return True

    async def _actor_for(self, game: Game) -> GameActor:
        # The table is dealt for the seats taken at the start, not the founded size.
        seated = sum(1 for s in await list_seats(self.sessions, game.id) if s.house)
        return self._new_actor(game, seated)

    def _new_actor(self, game: Game, players: int) -> GameActor:
        """The game's actor, its rules taken from the registry by the game's rule-set column."""
        ruleset = get_ruleset(game.ruleset)
        options = ruleset.decode_options({**game.options["engine"], "players": players})
        return GameActor(
            game.id, ruleset, options, game.seed, self.sessions, writer=self.log_writer
        )

    @staticmethod
    def _phase(actor: GameActor) -> str | None:
        return actor.ruleset.phase_name(actor.state) if actor.state is not None else None

    async def close(self) -> None:
        for task in self._watchers:
            task.cancel()
        await self.presence.close()
        for actor in list(self.actors.values()):
            await actor.stop()
        self.actors.clear()
        self._archived.clear()
        await self.log_writer.close()

    def _adopt(self, actor: GameActor) -> None:
        self.actors[actor.game_id] = actor
        self.presence.watch(actor, self.sessions)
        task = asyncio.create_task(self._watch(actor))
        self._watchers.add(task)
        task.add_done_callback(self._watchers.discard)

    async def _watch(self, actor: GameActor) -> None:
        await actor.finished.wait()
        await self.presence.forget(actor.game_id)
        await self._book_karma(actor)
        await set_game_status(self.sessions, actor.game_id, GameStatus.FINISHED)
        log.info("game_finished", game=actor.game_id)
        # A short linger: sockets still catching up, a spectator arriving for the end and the
        # after-game chat reach the live actor; then its memory goes back (issue 8).
        await asyncio.sleep(self.policy.finished_linger_s)
        await self.release(actor)

    async def _book_karma(self, actor: GameActor) -> None:
        """Book the game's karma before it is marked finished, so a crash in between is
        booked when the game is resumed (booking is once per game); a failure is logged and
        the game still finishes."""
        try:
            await self.karma.book_game(actor.game_id, actor.ruleset, actor.state)
        except Exception:
            log.exception("karma_booking_failed", game=actor.game_id)

    async def release(self, actor: GameActor) -> None:
        """Stop a finished game's actor and forget it; its logs stay in the store."""
        await actor.stop()
        if self.actors.get(actor.game_id) is actor:
            del self.actors[actor.game_id]
        log.info("game_released", game=actor.game_id)

    async def stop_aborted(self, game_id: str) -> None:
        """An admin aborted this running game (moderation, ``vollmond admin abort-game``):
        stop its actor and forget it. Its status stays ABORTED, so a restart does not resume
        it; its log stays in the store."""
        actor = self.actors.pop(game_id, None)
        if actor is None:
            return
        await self.presence.forget(game_id)
        await actor.stop()
        log.info("game_stopped_aborted", game=game_id)

    def running_games(self) -> int:
        """Games being played on this node (finished ones lingering do not count)."""
        return sum(
            1
            for actor in self.actors.values()
            if actor.state is not None and not actor.ruleset.is_over(actor.state)
        )

    def node_stats(self) -> NodeStats | None:
        """This process as one node among several (`/metrics`, the console); None for the one
        process that runs every game."""
        return None

    async def running_actor(self, game_id: str) -> GameActor | None:
        """The live actor of a game that runs (or lingers after its end) for a channel that
        reads it, None if none; where games are sharded over processes, a mirror of a game
        another worker owns (service/shards)."""
        await self._opened(game_id)
        return self.actors.get(game_id)

    async def share_limits(self, table: LimitTable) -> SharedLimits | None:
        """The web's limits of `table` counted once for all processes that share the games
        (`service/shards/shared_limits.py`); none where every game runs in this process."""
        return None

    async def gather_metrics(self, render: Callable[[], bytes]) -> GroupMetrics | None:
        """`/metrics` for every worker of the port (`service/shards/group_metrics.py`); none
        where this process is the only one that answers it."""
        return None

    async def start_voice_relay(self, rooms: VoiceRooms) -> VoiceRelay | None:
        """The relay that carries a line's voice to its game's room on another process
        (`vollmond.voice.relay`); none where every game runs in this process."""
        return None

    def followed_games(self) -> dict[str, GameActor]:
        """The games this process has live actors of: the running ones (and those lingering
        after their end); where games are sharded, the mirrors of other workers' games too."""
        return self.actors

    async def readable(self, game_id: str) -> GameActor | None:
        """The game for readers (views, history, spectators): its live actor, or for a
        finished game one rebuilt from its log that takes no commands; None if it neither runs
        nor has finished (a lobby, an aborted round, an unknown id)."""
        await self._opened(game_id)
        actor = self.actors.get(game_id)
        if actor is not None:
            return actor
        kept = self._archived.get(game_id)
        if kept is not None:
            self._archived.move_to_end(game_id)
            return kept
        try:
            game = await get_game(self.sessions, game_id)
        except GameNotFoundError:
            return None
        if game.status is not GameStatus.FINISHED:
            return None
        archived = await self._actor_for(game)
        if not await archived.open_archived():
            return None
        self._archived[game_id] = archived
        while len(self._archived) > max(0, self.policy.archived_games_cached):
            self._archived.popitem(last=False)
        return archived

    # -- founding --------------------------------------------------------------------------
    @staticmethod
    def engine_options(game: Game) -> Any:
        """The game's founding options, decoded by its own rule set."""
        return get_ruleset(game.ruleset).decode_options(game.options["engine"])

    @staticmethod
    def ruleset(ruleset_id: str) -> AnyRuleSet:
        """The rule set a founding request names; `LobbyError("unknown_ruleset")` if none."""
        try:
            return get_ruleset(ruleset_id)
        except UnknownRuleSetError as exc:
            raise LobbyError("unknown_ruleset") from exc

    async def found(
        self,
        options: Any,
        *,
        private: bool,
        host_account_id: int | None,
        host_name: str | None = None,
        channel: str = "web",
        ruleset: str = "standard",
        host_phone_id: int | None = None,
    ) -> Founded:
        """W3/P1/P2: check the founding options (of rule set `ruleset`) against the operators'
        bounds, charge credit for a large private round, store the game and seat the host.
        A caller signed in by phone ID without an account founds with `host_phone_id`: their
        own ledgers' standing unlocks and pays (issue 10)."""
        rules = self.ruleset(ruleset)
        data = rules.encode_options(options)
        if data.get("world") not in world_ids(rules.id):
            raise LobbyError("unknown_world")
        players = data.get("players")
        assert isinstance(players, int)
        if (
            not max(self.policy.min_players, rules.min_players)
            <= players
            <= min(self.policy.max_players, rules.max_players)
        ):
            raise LobbyError("size_out_of_range")
        if data.get("deck") == "custom" and channel != "web":
            raise LobbyError("custom_deck_web_only")
        problem = founding_problem(self.policy, data)
        if problem is not None:
            raise LobbyError(problem)
        async with self._lock:  # one founder's standing is checked and charged at a time
            game, code = await self._create(
                rules.id, data, private, host_account_id, seat_owner(host_account_id, host_phone_id)
            )
        seat = token = None
        if host_name is not None:
            joined = await self.join(
                game.id,
                account_id=host_account_id,
                name=host_name,
                channel=channel,
                phone_identity_id=host_phone_id,
            )
            seat, token = joined.seat, joined.token
        return Founded(game, code, seat, token)

    async def _create(
        self,
        ruleset: str,
        data: dict[str, Any],
        private: bool,
        host_account_id: int | None,
        payer: Owner | None,
    ) -> tuple[Game, str | None]:
        charge = 0
        players = int(data["players"])
        if private:
            standing = await self.standing(payer)
            try:
                unlock = unlock_private_size(self.policy, players, standing)
            except SizeNotAllowedError as exc:
                raise LobbyError("private_size_locked", str(exc)) from exc
            charge = unlock.charge
        code = new_invitation_code() if private else None
        game = await create_game(
            self.sessions,
            world=str(data["world"]),
            ruleset=ruleset,
            options={
                "engine": data,
                "size": players,
                "charge": charge,
                # Who paid, when a phone-only founder did (the refund goes back there).
                **(
                    {"charged_phone": payer.phone_id} if charge and payer and payer.is_phone else {}
                ),
            },
            seed=secrets.randbelow(SEED_MAX),
            invitation_code=code,
            invitation_key=self.invitation_key,
            host_account_id=host_account_id,
        )
        if charge and payer is not None:
            try:
                await credit_change(
                    self.sessions,
                    payer,
                    -charge,
                    f"large private round ({players} seats)",
                    game_id=game.id,
                )
            except InsufficientCreditError as exc:  # spent meanwhile, e.g. on another node
                await set_game_status(self.sessions, game.id, GameStatus.ABORTED)
                raise LobbyError("private_size_locked", "not enough credit") from exc
        return game, code

    async def standing(self, who: OwnerLike | None) -> Standing:
        """What a player brings to P2: premium, karma and credit, as of now, from their own
        ledgers (an account's, or a phone-only identity's: issue 10); a guest brings none."""
        if who is None:
            return Standing(premium=False, karma=0, credit=0)
        grants = await active_grants(self.sessions, who, _now(), PRIVATE_SEATS_GRANT)
        return Standing(
            premium=await has_premium(self.sessions, who, _now()),
            karma=await karma_total(self.sessions, who),
            karma_unlock_until=await self.karma.unlock_if_due(who),
            credit=await credit_balance(self.sessions, who),
            granted_size=max(
                (g.value if g.value is not None else self.policy.premium.max_size for g in grants),
                default=0,
            ),
        )

    async def karma_history(self, who: OwnerLike, limit: int) -> list[KarmaEntry]:
        """A player's newest karma changes, newest first (for channels without the store)."""
        return await karma_history(self.sessions, who, limit=limit)

    # -- lobby -----------------------------------------------------------------------------
    async def table(self, game_id: str) -> TableInfo:
        game = await get_game(self.sessions, game_id)
        seats = await list_seats(self.sessions, game_id)
        actor = self.actors.get(game_id)
        phase = self._phase(actor) if actor is not None else None
        if phase is None and game.status is GameStatus.FINISHED:
            phase = "over"  # released from memory; its log tells the rest
        return TableInfo(game, int(game.options.get("size", len(seats))), seats, phase)

    async def public_tables(self, world: str | None = None) -> list[TableInfo]:
        games = await list_games(
            self.sessions,
            statuses=(GameStatus.LOBBY, GameStatus.RUNNING),
            world=world,
            include_private=False,
        )
        return [await self.table(g.id) for g in games]

    async def find_by_invitation(self, code: str) -> Game | None:
        """The private round an invitation code invites to (rate limiting is the caller's)."""
        return await find_game_by_invitation(self.sessions, code, self.invitation_key)

    async def join(
        self,
        game_id: str,
        *,
        account_id: int | None,
        name: str,
        channel: str = "web",
        phone_identity_id: int | None = None,
    ) -> Joined:
        """Take a seat; `phone_identity_id` is the caller's phone identity (its karma is booked
        there when the seat has no account)."""
        async with self._lock:
            table = await self.table(game_id)
            if table.game.status is not GameStatus.LOBBY:
                raise LobbyError("already_started")
            if account_id is not None and any(s.account_id == account_id for s in table.seats):
                raise LobbyError("already_seated")
            if len(table.seats) >= table.size:
                raise LobbyError("table_full")
            token = secrets.token_urlsafe(24)
            seat = await add_seat(
                self.sessions,
                game_id,
                account_id=account_id,
                name=name,
                channel=channel,
                token=token,
                phone_identity_id=phone_identity_id,
            )
            full = len(table.seats) + 1 >= table.size
        started = False
        if full:
            await self.start(game_id, by_account_id=None)
            started = True
            seat = next(s for s in await list_seats(self.sessions, game_id) if s.id == seat.id)
        return Joined(game_id, seat, token, started)

    async def fill_with_bots(self, game_id: str, *, by_account_id: int | None) -> int:
        """The founder fills the free seats of a lobby with bots (vollmond/bots/table.py): seats
        named "Bot N" on the channel "bot", without an account (so no karma). The full table
        starts, and each bot plays its seat from its own view at a person's pace. Returns how
        many bots sat down."""
        table = await self.table(game_id)
        if table.game.status is not GameStatus.LOBBY:
            raise LobbyError("already_started")
        if by_account_id is not None and table.game.host_account_id != by_account_id:
            raise LobbyError("only_host_starts")
        tokens = []
        for n in range(1, table.size - len(table.seats) + 1):
            joined = await self.join(
                game_id, account_id=None, name=bot_name(n), channel=BOT_CHANNEL
            )
            tokens.append(joined.token)
        actor = self.actors.get(game_id)
        if actor is not None and tokens:
            await self._seat_bots(actor)
        return len(tokens)

    async def _seat_bots(self, actor: GameActor) -> None:
        """A bot on every bot seat of a running game: the lobby's seats on the channel "bot"
        are the record, read again whenever the game starts running on this hub — at the
        fill, and at every resume (a restart, a worker's or a node's takeover), where the
        bots are gone with the process that ran them. Each decides from its seat's view of
        the replayed state, so what it did before is done (a cast vote is no legal move
        again) and a move lost with the crash is simply chosen anew: nothing is sent twice."""
        if actor.is_over:
            return
        seats = await list_seats(self.sessions, actor.game_id)
        houses = [s.house for s in seats if s.channel == BOT_CHANNEL and s.house is not None]
        seat_bots(self, actor, houses, patience=self.bot_patience)

    async def leave_lobby(self, game_id: str, token: str) -> None:
        seat = await seat_by_token(self.sessions, game_id, token)
        if seat is None:
            raise LobbyError("not_seated")
        game = await get_game(self.sessions, game_id)
        if game.status is GameStatus.LOBBY:
            await remove_seat(self.sessions, seat.id)
            return
        actor = self.actors.get(game_id)
        if actor is not None and seat.house is not None:
            await actor.submit(actor.ruleset.leave(seat.house))

    async def start(self, game_id: str, *, by_account_id: int | None) -> GameActor:
        """The host starts the game, or it starts when the table is full."""
        # Under the lobby lock: a host's start, a full table's start, a join and an abort of
        # the same round must not interleave (two actors, a seat without a house, a refund
        # for a round that runs).
        opened = asyncio.Event()
        try:
            async with self._lock:
                game = await get_game(self.sessions, game_id)
                if game.status is not GameStatus.LOBBY:
                    raise LobbyError("already_started")
                if by_account_id is not None and game.host_account_id != by_account_id:
                    raise LobbyError("only_host_starts")
                seats = await number_houses(self.sessions, game_id)
                if len(seats) < get_ruleset(game.ruleset).min_players:
                    raise LobbyError("too_few_players")
                actor = self._new_actor(game, len(seats))
                self._starting[game_id] = opened
                await set_game_status(self.sessions, game_id, GameStatus.RUNNING)
            await actor.start()
            self._adopt(actor)
        finally:
            if self._starting.get(game_id) is opened:
                del self._starting[game_id]
            opened.set()
        log.info("game_started", game=game_id, players=len(seats))
        return actor

    async def _opened(self, game_id: str) -> None:
        """Wait while this hub starts the game: a reader who saw its status RUNNING (a
        caller's lobby, a browser's waiting room) then finds its actor, not "not running"
        (the actor's first writes take a while on a loaded store)."""
        starting = self._starting.get(game_id)
        if starting is not None:
            await starting.wait()

    async def abort(self, game_id: str) -> None:
        """A round that never starts: refund the founding charge (P2), exactly once."""
        async with self._lock:  # two aborts at once must not both refund
            game = await get_game(self.sessions, game_id)
            if game.status is not GameStatus.LOBBY:
                raise LobbyError("already_started")
            await set_game_status(self.sessions, game_id, GameStatus.ABORTED)
        charge = int(game.options.get("charge", 0))
        payer = seat_owner(game.host_account_id, game.options.get("charged_phone"))
        if charge and payer is not None:
            await credit_change(
                self.sessions,
                payer,
                charge,
                "refund: round never started",
                game_id=game.id,
            )

    # -- what channels read (they do not open the store themselves) -------------------------
    async def game(self, game_id: str) -> Game:
        """The stored game; `GameNotFoundError` if there is none."""
        return await get_game(self.sessions, game_id)

    async def seats(self, game_id: str) -> list[Seat]:
        return await list_seats(self.sessions, game_id)

    async def account_name(self, account_id: int) -> str:
        return (await get_account(self.sessions, account_id)).name

    # -- play ------------------------------------------------------------------------------
    async def seat_for(self, game_id: str, token: str) -> Seat | None:
        return await seat_by_token(self.sessions, game_id, token)

    async def submit(self, game_id: str, command: Command) -> Rejection | Accepted:
        actor = self.actors.get(game_id)
        if actor is None:
            raise LobbyError("not_running")
        return await actor.submit(command)

    def running_phase(self, game_id: str) -> str | None:
        actor = self.actors.get(game_id)
        return self._phase(actor) if actor is not None else None
