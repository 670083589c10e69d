"""Recording a voice message by phone (X3): after the tone, up to the operators' limit
(`[mailbox] voice_max_s`, 60 s), ``#`` ends; then ``1`` listen, ``2`` record again, ``3`` send,
``0`` cancel.

The recording starts when the tone has been played (not when it was queued), so the caller's
first words are not lost under the prompt, and ends at ``#`` or at the limit, whichever comes
first; the caller's frames come from the telephone service (:mod:`.capture`).
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt

from vollmond.phone import capture
from vollmond.phone.session.keys import Hash, Single, Token
from vollmond.phone.session.prompts import Priority, tones

if TYPE_CHECKING:
    from vollmond.phone.session.session import PhoneSession

TONE: Final = "record_tone"
SAMPLE_RATE: Final = 8000
POLL_S: Final = 0.02


class Step(enum.Enum):
    WAITING = "waiting"  # the prompt and the tone still play
    RECORDING = "recording"
    REVIEW = "review"
    DONE = "done"


Send = Callable[[bytes], Awaitable[bool]]
"""Sends the recording; True when it went out (the recorder then says nothing more)."""


class VoiceRecorder:
    """One message being recorded; `send` delivers it, `done` returns to where the caller was."""

    def __init__(
        self, session: PhoneSession, max_s: int, send: Send, done: Callable[[], None]
    ) -> None:
        self.s = session
        self.max_samples = max_s * SAMPLE_RATE
        self.max_s = max_s
        self.send = send
        self.done = done
        self.step = Step.DONE
        self._chunks: list[npt.NDArray[np.int16]] = []
        self._samples = 0
        self._waiter: asyncio.Task[None] | None = None

    @property
    def recorded_s(self) -> float:
        return self._samples / SAMPLE_RATE

    @property
    def pcm(self) -> bytes:
        if not self._chunks:
            return b""
        return np.concatenate(self._chunks)[: self.max_samples].astype("<i2").tobytes()

    def begin(self) -> None:
        """ "Sprich nach dem Ton", the tone, then record."""
        self._chunks, self._samples = [], 0
        self.step = Step.WAITING
        self.s.say(self.s.t("phone.mail.record", max=self.max_s), remember=False)
        self.s.tone(TONE, tones.beep(400), priority=Priority.MENU)
        self._waiter = self.s.spawn(self._after_tone(), name="mail:record")

    async def _after_tone(self) -> None:
        while TONE in self.s.prompts.queued_tones:
            await asyncio.sleep(POLL_S)
        if self.step is Step.WAITING:
            self.step = Step.RECORDING
            capture.capture(self.s, self._frame)

    def _frame(self, samples: npt.NDArray[np.int16]) -> None:
        if self.step is not Step.RECORDING:
            return
        self._chunks.append(np.array(samples, dtype=np.int16, copy=True))
        self._samples += len(samples)
        if self._samples >= self.max_samples:
            self.s.spawn(self.s.run_exclusive(self._stop), name="mail:record-full")

    async def _stop(self) -> None:
        if self.step is not Step.RECORDING:
            return
        capture.release(self.s)
        self.step = Step.REVIEW
        self.s.tone("beep", tones.beep())
        self.s.say(self.s.t("phone.mail.review", n=round(self.recorded_s)))

    def cancel(self) -> None:
        """The call ended or the caller left: nothing is kept."""
        capture.release(self.s)
        if self._waiter is not None and not self._waiter.done():
            self._waiter.cancel()
        self.step = Step.DONE

    @property
    def hash_immediate(self) -> bool:
        return self.step in (Step.WAITING, Step.RECORDING)

    @property
    def immediate(self) -> frozenset[str]:
        return frozenset("1230") if self.step is Step.REVIEW else frozenset()

    def reminder(self) -> list[str] | None:
        if self.step is Step.REVIEW:
            return [self.s.t("phone.mail.review_keys")]
        return None  # recording: silence is what is wanted

    def help(self) -> list[str]:
        if self.step is Step.REVIEW:
            return [self.s.t("phone.mail.review_long")]
        return [self.s.t("phone.mail.record_long", max=self.max_s)]

    async def handle(self, token: Token) -> None:
        if self.step in (Step.WAITING, Step.RECORDING):
            if isinstance(token, Hash):
                if self.step is Step.WAITING:  # '#' before the tone: nothing to keep
                    self.cancel()
                    self.step = Step.REVIEW
                    self.s.say(self.s.t("phone.mail.review", n=0))
                    return
                await self._stop()
            return  # any other key while recording is ignored
        if self.step is not Step.REVIEW:
            return
        key = token.key if isinstance(token, Single) else None
        if key == "1":
            if self._samples:
                audio = np.frombuffer(self.pcm, dtype="<i2").astype(np.int16)
                self.s.tone("mail_message", audio)
            self.s.say(self.s.t("phone.mail.review_keys"))
        elif key == "2":
            self.begin()
        elif key == "3":
            if not self._samples:
                self.s.refuse(self.s.t("phone.mail.nothing_recorded"))
                return
            if await self.send(self.pcm):
                self.step = Step.DONE
                self.done()
        elif key == "0":
            self.step = Step.DONE
            self.s.say(self.s.t("phone.mail.discarded"), remember=False)
            self.done()
        else:
            self.s.refuse(self.s.t("phone.mail.review_keys"))
