"""One browser WebSocket: it subscribes to one game as a player (by seat token) or spectator.

Events arrive in log order through `deliver`; views are recomputed lazily, at most once per
burst of commands, when the outbox has drained. Everything sent comes from `view` or from
events whose audience includes this viewer — the connection never decides secrecy itself.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict, deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import structlog
from starlette.types import Message
from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketDisconnected

from vollmond.engine.core import Event, Rejection, Viewer
from vollmond.engine.ruleset import CommandDecodeError
from vollmond.i18n import render_event, render_rejection, text
from vollmond.moderation import WEB
from vollmond.service.actor import (
    ClientIdReusedError,
    GameActor,
    GameClosedError,
    GameMovedError,
    SpectatorLine,
)
from vollmond.service.enforce import Enforcer, Person, denial_json, notice_text
from vollmond.service.hub import Hub
from vollmond.service.metrics import Metrics
from vollmond.service.notices import RecordingNotice
from vollmond.service.notices import notice_text as recording_text
from vollmond.service.protocol import (
    PROTOCOL_VERSION,
    CommandMessage,
    Hello,
    Ping,
    ProtocolError,
    Sync,
    VoiceIce,
    VoiceOffer,
    VoiceStop,
    decode_client,
    encode,
)
from vollmond.service.web.account_seats import account_seat
from vollmond.service.web.auth import Sessions
from vollmond.service.web.limits import (
    CHAT,
    WebLimits,
    client_address,
    preferred_language,
    web_text,
)
from vollmond.service.web.moderation_api import same_origin
from vollmond.store.db import StoreBusyError
from vollmond.voice.browser import BrowserVoice, LineId, VoiceError, listener_of
from vollmond.worlds import World, get_world

if TYPE_CHECKING:
    from vollmond.voice.webrtc import BrowserPeer

log = structlog.get_logger(__name__)
OUTBOX_LIMIT = 1000
HEARTBEAT_LOST = 4408  # close code: no ping within `ws_heartbeat_timeout_s`
GAME_MOVED = 1012  # close code "service restart": another node runs the game now, reconnect
EVENT_CACHE_SIZE = 256
# At most this many messages in one `batch` frame: a reconnect's catch-up can queue hundreds
# of events, and a client should not have to take them as one huge frame.
BATCH_MAX = 64
SPECTATOR_CHAT_CHARS = 500  # as long as a player's line (MAX_CHAT_CHARS of the rule sets)

# One fan-out hands the same Event object to every subscriber of its audience; the message is
# the same for all of them in one language, so it is rendered and encoded once. The entry holds
# the event itself, so its id cannot be reused by another object while it is cached.
_event_messages: dict[tuple[int, int, str], tuple[Event, str]] = {}


def event_message(seq: int, event: Event, lang: str, world: World, ruleset: str) -> str:
    """The encoded `event` message (all of an event's subscribers play in one world)."""
    key = (id(event), seq, lang)
    hit = _event_messages.get(key)
    if hit is not None and hit[0] is event:
        return hit[1]
    text = encode(
        {
            "type": "event",
            "seq": seq,
            "code": event.code,
            "params": dict(event.params),
            "text": render_event(event, lang, world, ruleset),
        }
    )
    if len(_event_messages) >= EVENT_CACHE_SIZE:
        del _event_messages[next(iter(_event_messages))]
    _event_messages[key] = (event, text)
    return text


# The view message of one state for one viewer, encoded once however many sockets show it
# (every spectator, a seat's tabs and reconnects): a view is a function of the state and the
# viewer alone, so the viewer as a whole is the key — never a part of it. Kept by the state's
# identity; the entry holds the state, so its id cannot be reused while it is cached.
VIEW_CACHE_SIZE = 1024
_view_messages: OrderedDict[tuple[int, Viewer], tuple[Any, str]] = OrderedDict()


class ShowsViews(Protocol):
    """What `view_message` asks of a game actor: its state and a viewer's view of it."""

    @property
    def state(self) -> Any: ...

    def view_for(self, viewer: Viewer) -> dict[str, Any]: ...


def view_message(actor: ShowsViews, viewer: Viewer) -> str:
    """The encoded `view` message of the actor's current state for `viewer`."""
    state = actor.state
    key = (id(state), viewer)
    hit = _view_messages.get(key)
    if hit is not None and hit[0] is state:
        return hit[1]
    text = encode({"type": "view", "view": actor.view_for(viewer)})
    _view_messages[key] = (state, text)
    if len(_view_messages) > VIEW_CACHE_SIZE:
        _view_messages.popitem(last=False)
    return text


class Connection:
    def __init__(
        self,
        websocket: WebSocket,
        hub: Hub,
        metrics: Metrics,
        limits: WebLimits | None = None,
        voice: BrowserVoice | None = None,
        *,
        enforcer: Enforcer | None = None,
    ) -> None:
        self.ws = websocket
        self.enforcer = enforcer
        self.person = Person()
        self.hub = hub
        self.metrics = metrics
        self.limits = limits
        self.viewer = Viewer.spectator()
        self.lang = "de"
        self.world: World | None = None
        self.actor: GameActor | None = None
        self.seat: int | None = None
        # What the writer sends: queued messages first, then (once they are out) a fresh view
        # if one is due. One event wakes it for both, so a wake-up costs no helper tasks.
        self._outbox: deque[str] = deque()
        self._view_dirty = False
        self._wake = asyncio.Event()
        # This socket's own command is being applied: what the fan-out queues meanwhile (the
        # command's events and the view after them) waits for its ack, so that all of it goes
        # out as one frame rather than the events first and the ack alone after them.
        self._awaiting_ack = False
        self._last_view: str | None = None  # the last view sent; an unchanged one is not resent
        self._batch = False  # the client's hello asked for `batch` frames
        self._overflowed = False
        self._last_seq = 0  # the highest event seq sent; a reconnect's `after` starts it
        self._unwatch_recording: Callable[[], None] | None = None
        self._recorded = False  # this client was shown a recording notice
        # None until the client's first `ping`: from then on silence means a dead connection.
        self._heartbeat_timeout: float | None = None
        self.voice = voice
        self.peer: BrowserPeer | None = None  # this socket's voice; it ends with the socket
        self._closing: asyncio.Task[None] | None = None  # closed by the server (game_moved)

    # -- Subscriber ------------------------------------------------------------------------
    def deliver(self, seq: int, event: Event) -> None:
        assert self.world is not None and self.actor is not None
        if seq <= self._last_seq:
            return  # already sent from the log while catching up: never twice
        self._last_seq = seq
        self._put_text(event_message(seq, event, self.lang, self.world, self.actor.ruleset.id))

    def game_moved(self) -> None:
        """This node stopped running the game (another node took its lease over): close
        with "service restart", so the client reconnects — here or anywhere — and follows
        the game from its new owner with the last seq it saw."""
        if self._closing is None:
            self._closing = asyncio.create_task(self._close(GAME_MOVED))

    async def _close(self, code: int) -> None:
        with contextlib.suppress(WebSocketDisconnect, WebSocketDisconnected, OSError, RuntimeError):
            await self.ws.close(code=code)

    def spectator_line(self, line: SpectatorLine) -> None:
        """A line of the spectators' room; the actor sends it only to its readers."""
        self._put({"type": "side_chat", "room": "spectators", "name": line.name, "text": line.text})

    def state_changed(
        self, state: Any, phase_changed: bool, *, view_unchanged: bool = False
    ) -> None:
        if not view_unchanged:  # else the view sent (or due) is still this viewer's
            self._view_due()

    def _view_due(self) -> None:
        """Send a fresh view once the queued messages are out."""
        self._view_dirty = True
        if not self._awaiting_ack:  # else `_command` wakes the writer once for all of it
            self._wake.set()

    def _put(self, message: dict[str, Any]) -> None:
        self._put_text(encode(message))

    def _put_text(self, text: str) -> None:
        if len(self._outbox) >= OUTBOX_LIMIT:
            # A client too slow to read is dropped rather than slowing the game down.
            self._overflowed = True
            return
        self._outbox.append(text)
        if not self._awaiting_ack:
            self._wake.set()

    # -- life ------------------------------------------------------------------------------
    async def run(self) -> None:
        address = client_address(self.ws)
        if self.limits is not None and not await self.limits.acquire_socket(address):
            await self._refuse_too_many()
            return
        try:
            await self._serve()
        finally:
            if self.limits is not None:
                self.limits.release_socket(address)

    async def _refuse_too_many(self) -> None:
        """Accept only to say why (the client shows the code's text), then close."""
        await self.ws.accept()
        code = "too_many_connections"
        self.metrics.errors.labels(code=code).inc()
        message = web_text(code, preferred_language(self.ws))
        with contextlib.suppress(WebSocketDisconnect, WebSocketDisconnected, OSError):
            await self.ws.send_text(
                encode({"type": "error", "id": None, "code": code, "message": message})
            )
            await self.ws.close(code=1008)

    async def _serve(self) -> None:
        await self.ws.accept()
        self.metrics.connected.inc()
        writer = asyncio.create_task(self._write())
        try:
            while True:
                message = await self._receive()
                if message is None or message["type"] == "websocket.disconnect":
                    break
                self.metrics.messages.inc()
                raw = message.get("text")
                if raw is None:
                    # Binary frames are not part of protocol v1; answered, never parsed.
                    self.error("binary_frame", "send JSON in text frames")
                else:
                    await self._handle_safely(raw)
                if self._overflowed:
                    await self.ws.close(code=1013)
                    break
        except (WebSocketDisconnect, WebSocketDisconnected):
            pass  # the client went away, possibly noticed first by the writer
        finally:
            writer.cancel()
            # A writer that failed because the client vanished has nothing left to say.
            with contextlib.suppress(asyncio.CancelledError, WebSocketDisconnect, OSError):
                await writer
            if self.peer is not None:
                await self.peer.close()
            if self.actor is not None:
                self.actor.unsubscribe(self)
            if self.enforcer is not None:
                self.enforcer.unwatch(self)
            if self._unwatch_recording is not None:
                self._unwatch_recording()
            self.metrics.connected.dec()

    async def _receive(self) -> Message | None:
        """The next frame, or None when a client that promised a heartbeat fell silent.

        A half-open TCP connection (a phone that lost its network) never says goodbye; without
        this the seat would look present and its socket would be held until the OS gives up.
        """
        try:
            return await asyncio.wait_for(self.ws.receive(), self._heartbeat_timeout)
        except TimeoutError:
            log.info("ws_heartbeat_lost", seat=self.seat)
            with contextlib.suppress(
                WebSocketDisconnect, WebSocketDisconnected, OSError, RuntimeError
            ):
                await self.ws.close(code=HEARTBEAT_LOST)
            return None

    def _heartbeat(self) -> None:
        """Answer a ping; from now on this client is expected to ping within the timeout."""
        if self.limits is not None:
            self._heartbeat_timeout = self.limits.settings.ws_heartbeat_timeout_s
        self._put({"type": "pong"})

    async def _write(self) -> None:
        while True:
            if self._awaiting_ack:
                pass  # woken before the hold began: `_command` wakes us again at its end
            elif self._outbox:
                if self._batch:
                    await self.ws.send_text(self._take_batch())
                else:
                    await self.ws.send_text(self._outbox.popleft())
                continue
            elif self._view_dirty:
                text = self._take_view()
                if text is not None:
                    await self.ws.send_text(text)
                continue
            self._wake.clear()
            await self._wake.wait()

    def _take_view(self) -> str | None:
        """The view message that is due, or None when it would repeat the last one sent.

        Most commands leave most views as they were (a night action is secret): a view equal
        to the last one sent would only cost the client a re-render.
        """
        self._view_dirty = False
        if self.actor is None or self.actor.state is None:
            return None
        text = view_message(self.actor, self.viewer)
        if text == self._last_view:
            return None
        self._last_view = text
        return text

    def _take_batch(self) -> str:
        """Everything queued, and the view if one is due, as one frame (docs/protocol.md).

        A command costs each seat an event and a view, a phase change several events and a
        view; one frame for them is one send through the ASGI server and one `write` system
        call instead of several, which at thousands of sockets was the largest part of the
        server's time. The messages are encoded already, so the frame is their JSON list.
        """
        texts = [self._outbox.popleft() for _ in range(min(len(self._outbox), BATCH_MAX))]
        if not self._outbox and self._view_dirty:
            view = self._take_view()
            if view is not None:
                texts.append(view)
        if len(texts) == 1:
            return texts[0]
        return '{"type":"batch","messages":[' + ",".join(texts) + "]}"

    def error(
        self, code: str, message: str, request_id: int | None = None, cid: str | None = None
    ) -> None:
        self.metrics.errors.labels(code=code).inc()
        frame: dict[str, Any] = {
            "type": "error",
            "id": request_id,
            "code": code,
            "message": message,
        }
        if cid is not None:
            frame["cid"] = cid
        self._put(frame)

    # -- messages --------------------------------------------------------------------------
    async def _handle_safely(self, raw: str) -> None:
        """The catch-all of the socket: a bug answers `internal`, never ends the socket; a
        store too busy to answer in time (overload) answers `busy`, to be tried again."""
        try:
            await self._handle(raw)
        except (WebSocketDisconnect, WebSocketDisconnected):
            raise
        except StoreBusyError:
            log.warning("ws_message_store_busy")
            self.error("busy", web_text("busy", self.lang, self.world))
        except Exception:
            log.exception("ws_message_failed")
            self.error("internal", web_text("internal", self.lang, self.world))

    async def _handle(self, raw: str) -> None:
        try:
            message = decode_client(raw)
        except ProtocolError as exc:
            self.error(exc.code, str(exc))
            return
        if isinstance(message, Ping):
            self._heartbeat()
        elif isinstance(message, Hello):
            await self._hello(message)
        elif self.actor is None:
            self.error("hello_first", "send hello before anything else")
        elif isinstance(message, Sync):
            self._last_view = None  # a sync is always answered with a view
            self._view_due()
        elif isinstance(message, CommandMessage):
            await self._command(message)
        else:
            await self._voice(message)

    async def _voice(self, message: VoiceOffer | VoiceIce | VoiceStop) -> None:
        """Signalling of this socket's WebRTC voice (docs/protocol.md, "Voice").

        The peer is bound to what this socket proved in `hello` (the seat of its token, or the
        spectators): it hears that row of the routing table and nothing else.
        """
        assert self.actor is not None
        if self.voice is None or not self.voice.settings.enabled:
            self.error("voice_disabled", web_text("voice_disabled", self.lang, self.world))
            return
        if isinstance(message, VoiceStop):
            if self.peer is not None:
                await self.peer.close()
                self.peer = None
            return
        try:
            if isinstance(message, VoiceIce):
                if self.peer is None or self.peer.closed:
                    self.error("voice_not_open", "send voice_offer first")
                    return
                await self.peer.add_candidate(
                    message.candidate, message.sdpMid, message.sdpMLineIndex
                )
                return
            if self.peer is not None:
                await self.peer.close()  # a new offer replaces the socket's old voice
                self.peer = None
            line = LineId(self.actor.game_id, listener_of(self.seat), self.seat)
            self.peer, sdp = await self.voice.open(
                line, message.sdp, self._voice_status, await self._mute_check()
            )
        except VoiceError as exc:
            self.error(exc.code, web_text(exc.code, self.lang, self.world))
            return
        self._put({"type": "voice_answer", "sdp": sdp})

    async def _mute_check(self) -> Callable[[], bool] | None:
        """The peer's per-frame mute check (O5), as the telephone's: the enforcer's cache,
        read once now so that a person muted before they turn on the voice is silent from
        the first frame (a mute imposed later refreshes the cache before it is told)."""
        enforcer, person = self.enforcer, self.person
        if enforcer is None or not person or self.seat is None:
            return None
        await enforcer.mute_of(person)
        return lambda: enforcer.muted_now(person)

    def _voice_status(self, status: dict[str, Any]) -> None:
        self._put({"type": "voice_status", **status})

    async def _hello(self, hello: Hello) -> None:
        if self.actor is not None:
            self.error("already_joined", "this connection already follows a game")
            return
        if hello.v != PROTOCOL_VERSION:
            self.error("version", f"this server speaks protocol version {PROTOCOL_VERSION}")
            return
        actor = await self.hub.readable(hello.game)  # a finished game: rebuilt from its log
        if actor is None or actor.state is None:
            self.error("not_running", "this game is not running")
            return
        account_id = Sessions.account_id(self.ws)
        if hello.token is not None:
            seat = await self.hub.seat_for(hello.game, hello.token)
            if seat is None or seat.house is None:
                self.error("bad_token", "this seat token is not valid for this game")
                return
            account_id = seat.account_id if seat.account_id is not None else account_id
            self.seat = seat.house
            self.viewer = Viewer.player(seat.house)
        elif hello.account:
            house = await self._account_house(hello.game)
            if house is None:
                self.error("no_account_seat", "your account has no seat in this game")
                return
            self.seat = house
            self.viewer = Viewer.player(house)
        elif hello.operator:
            # A moderator listening in from the console (O1): the operator view and the
            # spectators' mix, only while they hold an alarm of this game.
            # The session cookie decides, so a page of another site is refused (as `account`).
            enforcer = self.enforcer if same_origin(self.ws) else None
            if enforcer is None or not await enforcer.may_listen(account_id, hello.game):
                self.error("not_listening", "only a moderator holding an alarm of this game")
                return
            self.viewer = Viewer.operator()
        elif not hello.spectate:
            self.error("token_or_spectate", "send a seat token, or spectate")
            return
        elif (await self.hub.table(hello.game)).game.private:
            # Like GET /api/games/{id}: a private round is not shown to outsiders (P1).
            self.error("private_game", "private rounds are watched only by their players")
            return
        self.lang = hello.lang
        self._batch = hello.batch
        if not await self._admitted(hello, actor, account_id):
            return
        self.world = get_world(actor.options.world)
        self.actor = actor
        self._last_seq = max(0, hello.after)
        shown = actor.next_event_seq
        self._put(
            {
                "type": "welcome",
                "v": PROTOCOL_VERSION,
                "game": hello.game,
                "seat": self.seat,
                "view": actor.view_for(self.viewer),
                "voice": (
                    self.voice.client_config(f"{hello.game}.{self.seat or 'watch'}")
                    if self.voice is not None
                    else None
                ),
            }
        )
        await self._catch_up(actor)
        actor.subscribe(self)  # presence (a seat with a connection) follows from this
        if actor.reads_spectator_room(self.viewer):
            for line in list(actor.spectator_lines):
                self.spectator_line(line)
        self._watch_recording(hello.game)
        if actor.next_event_seq != shown:
            self._view_due()  # the welcome view is older than the events now sent

    # -- moderation (O5) --------------------------------------------------------------------
    async def _admitted(self, hello: Hello, actor: GameActor, account_id: int | None) -> bool:
        """A banned person is refused with reason and expiry: from the web, from the world,
        and a spectator also from listening in. Admitted connections can be told warnings."""
        self.person = Person(account_id)
        if self.enforcer is None:
            return True
        world = actor.options.world
        denied = await self.enforcer.check(self.person, WEB) or await self.enforcer.check_game(
            self.person, world, spectate=self.seat is None
        )
        if denied is not None:
            frame = {"type": "error", "id": None, **denial_json(denied, self.lang)}
            frame["code"] = frame.pop("error")
            self.metrics.errors.labels(code="banned").inc()
            self._put(frame)
            self.seat = None
            self.viewer = Viewer.spectator()
            return False
        self.enforcer.watch(self, hello.game, self.seat, self.person)
        return True

    def moderation_notice(self, kind: str, message: str) -> None:
        """A warning, mute, kick or abort from the moderators, shown to this player."""
        self._put({"type": "moderation", "kind": kind, "message": message})

    async def _refuse_muted(self, message: CommandMessage) -> bool:
        if self.enforcer is None:
            return False
        mute = await self.enforcer.mute_of(self.person)
        if mute is None:
            return False
        self.error("muted", notice_text(mute, self.lang), message.id, message.cid)
        return True

    # -- the recording notice (O2, O4; docs/protocol.md "Recording notice") ------------------
    def _watch_recording(self, game_id: str) -> None:
        """Follow the table's recording notice; one in force now is sent at once (O4)."""
        notices = self.hub.notices
        self._unwatch_recording = notices.watch(game_id, self._recording_notice)
        current = notices.current(game_id)
        if current is not None:
            self._recording_notice(current)

    def _recording_notice(self, notice: RecordingNotice | None) -> None:
        assert self.world is not None
        if notice is None:
            if self._recorded:
                self._recorded = False
                ended = text("moderation.recording.ended", self.lang, self.world)
                self._put({"type": "recording", "active": False, "text": ended})
            return
        self._recorded = True
        words = recording_text(notice, self.lang, self.world)
        message: dict[str, Any] = {"type": "recording", **notice.to_json()}
        message["mark"], message["text"] = words.mark, words.sentence
        self._put(message)

    async def _account_house(self, game_id: str) -> int | None:
        """The signed-in account's house in this game (the cookie is SameSite=Strict; a page
        of another site is refused here as well, so no foreign page can take a seat)."""
        account_id = Sessions.account_id(self.ws)
        if account_id is None or not same_origin(self.ws):
            return None
        seat = await account_seat(self.hub, game_id, account_id)
        return seat.house if seat is not None else None

    async def _catch_up(self, actor: GameActor) -> None:
        """Send the logged events after `_last_seq`, so that subscribing right after loses none.

        The actor sends an event out (and advances `next_event_seq`) only after the log holds
        it. So once a read began after everything sent out so far, and nothing was sent out
        while it ran, every later event will reach us as a subscriber; events that were
        already in the log but not yet sent out are dropped by `deliver` the second time.
        """
        while True:
            sent_out = actor.next_event_seq
            for seq, event in await actor.history_for(self.viewer, self._last_seq):
                self.deliver(seq, event)
            if actor.next_event_seq == sent_out:
                return

    async def _spectator_say(self, message: CommandMessage, raw: str) -> None:
        """A spectator's line goes to the spectators' room (issue 12): spectators and the
        players out of the game read it, never the living. Only a signed-in account writes
        there (its name is shown, and moderation can mute it); the same rate and mute checks
        as a player's chat apply."""
        assert self.actor is not None and self.world is not None
        account_id = Sessions.account_id(self.ws)
        if account_id is None:
            code = "spectator_login"
            self.error(code, web_text(code, self.lang, self.world), message.id, message.cid)
            return
        text = raw.strip()
        if not text or len(text) > SPECTATOR_CHAT_CHARS:
            code = "spectator_text"
            self.error(code, web_text(code, self.lang, self.world), message.id, message.cid)
            return
        if self.limits is not None and not await self.limits.allow(
            CHAT, f"{self.actor.game_id}:a{account_id}"
        ):
            code = "chat_rate_limited"
            self.error(code, web_text(code, self.lang, self.world), message.id, message.cid)
            return
        if await self._refuse_muted(message):
            return
        name = await self.hub.account_name(account_id)
        self.actor.say_as_spectator(name, text)
        ack: dict[str, Any] = {"type": "ack", "id": message.id, "seq": None}
        if message.cid is not None:
            ack["cid"] = message.cid
            ack["repeated"] = False
        self._put(ack)

    async def _command(self, message: CommandMessage) -> None:
        assert self.actor is not None and self.world is not None
        payload = dict(message.command)
        if self.seat is None and payload.get("type") == "Say":
            await self._spectator_say(message, str(payload.get("text", "")))
            return
        if self.seat is None:
            self.error("spectator", "spectators watch; they cannot act", message.id)
            return
        if payload.get("actor", self.seat) != self.seat:
            self.error("not_your_seat", "you can only act for your own seat", message.id)
            return
        payload["actor"] = self.seat
        if (
            payload.get("type") == "Say"
            and self.limits is not None
            and not await self.limits.chat_allowed(self.actor.game_id, self.seat)
        ):
            code = "chat_rate_limited"
            self.error(code, web_text(code, self.lang, self.world), message.id)
            return
        if payload.get("type") == "Say" and await self._refuse_muted(message):
            return
        try:
            command = self.actor.ruleset.decode_command(payload, players_only=True)
        except CommandDecodeError as exc:
            self.error("bad_command", str(exc), message.id)
            return
        # Only a batching socket waits: one frame per message goes out as it comes.
        self._awaiting_ack = self._batch
        try:
            await self._submit(command, message)
        finally:
            if self._awaiting_ack:
                self._awaiting_ack = False
                self._wake.set()

    async def _submit(self, command: Any, message: CommandMessage) -> None:
        """Apply a seat's command and queue its answer (ack or error)."""
        assert self.actor is not None and self.world is not None
        try:
            outcome = await self.actor.submit(command, cid=message.cid)
        except GameMovedError:
            # Not applied here: the socket is being closed (`game_moved`), and the client
            # sends its unanswered commands again after reconnecting, to the new owner.
            return
        except GameClosedError:
            self.error("not_running", "this game is not running", message.id, message.cid)
            return
        except ClientIdReusedError:
            error = "this cid was sent with another command"
            self.error("cid_reused", error, message.id, message.cid)
            return
        self.metrics.commands.inc()
        if isinstance(outcome, Rejection):
            text = render_rejection(outcome, self.lang, self.world, self.actor.ruleset.id)
            self.error(outcome.code, text, message.id, message.cid)
            self._view_due()
            return
        ack: dict[str, Any] = {"type": "ack", "id": message.id, "seq": outcome.first_seq}
        if message.cid is not None:
            ack["cid"] = message.cid
            ack["repeated"] = outcome.repeated
        self._put(ack)
