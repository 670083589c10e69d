"""The telephone channel: SIP calls in, one session per call, voice rooms out.

:class:`PhoneService` is the :class:`~vollmond.phone.sip.call.CallHandler` of the SIP server.
For every answered call it makes a session (the announcer menu and the game by keys, built by
``vollmond.phone.session``), hands it every key, and sets the call's audio source to the
listener's line: the session's prompts on top of the room the routing table gives that seat
(:mod:`vollmond.voice.rooms`, shared with the browser's voice). A seated caller's voice goes
into the game's mixer as that house's source; a caller in the menu hears only prompts and
feeds no room. Where games are sharded over processes and the caller's game runs on another
one, the call stays here and its voice and room audio go through the rooms' relay
(:mod:`vollmond.voice.relay`) to the game's room on its owner.

Everything here runs on the event loop and never blocks. A failing session is logged and
silenced; it cannot stop the shared media clock or disturb another call.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import structlog

from vollmond.engine.ruleset import SPECTATORS, Listener
from vollmond.phone import capture
from vollmond.phone.caller import CallerId, user_part
from vollmond.phone.media import FRAME_SAMPLES, Int16Array
from vollmond.phone.mediaproc.client import RemoteEndpoint
from vollmond.phone.session.prompts.queue import PromptQueue, Utterance
from vollmond.phone.sip.call import Call, EndReason
from vollmond.phone.sip.uas import SipUas, UasConfig
from vollmond.service.config import Settings
from vollmond.service.enforce import Enforcer, Person
from vollmond.service.hub import Hub
from vollmond.settings import IdentitySettings, PhoneSettings
from vollmond.voice.conference import ConferenceSeat, ConferenceVoice
from vollmond.voice.mixer import GameMixer, overlay
from vollmond.voice.relay import RelayedLine
from vollmond.voice.rooms import Room, VoiceRooms

if TYPE_CHECKING:
    from vollmond.phone.session.prompts.voice import Voice

log = structlog.get_logger(__name__)

#: Key flood control per line: a bucket of this many keys, refilled at KEY_RATE per second.
KEY_BURST = 20
KEY_RATE = 8.0
#: Longest wait for a farewell prompt before a hang-up the session asked for.
HANGUP_GRACE_S = 15.0


class LineSession(Protocol):
    """What the service needs of a call's session (``vollmond.phone.session.PhoneSession``)."""

    @property
    def game_id(self) -> str | None: ...

    @property
    def seat(self) -> int | None: ...

    @property
    def spectating(self) -> bool: ...

    async def start(self) -> None: ...

    def on_key(self, key: str) -> None: ...

    def next_frame(self) -> Int16Array | None: ...

    async def close(self) -> None: ...


#: Makes the session of a new call from what the network says about the caller: the From
#: number (a claim), the number a trusted proxy asserted, the signalling address.
SessionFactory = Callable[[CallerId], LineSession]


def caller_number(call: Call) -> str:
    """The caller's number or name from the From URI: ``sip:+4930123@host`` → ``+4930123``."""
    return caller_number_of(call.caller)


def caller_id(call: Call) -> CallerId:
    """The :class:`CallerId` of a call; `asserted_identity` is set by the SIP server only for
    calls from a trusted proxy (``SipSettings.trusted_proxies``)."""
    asserted = call.asserted_identity
    asserted_number = user_part(asserted) if asserted else None
    if asserted_number == "anonymous":
        asserted_number = None
    return CallerId(caller_number(call), asserted_number, call.peer[0])


def caller_number_of(uri: str) -> str:
    """The user part of a SIP or tel URI; "anonymous" when there is none.

    >>> caller_number_of("sip:+4930123@10.0.0.1;user=phone")
    '+4930123'
    >>> caller_number_of("sip:10.0.0.1")
    'anonymous'
    >>> caller_number_of("tel:+4930123;phone-context=x")
    '+4930123'
    """
    scheme, _, rest = uri.partition(":")
    user, at, _ = rest.partition("@")
    if not at and scheme.lower() != "tel":
        user = ""
    return user.split(";", 1)[0] or "anonymous"


@dataclass(eq=False)
class Line:
    """One answered call and its session."""

    call: Call
    session: LineSession
    number: str
    room: Room | None = None
    tokens: float = KEY_BURST
    refilled: float = 0.0
    dropped_keys: int = 0
    frame_errors: int = 0
    #: When the session last gave prompt audio (to let a goodbye finish before hanging up).
    last_prompt: float = 0.0
    tasks: set[asyncio.Task[None]] = field(default_factory=set)


def _prompt_queue(line: Line) -> PromptQueue | None:
    """The session's prompt queue, if it keeps one (sessions are any `LineSession`)."""
    prompts = getattr(line.session, "prompts", None)
    return prompts if isinstance(prompts, PromptQueue) else None


class PhoneService:
    """The CallHandler that connects calls, sessions and voice rooms."""

    def __init__(
        self,
        hub: Hub,
        session_factory: SessionFactory,
        *,
        clock: Callable[[], float] = time.monotonic,
        enforcer: Enforcer | None = None,
        rooms: VoiceRooms | None = None,
    ) -> None:
        self.hub = hub
        self.enforcer = enforcer
        self.session_factory = session_factory
        self.clock = clock
        self.lines: dict[Call, Line] = {}
        #: The voice rooms; shared with the browser's voice when the app passes its own.
        self.voice_rooms = rooms or VoiceRooms(hub, hub.notices)
        self._own_rooms = rooms is None  # closed with the service; the app closes a shared one
        self.uas: SipUas | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self, config: UasConfig) -> SipUas:
        """Open the SIP port and answer calls."""
        self.uas = await SipUas.start(config, self)
        log.info("phone_ready", host=config.host, port=self.uas.port)
        return self.uas

    async def close(self) -> None:
        """Hang up every call, close every session and leave every game."""
        if self.uas is not None:
            await self.uas.close(bye_timeout=1.0)
        for line in list(self.lines.values()):
            self._end(line, EndReason.SHUTDOWN)
        tasks = list(self._tasks)
        if tasks:
            await asyncio.wait(tasks, timeout=5.0)
            for task in tasks:
                task.cancel()
        if self._own_rooms:
            self.voice_rooms.close()

    def _spawn(
        self, coro: Coroutine[Any, Any, None], what: str, line: Line, *, of_line: bool = False
    ) -> None:
        """Run a session coroutine; errors are logged. ``of_line`` tasks end with the call."""

        async def guarded() -> None:
            try:
                await coro
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("phone_session_failed", step=what, call=line.call.call_id)

        task = asyncio.get_running_loop().create_task(guarded())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        if of_line:
            line.tasks.add(task)
            task.add_done_callback(line.tasks.discard)

    # -- CallHandler -----------------------------------------------------------------------
    def on_call_started(self, call: Call) -> None:
        caller = caller_id(call)
        number = caller.number
        try:
            session = self.session_factory(caller)
        except Exception:
            log.exception("phone_session_refused", call=call.call_id)
            call.hangup()
            return
        line = Line(call, session, number, refilled=self.clock())
        self.lines[call] = line
        if isinstance(call.media, RemoteEndpoint):
            # Mixed and played in the media process: only the changes cross (docs/voice.md).
            call.media.driver = MixedElsewhere(self, line, _prompt_queue(line))
        else:
            call.set_source(lambda: self._frame(line))
        log.info("phone_call_started", call=call.call_id, caller=number)
        self._spawn(session.start(), "start", line)
        requested = getattr(session, "hangup_requested", None)
        if isinstance(requested, asyncio.Event):
            self._spawn(self._hang_up_when(requested, line), "hangup", line, of_line=True)

    async def _hang_up_when(self, requested: asyncio.Event, line: Line) -> None:
        """The session asked to end the call (e.g. leaving from the announcer): let its last
        prompt finish (at most HANGUP_GRACE_S), then send BYE.

        Finished is when its prompt queue is empty — a media process reports each prompt
        played to its end — and the line gave no prompt audio for 0.3 s. Not the time since
        the last prompt audio alone: a media process that stalled for 0.5 s (a loaded machine)
        gave none meanwhile, and the caller was hung up in the middle of the goodbye."""
        await requested.wait()
        deadline = self.clock() + HANGUP_GRACE_S
        await asyncio.sleep(0.1)
        queue = _prompt_queue(line)
        while self.clock() < deadline and (
            (queue is not None and queue.busy) or self.clock() - line.last_prompt < 0.3
        ):
            await asyncio.sleep(0.05)
        if line.call in self.lines:
            log.info("phone_session_hung_up", call=line.call.call_id)
            line.call.hangup()

    def on_dtmf(self, call: Call, digit: str) -> None:
        line = self.lines.get(call)
        if line is None:
            return
        now = self.clock()
        line.tokens = min(KEY_BURST, line.tokens + (now - line.refilled) * KEY_RATE)
        line.refilled = now
        if line.tokens < 1.0:
            line.dropped_keys += 1
            if line.dropped_keys in (1, 10, 100) or line.dropped_keys % 1000 == 0:
                log.warning("phone_key_flood", call=call.call_id, dropped=line.dropped_keys)
            return
        line.tokens -= 1.0
        line.session.on_key(digit)

    def on_audio(self, call: Call, samples: Int16Array) -> None:
        line = self.lines.get(call)
        if line is None:
            return
        capture.feed(line.session, samples)  # a voice message being recorded (X3)
        session = line.session
        conference = _conference_seat(session)
        if conference is not None:  # a conference room (X2): its own mixer, no game
            if not self._muted(session):
                conference.voice.push(conference.slot, samples)
            return
        seat = session.seat
        speaks = seat is not None and not session.spectating and not self._muted(session)
        if line.room is None:
            relayed = self._relayed(line)
            if relayed is not None and speaks:
                assert seat is not None
                relayed.push(seat, samples)  # to the game's room on its owner
            return
        if speaks:
            assert seat is not None
            line.room.mixer.push(seat, samples)

    def _muted(self, session: LineSession) -> bool:
        """A muted person's voice does not enter the rooms (O5). The enforcer answers from
        its per-person cache (with the mute's expiry), never from the database per frame."""
        if self.enforcer is None:
            return False
        person = getattr(session, "person", None)
        return isinstance(person, Person) and self.enforcer.muted_now(person)

    def on_call_ended(self, call: Call, reason: EndReason) -> None:
        line = self.lines.get(call)
        if line is not None:
            self._end(line, reason)

    def _end(self, line: Line, reason: EndReason) -> None:
        if self.lines.pop(line.call, None) is None:
            return
        line.call.set_source(None)
        if isinstance(line.call.media, RemoteEndpoint):
            line.call.media.driver = None
            prompts = _prompt_queue(line)
            if prompts is not None:
                prompts.changed = None
        self._attach(line, None)
        if self.voice_rooms.relay is not None:
            self.voice_rooms.relay.unlink(line)
        for task in list(line.tasks):
            task.cancel()
        log.info(
            "phone_call_ended",
            call=line.call.call_id,
            reason=reason.value,
            dropped_keys=line.dropped_keys,
        )
        self._spawn(line.session.close(), "close", line)

    # -- audio -----------------------------------------------------------------------------
    def _frame(self, line: Line) -> Int16Array | None:
        """The next 20 ms of this line (called by the media clock; must never raise)."""
        try:
            session = line.session
            prompt = session.next_frame()
            if prompt is not None:
                line.last_prompt = self.clock()
                if prompt.shape != (FRAME_SAMPLES,):
                    prompt = _fit(prompt)
            room = self._room_audio(line, session)
            return overlay(prompt, room)
        except Exception:
            line.frame_errors += 1
            if line.frame_errors in (1, 10, 100) or line.frame_errors % 1000 == 0:
                log.exception("phone_frame_failed", call=line.call.call_id)
            return None

    def _room_audio(self, line: Line, session: LineSession) -> Int16Array | None:
        place = self._place(line, session)
        if place.relayed is not None:
            return place.relayed.pull()
        if place.mixer is None or place.listener is None:
            return None
        return place.mixer.pull(place.listener, puller=line)

    def _place(self, line: Line, session: LineSession) -> Place:
        """Where the line's room audio comes from now (attaching it to its room, linking it
        through the relay): the one decision, whether the mix is made here or in its media
        process."""
        conference = _conference_seat(session)
        if conference is not None:
            if line.room is not None:
                self._attach(line, None)
            if self.voice_rooms.relay is not None:
                self.voice_rooms.relay.unlink(line)  # left a game run elsewhere for the room
            voice, slot = conference.voice, conference.slot
            if not voice.mixed_here:  # owned by another process: its mix comes by the relay
                return Place(relayed=_Pulled(voice, slot, line))
            hears = voice.present(slot)
            speaks = not self._muted(session)
            return Place(voice.mixer, slot if hears else None, slot if speaks else None)
        game_id = session.game_id
        listener: Listener | None = None
        if game_id is not None:
            listener = SPECTATORS if session.spectating else session.seat
        room = self._room_for(game_id) if listener is not None and game_id is not None else None
        if room is not line.room:
            self._attach(line, room)
        relay = self.voice_rooms.relay
        if relay is not None:
            if room is None and listener is not None and game_id is not None:
                # The game runs on another process: its room is reached through the relay.
                return Place(relayed=relay.link(line, game_id, listener))
            relay.unlink(line)
        if room is None or listener is None:
            return Place()
        seat = session.seat
        speaks = seat is not None and not session.spectating and not self._muted(session)
        return Place(room.mixer, listener, seat if speaks else None)

    def _relayed(self, line: Line) -> RelayedLine | None:
        relay = self.voice_rooms.relay
        return relay.lines.get(line) if relay is not None else None

    def _room_for(self, game_id: str) -> Room | None:
        return self.voice_rooms.room_for(game_id)

    def _attach(self, line: Line, room: Room | None) -> None:
        line.room = room
        self.voice_rooms.attach(line, room)


@dataclass(frozen=True, slots=True)
class Place:
    """A line's room audio: row ``listener`` of ``mixer`` (None: it hears no room), its voice
    into that mixer as house ``source`` (None: nobody hears it); or, for a game run on
    another process, ``relayed``."""

    mixer: GameMixer | None = None
    listener: Listener | None = None
    source: int | None = None
    relayed: RelayedLine | _Pulled | None = None


@dataclass(frozen=True, slots=True)
class _Pulled:
    """A conference room owned by another process: the line's mix is its voice's pull (which
    drives the relay), as the in-process path pulls it."""

    voice: ConferenceVoice
    slot: int
    line: Line

    def pull(self) -> Int16Array | None:
        return self.voice.pull(self.slot, puller=self.line)


class MixedElsewhere:
    """A line whose prompts and room are played and mixed in its media process: at every
    tick of that process this sends what changed — the line's place (room, row, house) and
    its prompt queue's playlist — and the prompt queue hears back what was played. The rules
    (the routing table, the queue's priorities and barge-in) stay here."""

    def __init__(self, service: PhoneService, line: Line, prompts: PromptQueue | None) -> None:
        self._service = service
        self._line = line
        self._prompts = prompts
        self._tags = itertools.count(1)
        self._sent: list[Utterance] = []
        self._tag_of: dict[Utterance, int] = {}
        self._item_of: dict[int, Utterance] = {}
        self._begun: set[Utterance] = set()
        self._endpoint: RemoteEndpoint | None = None
        self._poked = False
        if prompts is not None:
            prompts.changed = self._poke

    def _poke(self) -> None:
        """The queue changed (a key's answer queued, a barge-in): tell the media process now,
        once per turn of the event loop, rather than at its next tick."""
        if not self._poked and self._endpoint is not None:
            self._poked = True
            asyncio.get_running_loop().call_soon(self._sync_now)

    def _sync_now(self) -> None:
        self._poked = False
        endpoint, prompts = self._endpoint, self._prompts
        if endpoint is None or prompts is None or endpoint.closed or endpoint.driver is not self:
            return
        try:
            self._sync_prompts(prompts, endpoint)
        except Exception:
            log.exception("phone_prompt_sync_failed", call=self._line.call.call_id)

    def sync(self, endpoint: RemoteEndpoint) -> Int16Array | None:
        line, service = self._line, self._service
        self._endpoint = endpoint
        prompt: Int16Array | None = None
        try:
            if self._prompts is not None:
                self._sync_prompts(self._prompts, endpoint)
            else:  # a session without a prompt queue: its frames are made here, sent ahead
                prompt = line.session.next_frame()
                if prompt is not None:
                    line.last_prompt = service.clock()
                    prompt = _fit(prompt) if prompt.shape != (FRAME_SAMPLES,) else prompt
            place = service._place(line, line.session)
        except Exception:
            line.frame_errors += 1
            if line.frame_errors in (1, 10, 100) or line.frame_errors % 1000 == 0:
                log.exception("phone_frame_failed", call=line.call.call_id)
            return None
        if place.relayed is not None:
            endpoint.route(None, None, None, fed=True)
            return overlay(prompt, place.relayed.pull())
        mixer, listener = place.mixer, place.listener
        row: int | None = None
        if mixer is not None and listener is not None:
            row = mixer.seats if listener == SPECTATORS else int(listener) - 1
        endpoint.route(mixer, row, place.source, fed=False)
        return prompt

    def _sync_prompts(self, prompts: PromptQueue, endpoint: RemoteEndpoint) -> None:
        upcoming = prompts.upcoming()
        busy = prompts.busy
        if busy:
            self._line.last_prompt = self._service.clock()
        prompting = getattr(self._line.session, "prompting", None)
        if callable(prompting):
            prompting(busy)
        # A prompt that had begun and was cut by a more urgent one (its `played` set back to
        # 0 by the queue) is heard again from its start: a new tag, so the player does not go
        # on where it was.
        restarted = [u for u in upcoming if u in self._begun and u.played == 0]
        if upcoming == self._sent and not restarted:
            return
        items: list[tuple[int, Int16Array, int | None]] = []
        for item in upcoming:
            tag = self._tag_of.get(item)
            offset: int | None = None
            if tag is None or item in restarted:
                self._item_of.pop(self._tag_of.pop(item, -1), None)
                self._begun.discard(item)
                tag = next(self._tags)
                self._tag_of[item], self._item_of[tag] = tag, item
                offset = item.played
            assert item.audio is not None
            items.append((tag, item.audio, offset))
        for gone in [u for u in self._sent if u not in upcoming]:
            self._item_of.pop(self._tag_of.pop(gone, -1), None)
            self._begun.discard(gone)
        self._sent = upcoming
        self._begin_head()
        endpoint.play(items)

    def _begin_head(self) -> None:
        """The head of what was sent is playing: `played` > 0 tells the queue it has begun
        (a preemption then restarts it rather than dropping it unheard)."""
        if self._sent:
            head = self._sent[0]
            head.played = max(head.played, 1)
            self._begun.add(head)

    def played(self, tags: Sequence[int]) -> None:
        for tag in tags:
            item = self._item_of.pop(tag, None)
            if item is None:
                continue
            self._tag_of.pop(item, None)
            self._begun.discard(item)
            if self._prompts is not None:
                self._prompts.finished(item)
            if item in self._sent:
                self._sent.remove(item)
        self._begin_head()


def _conference_seat(session: LineSession) -> ConferenceSeat | None:
    """A session in a conference room names its seat there (``PhoneSession.conference_seat``);
    sessions without rooms (the tests' switchboard) have none."""
    seat = getattr(session, "conference_seat", None)
    return seat if isinstance(seat, ConferenceSeat) else None


def _fit(frame: Int16Array) -> Int16Array:
    flat = np.ravel(frame)[:FRAME_SAMPLES].astype(np.int16)
    return np.pad(flat, (0, FRAME_SAMPLES - len(flat)))


def default_session_factory(
    hub: Hub,
    identity: IdentitySettings | None = None,
    voice: Voice | None = None,
    enforcer: Enforcer | None = None,
    phone: PhoneSettings | None = None,
) -> SessionFactory:
    """Sessions from ``vollmond.phone.session`` with the default (espeak-ng) voice and the
    operator's ``[identity]`` and ``[phone]`` settings. Every session shares one
    :class:`~vollmond.phone.session.prompts.Renders`: words said to many callers (a public
    event) are rendered once and the same audio is queued for each."""
    from vollmond.phone.session import PhoneSession  # noqa: PLC0415 - loaded only when serving
    from vollmond.phone.session.prompts import Renders  # noqa: PLC0415
    from vollmond.phone.session.voice import default_voice  # noqa: PLC0415

    voice = voice or default_voice()
    settings = identity or IdentitySettings()
    renders = Renders(voice)

    def make(caller: CallerId) -> LineSession:
        return PhoneSession(
            hub,
            caller,
            voice,
            identity=settings,
            enforcer=enforcer,
            phone=phone,
            renders=renders,
        )

    return make


async def start_phone(
    hub: Hub,
    settings: Settings,
    *,
    session_factory: SessionFactory | None = None,
    config: UasConfig | None = None,
    enforcer: Enforcer | None = None,
    rooms: VoiceRooms | None = None,
) -> PhoneService | None:
    """Start the telephone channel on ``settings.host:settings.sip_port`` (0: no telephone),
    with the operator's trust and limits (``settings.sip``) unless a test passes ``config``.

    A SIP port that cannot be bound is logged as an error and leaves the web service running.
    """
    if not settings.sip_port and config is None:
        return None
    if session_factory is None:
        from vollmond.phone.session.voice import default_voice  # noqa: PLC0415

        voice = default_voice(settings.data_dir)
        session_factory = default_session_factory(
            hub, settings.identity, voice, enforcer, settings.phone
        )
        # Every fixed prompt rendered at start (into <data-dir>/prompts), so the first caller
        # hears cache hits; in the background, so the service answers meanwhile.
        task = asyncio.create_task(_prewarm(voice), name="phone:prewarm")
        _PREWARMS.add(task)
        task.add_done_callback(_PREWARMS.discard)
    service = PhoneService(hub, session_factory, enforcer=enforcer, rooms=rooms)
    try:
        await service.start(
            config
            or UasConfig(
                host=settings.host,
                port=settings.sip_port,
                settings=settings.sip,
                media_processes=settings.phone.media_processes,
                media_priority=settings.phone.media_priority,
            )
        )
    except OSError as exc:
        log.error("phone_unavailable", port=settings.sip_port, error=str(exc))
        return None
    return service


_PREWARMS: set[asyncio.Task[None]] = set()


async def prompts_ready() -> None:
    """Wait until the fixed prompts rendered at start are in the cache (tests, readiness)."""
    await asyncio.gather(*_PREWARMS)


async def _prewarm(voice: Voice) -> None:
    from vollmond.phone.session.prompts import prewarm  # noqa: PLC0415

    try:
        count = await prewarm(voice, "de")
        log.info("phone_prompts_prewarmed", count=count)
    except Exception:  # a missing voice is reported per call; the service keeps running
        log.exception("phone_prewarm_failed")


async def stop_phone(service: PhoneService | None) -> None:
    """Stop the telephone channel if it runs (for the app's lifespan)."""
    if service is None:
        return
    try:
        await service.close()
    except Exception:
        log.exception("phone_stop_failed")
