"""One telephone call's session: keys in, prompts out, the game in between — no SIP here.

The SIP side (vollmond/phone/service.py) makes one :class:`PhoneSession` per answered call,
feeds it the caller's keys and pulls 20 ms frames of prompt audio from it. The session walks
the caller through identification and the announcer menu (:mod:`.menu`) into a game
(:mod:`.game`), where it follows the game's actor as a subscriber for its viewer only.

Keys are cut into tokens by :class:`~.keys.KeyParser`; tokens are handled one at a time by a
worker task, so a hub call never races the next key. A key press cuts short the interruptible
prompts (barge-in).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol, cast

import numpy as np
import numpy.typing as npt

from vollmond.i18n import text
from vollmond.phone.caller import CallerId
from vollmond.phone.session.community import closed as community_closed
from vollmond.phone.session.keys import BadKeys, Info, KeyParser, Star, Token
from vollmond.phone.session.prefs import set_expert
from vollmond.phone.session.prompts import (
    Line,
    Live,
    Priority,
    PromptQueue,
    Renders,
    Spoken,
    Voice,
    tones,
)
from vollmond.phone.session.prompts.prewarm import sentence
from vollmond.phone.session.prompts.voice import Audio
from vollmond.service.enforce import Enforcer, Person
from vollmond.service.hub import Hub, Owner
from vollmond.settings import IdentitySettings, PhoneSettings
from vollmond.voice.conference import ConferenceSeat
from vollmond.worlds import World, get_world, world_ids

if TYPE_CHECKING:
    from vollmond.phone.session.conference import RoomLine
    from vollmond.phone.session.game import GameLine
    from vollmond.phone.session.rules_line import RulesLine

log = logging.getLogger(__name__)


@functools.cache
def _game_lines() -> tuple[type, ...]:
    """The modes that are a line in a game (imported on first use: they import this module).
    Asked several times per call every 20 ms, so the import runs once, not per frame."""
    from vollmond.phone.session.game import GameLine  # noqa: PLC0415
    from vollmond.phone.session.rules_line import RulesLine  # noqa: PLC0415

    return (GameLine, RulesLine)


@functools.cache
def _room_line() -> type:
    """The mode of a caller in a conference room (imported on first use, as above)."""
    from vollmond.phone.session.conference import RoomLine  # noqa: PLC0415

    return RoomLine


Clock = Callable[[], float]

EXPERT_TOGGLE: Final = "7"
"""``*7#`` switches expert mode anywhere (a day action on house 7 is ``**7#``)."""


@dataclass(frozen=True, slots=True)
class OperatorCall:
    """O1 from the keypad: ``*9#`` or ``*9 R NN #`` (reason 1-4, player NN)."""

    game_id: str | None
    seat: int | None
    reason: int | None
    player: int | None
    at: float


class Mode(Protocol):
    """Where the caller is: identification and menus, or a game."""

    def immediate(self) -> frozenset[str]: ...

    def hash_immediate(self) -> bool: ...

    def help(self) -> list[str]: ...

    def reminder(self) -> Sequence[Line] | None:
        """What to say after a silence (None: the caller is only listening, say nothing)."""
        ...

    async def handle(self, token: Token) -> None: ...


class PhoneSession:
    def __init__(
        self,
        hub: Hub,
        caller: CallerId,
        voice: Voice,
        *,
        identity: IdentitySettings | None = None,
        lang: str = "de",
        clock: Clock = time.monotonic,
        digit_timeout_s: float = 3.0,
        lobby_poll_s: float = 0.05,
        on_operator: Callable[[OperatorCall], None] | None = None,
        enforcer: Enforcer | None = None,
        phone: PhoneSettings | None = None,
        flood_gap_s: float = 0.5,
        renders: Renders | None = None,
    ) -> None:
        """`renders`: prompt audio shared with the node's other calls (the service passes one
        for all of them, so a public event is rendered once for the whole table)."""
        from vollmond.phone.session.menu import Announcer  # noqa: PLC0415 (cyclic by design)

        self.hub = hub
        self.caller = caller
        self.identity = identity or IdentitySettings()
        self.settings = phone or PhoneSettings()  # the operator's [phone] table
        self.lang = lang
        self.clock = clock
        self.lobby_poll_s = lobby_poll_s
        self.on_operator = on_operator
        self.enforcer = enforcer  # moderation (O1, O5); None in tests without the service
        self.prompts = PromptQueue(voice, lang, renders=renders)
        self.keys = KeyParser(timeout_s=digit_timeout_s, flood_gap_s=flood_gap_s, clock=clock)
        self.account_id: int | None = None
        self.identity_id: int | None = None
        self.name = ""
        self.expert = False  # *7#: only the essentials (docs/phone-keys.md)
        self.operator_calls: list[OperatorCall] = []
        self.on_duty = False  # a moderator following the alarm feed (.duty)
        self.hangup_requested = asyncio.Event()
        self.announcer = Announcer(self)
        self.mode: Mode = self.announcer
        self._tokens: asyncio.Queue[Token] = asyncio.Queue()
        self._worker: asyncio.Task[None] | None = None
        self._expiry: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._last_block: list[Line] = []
        self._closed = False
        self._lock = asyncio.Lock()
        # Re-prompt on silence: `silence_s` after the line went quiet with no key, a short
        # reminder; after `reminders` of them in the announcer, goodbye.
        self.silence_s = self.settings.silence_s
        self.reminders = self.settings.reminders
        self.reminded = 0
        self._quiet = False
        self._silence: asyncio.TimerHandle | None = None

    # -- the contract ----------------------------------------------------------------------
    @property
    def game_id(self) -> str | None:
        line = self.game_line
        if line is not None:
            return line.game_id
        return self.announcer.lobby_game

    @property
    def person(self) -> Person:
        """The signed-in caller for moderation: phone identity and linked account."""
        return Person(self.account_id, self.identity_id)

    @property
    def ledger_owner(self) -> Owner | None:
        """Whose karma, premium and credit the caller has: the linked account, else the phone
        identity they signed in with (issue 10); a guest has none."""
        if self.account_id is not None:
            return Owner.account(self.account_id)
        if self.identity_id is not None:
            return Owner.phone(self.identity_id)
        return None

    @property
    def seat(self) -> int | None:
        line = self.game_line
        return line.seat if line is not None else None

    @property
    def spectating(self) -> bool:
        line = self.game_line
        return line is not None and line.seat is None

    @property
    def game_line(self) -> GameLine | RulesLine | None:
        """The caller's line in a game (the standard rules' or any other rule set's)."""
        mode = self.mode
        return cast("GameLine | RulesLine", mode) if isinstance(mode, _game_lines()) else None

    async def start(self) -> None:
        """Greet, identify the caller (PIN, pre-filled by a verified number; or a trusted
        proxy's asserted number), then open the announcer."""
        self._worker = asyncio.create_task(self._work(), name=f"phone:{self.caller.number}")
        self.say(self.t("phone.greeting"), remember=False)
        await self.announcer.identify()

    def on_key(self, key: str) -> None:
        if self._closed:
            return
        self.reminded = 0
        self._arm_silence()
        self.prompts.interrupt()
        self.keys.immediate = self.mode.immediate()
        self.keys.hash_immediate = self.mode.hash_immediate()
        for token in self.keys.feed(key):
            self._tokens.put_nowait(token)
        self._arm_expiry()

    def next_frame(self) -> npt.NDArray[np.int16] | None:
        frame = self.prompts.next_frame()
        self.prompting(frame is not None)
        return frame

    def prompting(self, busy: bool) -> None:
        """Whether a prompt plays at this tick (here, or in a media process that plays the
        queue's prompts): the caller's silence is counted from the end of the last prompt."""
        if not busy and not self._quiet and not self._closed:
            self._quiet = True
            self._arm_silence()
        elif busy:
            self._quiet = False
            self._cancel_silence()

    async def close(self) -> None:
        """The caller hung up: stop listening; a seat stays taken (the service's grace
        period decides what happens to an absent player)."""
        if self._closed:
            return
        self._closed = True
        self._cancel_silence()
        if self._expiry is not None:
            self._expiry.cancel()
        await self.mode_exit()
        community_closed(self)  # offline for friends; an unsent voice message is dropped
        tasks = [t for t in (self._worker, *self._tasks) if t is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self.prompts.clear()

    # -- for tests and the service ---------------------------------------------------------
    async def idle(self) -> None:
        """Wait until every key given so far has been handled."""
        await self._tokens.join()

    @property
    def transcript(self) -> list[Spoken]:
        return self.prompts.transcript

    def spoken(self) -> list[str]:
        return [s.text for s in self.prompts.transcript if s.text is not None]

    # -- helpers for the modes -------------------------------------------------------------
    def t(self, key: str, world: World | None = None, **params: Any) -> str:
        return text(key, self.lang, world or get_world(world_ids()[0]), **params)

    def say(
        self,
        *lines: Line,
        priority: Priority = Priority.MENU,
        remember: bool = True,
        tag: str | None = None,
    ) -> None:
        """Queue `lines`; a live line (the time left) is said as it holds when it plays."""
        for line in lines:
            if isinstance(line, Live):
                self.prompts.say(sentence(line.text), priority, tag, _sentences(line.refresh))
            else:
                self.prompts.say(sentence(line), priority, tag)
        if remember and lines:
            self._last_block = list(lines)

    def tone(self, name: str, audio: Audio, *, priority: Priority = Priority.MENU) -> None:
        self.prompts.play(name, audio, priority)

    def refuse(self, reason: str) -> None:
        """A key that does not fit: a beep, one line saying why, and where help is — never
        the whole menu again (a caller who typed wrong knows the menu; ``#1`` brings it)."""
        self.tone("beep", tones.beep())
        self.say(reason, self.t("phone.help_hint"), remember=False)

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        task = asyncio.create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def run_exclusive(self, step: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Run `step` between two keys (for work started outside the key worker)."""
        async with self._lock:
            await step()

    def set_mode(self, mode: Mode) -> None:
        self.mode = mode
        self.keys.reset()

    @property
    def conference_seat(self) -> ConferenceSeat | None:
        """The caller's place in a conference room's voice (X2), or None outside rooms."""
        mode = self.mode
        return cast("RoomLine", mode).seat if isinstance(mode, _room_line()) else None

    async def mode_exit(self) -> None:
        from vollmond.phone.session.conference import RoomLine  # noqa: PLC0415

        line = self.game_line
        if line is not None:
            line.detach()
        if isinstance(self.mode, RoomLine):  # hanging up in a room leaves it
            self.mode.detach()
        self.announcer.stop_waiting()

    def report_operator(self, call: OperatorCall) -> None:
        self.operator_calls.append(call)
        log.warning(
            "operator_called game=%s seat=%s reason=%s player=%s",
            call.game_id,
            call.seat,
            call.reason,
            call.player,
        )
        if self.on_operator is not None:
            self.on_operator(call)

    def hang_up(self) -> None:
        """The caller asked to end the call (``#9`` in the announcer)."""
        self.say(self.t("phone.goodbye"), priority=Priority.URGENT, remember=False)
        self.hangup_requested.set()

    # -- internals -------------------------------------------------------------------------
    def _arm_silence(self) -> None:
        """Count the silence from now (a key, or the last prompt just ended)."""
        self._cancel_silence()
        if self.silence_s > 0 and not self._closed:
            loop = asyncio.get_running_loop()
            self._silence = loop.call_later(self.silence_s, self._silent)

    def _cancel_silence(self) -> None:
        if self._silence is not None:
            self._silence.cancel()
            self._silence = None

    def _silent(self) -> None:
        self._silence = None
        if self._closed or self.hangup_requested.is_set() or self.prompts.busy or self.keys.buffer:
            return
        lines = self.mode.reminder()
        if lines is None:
            return
        if self._menu_mode() and self.reminded >= self.reminders:
            # Urgent like the goodbye behind it: a lower class would be cut by it, unheard.
            self.say(self.t("phone.reminder_end"), priority=Priority.URGENT, remember=False)
            self.hang_up()
            return
        self.reminded += 1
        keys = " ".join(sentence(_words(line)) for line in lines)
        self.say(self.t("phone.reminder", keys=keys), remember=False)
        self._quiet = False  # armed again once the reminder has been heard

    def _menu_mode(self) -> bool:
        """Whether the caller is in a menu, where silence ends the call after the reminders:
        the announcer, or its list of conference rooms (in a room people just listen)."""
        from vollmond.phone.session.conference import RoomsMenu  # noqa: PLC0415

        return self.mode is self.announcer or isinstance(self.mode, RoomsMenu)

    def _arm_expiry(self) -> None:
        if self._expiry is not None:
            self._expiry.cancel()
            self._expiry = None
        deadline = self.keys.deadline
        if deadline is None:
            return
        delay = max(0.0, deadline - self.clock()) + 0.01
        self._expiry = asyncio.get_running_loop().call_later(delay, self._expire)

    def _expire(self) -> None:
        self._expiry = None
        for token in self.keys.expire():
            self._tokens.put_nowait(token)
        self._arm_expiry()

    async def _work(self) -> None:
        while True:
            token = await self._tokens.get()
            try:
                async with self._lock:
                    await self._dispatch(token)
            except asyncio.CancelledError:
                raise
            except Exception:  # one failing command must not leave the caller in silence
                log.exception("phone_key_failed caller=%s token=%s", self.caller.number, token)
                self.say(self.t("phone.lobby.default"))
            finally:
                self._tokens.task_done()

    async def _dispatch(self, token: Token) -> None:
        if isinstance(token, BadKeys):
            self.refuse(self.t(f"phone.keyerror.{token.reason}"))
            return
        if isinstance(token, Star) and token.body == EXPERT_TOGGLE and token.end == "#":
            self.expert = not self.expert
            await set_expert(self.hub, self.identity_id, self.expert)
            self.say(self.t("phone.expert_on" if self.expert else "phone.expert_off"))
            return
        if isinstance(token, Info) and token.digit == "1":
            self.say(*self.mode.help(), priority=Priority.HELP)
            return
        if isinstance(token, Info) and token.digit == "2":
            if self._last_block:
                self.say(*self._last_block, priority=Priority.HELP)
            else:
                self.say(self.t("phone.repeat_nothing"), remember=False)
            return
        await self.mode.handle(token)


def _words(line: Line) -> str:
    return line.text if isinstance(line, Live) else line


def _sentences(refresh: Callable[[], str | None]) -> Callable[[], str | None]:
    """A live line's words as a sentence, like every prompt (:func:`sentence`)."""

    def words() -> str | None:
        fresh = refresh()
        return None if fresh is None else sentence(fresh)

    return words
