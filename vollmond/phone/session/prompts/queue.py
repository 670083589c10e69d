"""The prompt queue: utterances and tones played one after another, 20 ms at a time.

Text is rendered off the event loop (a voice may run a program) as soon as it is queued, so
by the time an utterance reaches the head of the queue its audio is usually ready. A key press
may cut prompts short ("barge-in"): menus and help are interruptible, game news is not — a
caller who types while the morning report plays must still hear who died.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from vollmond.phone.session.prompts.voice import FRAME_SAMPLES, Audio, Voice

log = logging.getLogger(__name__)


@dataclass(eq=False)
class Utterance:
    """One queued prompt: speech (`text`) or a tone (`audio` known from the start)."""

    text: str | None
    interruptible: bool
    audio: Audio | None = None
    tone: str | None = None
    pending: asyncio.Future[Audio] | None = field(default=None, repr=False)
    played: int = 0  # samples already sent
    urgent: bool = False  # goes before everything queued that has not started (see _enqueue)

    def ready(self) -> bool:
        if self.audio is None and self.pending is not None and self.pending.done():
            if self.pending.cancelled() or self.pending.exception() is not None:
                self.audio = np.zeros(0, dtype=np.int16)
            else:
                self.audio = self.pending.result()
        return self.audio is not None


@dataclass(frozen=True, slots=True)
class Spoken:
    """The record of one queued prompt (what a caller was told), for logs and tests."""

    text: str | None
    tone: str | None
    interruptible: bool


TRANSCRIPT_LIMIT = 5000
"""The transcript keeps the most recent prompts of a call (older ones are dropped in bulk)."""


class PromptQueue:
    def __init__(self, voice: Voice, lang: str) -> None:
        self.voice = voice
        self.lang = lang
        self._queue: deque[Utterance] = deque()
        self.transcript: list[Spoken] = []

    # -- queueing --------------------------------------------------------------------------
    def say(self, text: str, *, interruptible: bool = True, urgent: bool = False) -> None:
        text = text.strip()
        if not text:
            return
        item = Utterance(text, interruptible, urgent=urgent)
        item.pending = asyncio.ensure_future(asyncio.to_thread(self._render, text))
        self._enqueue(item)
        self._record(Spoken(text, None, interruptible))

    def play(
        self, name: str, audio: Audio, *, interruptible: bool = True, urgent: bool = False
    ) -> None:
        """A tone (ringing, busy, beep) by name; the name goes into the transcript."""
        self._enqueue(Utterance(None, interruptible, audio=audio, tone=name, urgent=urgent))
        self._record(Spoken(None, name, interruptible))

    def _enqueue(self, item: Utterance) -> None:
        """Append; an urgent prompt (the recording warning, O2) goes right after the prompt
        playing now and the urgent ones before it, ahead of any backlog of game news."""
        if not item.urgent:
            self._queue.append(item)
            return
        index = 1 if self._queue and self._queue[0].played else 0
        while index < len(self._queue) and self._queue[index].urgent:
            index += 1
        self._queue.insert(index, item)

    def _record(self, spoken: Spoken) -> None:
        self.transcript.append(spoken)
        if len(self.transcript) > TRANSCRIPT_LIMIT:
            del self.transcript[: TRANSCRIPT_LIMIT // 5]

    def _render(self, text: str) -> Audio:
        try:
            return np.asarray(self.voice.render(text, self.lang), dtype=np.int16)
        except Exception:  # a broken voice must not take the caller's line down
            log.exception("prompt_render_failed")
            raise

    def interrupt(self) -> int:
        """Barge-in: drop every interruptible prompt (also the one playing). Returns how many."""
        kept = deque(u for u in self._queue if not u.interruptible)
        dropped = len(self._queue) - len(kept)
        for item in self._queue:
            if item.interruptible and item.pending is not None and not item.pending.done():
                item.pending.cancel()
        self._queue = kept
        return dropped

    def stop_tone(self, *names: str) -> int:
        """Stop tones by name (the ringing once a call is answered), also mid-play."""
        kept = deque(u for u in self._queue if u.tone is None or u.tone not in names)
        stopped = len(self._queue) - len(kept)
        self._queue = kept
        return stopped

    def clear(self) -> None:
        for item in self._queue:
            if item.pending is not None and not item.pending.done():
                item.pending.cancel()
        self._queue.clear()

    @property
    def queued_tones(self) -> list[str]:
        """Names of the tones still to play (or playing), in order."""
        return [u.tone for u in self._queue if u.tone is not None]

    @property
    def busy(self) -> bool:
        return bool(self._queue)

    # -- playing ---------------------------------------------------------------------------
    def next_frame(self) -> Audio | None:
        """The next 160 samples; silence while the head is still being rendered; None when
        nothing is queued."""
        out = np.zeros(FRAME_SAMPLES, dtype=np.int16)
        filled = 0
        while filled < FRAME_SAMPLES and self._queue:
            head = self._queue[0]
            if not head.ready():
                break
            assert head.audio is not None
            chunk = head.audio[head.played : head.played + FRAME_SAMPLES - filled]
            out[filled : filled + len(chunk)] = chunk
            filled += len(chunk)
            head.played += len(chunk)
            if head.played >= len(head.audio):
                self._queue.popleft()
        if filled == 0 and not self._queue:
            return None
        return out

    async def rendered(self) -> None:
        """Wait until every queued utterance has its audio (tests, pre-warming)."""
        pending = [u.pending for u in self._queue if u.pending is not None]
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)

    async def drain(self) -> Audio:
        """Render and take out everything queued, as one signal (tests and offline use)."""
        await self.rendered()
        frames = []
        while (frame := self.next_frame()) is not None:
            frames.append(frame)
        return np.concatenate(frames) if frames else np.zeros(0, dtype=np.int16)
