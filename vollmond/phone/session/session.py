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
import logging
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from vollmond.i18n import text
from vollmond.phone.caller import CallerId
from vollmond.phone.session.keys import BadKeys, Info, KeyParser, Token
from vollmond.phone.session.prompts import PromptQueue, Spoken, Voice, tones
from vollmond.phone.session.prompts.voice import Audio
from vollmond.service.enforce import Enforcer, Person
from vollmond.service.hub import Hub
from vollmond.settings import IdentitySettings
from vollmond.worlds import World, get_world, world_ids

log = logging.getLogger(__name__)

Clock = Callable[[], float]


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
    ) -> None:
        from vollmond.phone.session.menu import Announcer  # noqa: PLC0415 (cyclic by design)

        self.hub = hub
        self.caller = caller
        self.identity = identity or IdentitySettings()
        self.lang = lang
        self.clock = clock
        self.lobby_poll_s = lobby_poll_s
        self.on_operator = on_operator
        self.enforcer = enforcer  # moderation (O1, O5); None in tests without the service
        self.prompts = PromptQueue(voice, lang)
        self.keys = KeyParser(timeout_s=digit_timeout_s, clock=clock)
        self.account_id: int | None = None
        self.identity_id: int | None = None
        self.name = ""
        self.operator_calls: list[OperatorCall] = []
        self.hangup_requested = asyncio.Event()
        self.announcer = Announcer(self)
        self.mode: Mode = self.announcer
        self._tokens: asyncio.Queue[Token] = asyncio.Queue()
        self._worker: asyncio.Task[None] | None = None
        self._expiry: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._last_block: list[str] = []
        self._closed = False
        self._lock = asyncio.Lock()

    # -- the contract ----------------------------------------------------------------------
    @property
    def game_id(self) -> str | None:
        from vollmond.phone.session.game import GameLine  # noqa: PLC0415

        if isinstance(self.mode, GameLine):
            return self.mode.game_id
        return self.announcer.lobby_game

    @property
    def person(self) -> Person:
        """The signed-in caller for moderation: phone identity and linked account."""
        return Person(self.account_id, self.identity_id)

    @property
    def seat(self) -> int | None:
        from vollmond.phone.session.game import GameLine  # noqa: PLC0415

        return self.mode.seat if isinstance(self.mode, GameLine) else None

    @property
    def spectating(self) -> bool:
        from vollmond.phone.session.game import GameLine  # noqa: PLC0415

        return isinstance(self.mode, GameLine) and self.mode.seat is None

    async def start(self) -> None:
        """Greet, identify the caller (PIN, pre-filled by a verified number; or a trusted
        proxy's asserted number), then open the announcer."""
        self._worker = asyncio.create_task(self._work(), name=f"phone:{self.caller.number}")
        self.say(self.t("phone.greeting"), remember=False)
        await self.announcer.identify()

    def on_key(self, key: str) -> None:
        if self._closed:
            return
        self.prompts.interrupt()
        self.keys.immediate = self.mode.immediate()
        self.keys.hash_immediate = self.mode.hash_immediate()
        for token in self.keys.feed(key):
            self._tokens.put_nowait(token)
        self._arm_expiry()

    def next_frame(self) -> npt.NDArray[np.int16] | None:
        return self.prompts.next_frame()

    async def close(self) -> None:
        """The caller hung up: stop listening; a seat stays taken (the service's grace
        period decides what happens to an absent player)."""
        if self._closed:
            return
        self._closed = True
        if self._expiry is not None:
            self._expiry.cancel()
        await self.mode_exit()
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

    def say(self, *lines: str, interruptible: bool = True, remember: bool = True) -> None:
        for line in lines:
            self.prompts.say(line, interruptible=interruptible)
        if remember and lines:
            self._last_block = list(lines)

    def tone(self, name: str, audio: Audio, *, interruptible: bool = True) -> None:
        self.prompts.play(name, audio, interruptible=interruptible)

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

    async def mode_exit(self) -> None:
        from vollmond.phone.session.game import GameLine  # noqa: PLC0415

        if isinstance(self.mode, GameLine):
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
        self.say(self.t("phone.goodbye"), interruptible=False, remember=False)
        self.hangup_requested.set()

    # -- internals -------------------------------------------------------------------------
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
            self.tone("beep", tones.beep(), interruptible=True)
            self.say(self.t(f"phone.keyerror.{token.reason}"), *self.mode.help(), remember=False)
            return
        if isinstance(token, Info) and token.digit == "1":
            self.say(*self.mode.help())
            return
        if isinstance(token, Info) and token.digit == "2":
            if self._last_block:
                self.say(*self._last_block)
            else:
                self.say(self.t("phone.repeat_nothing"), remember=False)
            return
        await self.mode.handle(token)
