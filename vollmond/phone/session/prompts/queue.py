"""The prompt queue: utterances and tones played one after another, 20 ms at a time.

Text is rendered off the event loop (a voice may run a program) as soon as it is queued, so
by the time an utterance reaches the head of the queue its audio is usually ready. The audio
comes from the node's :class:`~.renderer.Renders`: a sentence already rendered (for this caller
or any other) is handed over at once, one being rendered is waited for, and only new words start
a render — so a public event told to a table of 200 callers is rendered once, not 200 times.

Every prompt has a :class:`Priority`. A caller must never miss what matters because the line
is busy with something less important, so the queue is ordered by class (first in, first out
within a class) and a new prompt preempts a lower one that is playing:

* ``ALERT`` (a call ringing for you) goes before everything, even an urgent prompt that is
  playing: the ring window is short, and the ring must be heard at once.
* ``URGENT`` (your turn, your own death, game over) goes before the rest and, like an alert,
  cuts every menu and help prompt, queued or playing; game news or an urgent prompt that was
  playing is started again after it (news is never lost).
* ``NEWS`` (what happened in the game) goes before menus and help and cuts help that plays.
* ``MENU`` and ``HELP`` wait; help is asked for by the caller and never delays anything.

A key press may cut prompts short ("barge-in"): menus and help are interruptible, game news is
not — a caller who types while the morning report plays must still hear who died.

A prompt may carry a `tag` saying what it is about, so that one that became wrong can be
withdrawn (:meth:`PromptQueue.withdraw`): a turn's keys and time left are obsolete once the
next phase has begun, and an urgent backlog of past turns would hold back every later urgent
prompt (first in, first out) — the recording warning waited a minute behind one. The game lines
tag everything that describes a phase (its narration, its instructions, its timer lines) and
withdraw it when the phase is over; what stays true (a role, a death, a seat code) is untagged.

A prompt whose words depend on when it is heard ("noch 90 Sekunden") is a :class:`Live` line:
it is rendered when queued, and again for the moment it starts to play if its words changed by
then, or dropped if it has nothing true left to say. A caller never hears a stale timer.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np

from vollmond.phone.session.prompts.renderer import Renders
from vollmond.phone.session.prompts.voice import FRAME_SAMPLES, Audio, Voice


class Priority(IntEnum):
    """What a prompt is, in the order a caller needs it (lower plays first)."""

    ALERT = 0
    URGENT = 1
    NEWS = 2
    MENU = 3
    HELP = 4

    @property
    def interruptible(self) -> bool:
        """A key press cuts menus and help short, never news or urgent prompts."""
        return self >= Priority.MENU


@dataclass(frozen=True, slots=True)
class Live:
    """A line whose words depend on when it is heard: `text` as it would be said now, and
    `refresh` giving the words for the moment it starts to play (None: drop it, it would no
    longer be true)."""

    text: str
    refresh: Callable[[], str | None]


Line = str | Live
"""What the session is asked to say: fixed words, or a live line."""


@dataclass(eq=False)
class Utterance:
    """One queued prompt: speech (`text`) or a tone (`audio` known from the start)."""

    text: str | None
    priority: Priority
    audio: Audio | None = None
    tone: str | None = None
    pending: asyncio.Future[Audio] | None = field(default=None, repr=False)  # shared: see Renders
    played: int = 0  # samples already sent
    tag: str | None = None  # what the prompt is about (see PromptQueue.withdraw)
    refresh: Callable[[], str | None] | None = field(default=None, repr=False)  # see Live

    @property
    def interruptible(self) -> bool:
        return self.priority.interruptible

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
    priority: Priority

    @property
    def interruptible(self) -> bool:
        return self.priority.interruptible


TRANSCRIPT_LIMIT = 5000
"""The transcript keeps the most recent prompts of a call (older ones are dropped in bulk)."""


class PromptQueue:
    def __init__(self, voice: Voice, lang: str, *, renders: Renders | None = None) -> None:
        """`renders`: the audio shared with the node's other callers (one per voice); without
        it, this queue's own (a sentence said twice to this caller is still rendered once)."""
        if renders is not None and renders.voice is not voice:
            raise ValueError("the shared renders are of another voice")
        self.voice = voice
        self.lang = lang
        self.renders = renders if renders is not None else Renders(voice)
        self._queue: deque[Utterance] = deque()
        self.transcript: list[Spoken] = []
        #: Told when what is to play may have changed (a prompt queued, dropped or rendered):
        #: a media process playing this queue is told at once, not at its next tick.
        self.changed: Callable[[], None] | None = None

    def _touched(self) -> None:
        if self.changed is not None:
            self.changed()

    # -- queueing --------------------------------------------------------------------------
    def say(
        self,
        text: str,
        priority: Priority = Priority.MENU,
        tag: str | None = None,
        refresh: Callable[[], str | None] | None = None,
    ) -> None:
        """Queue `text`; with `refresh`, its words are checked again when it starts to play
        (a :class:`Live` line)."""
        text = text.strip()
        if not text:
            return
        item = Utterance(text, priority, tag=tag, refresh=refresh)
        self._render_soon(item)
        self._enqueue(item)
        self._record(Spoken(text, None, priority))

    def _render_soon(self, item: Utterance) -> None:
        """`item`'s audio at once if its words were rendered before, else the shared render's
        future (never cancelled here: other callers may wait on it)."""
        assert item.text is not None
        found = self.renders.audio(item.text, self.lang)
        if isinstance(found, asyncio.Future):
            item.audio, item.pending = None, found
            if self.changed is not None:
                found.add_done_callback(lambda _: self._touched())
        else:
            item.audio, item.pending = found, None

    def play(self, name: str, audio: Audio, priority: Priority = Priority.MENU) -> None:
        """A tone (ringing, busy, beep) by name; the name goes into the transcript."""
        self._enqueue(Utterance(None, priority, audio=audio, tone=name))
        self._record(Spoken(None, name, priority))

    def _enqueue(self, item: Utterance) -> None:
        """Put `item` behind every prompt of its class or a higher one, preempting lower ones."""
        if item.priority <= Priority.URGENT:
            self._drop(lambda u: u.priority >= Priority.MENU)
        head = self._queue[0] if self._queue else None
        if head is not None and head.played and head.priority > item.priority:
            if head.priority is Priority.HELP:
                self._drop(lambda u: u is head)
            else:
                head.played = 0  # cut now, heard again from its start afterwards
        index = len(self._queue)
        while index > 0 and self._queue[index - 1].priority > item.priority:
            index -= 1
        self._queue.insert(index, item)
        self._touched()

    def _drop(self, which: Callable[[Utterance], bool]) -> int:
        kept = deque(u for u in self._queue if not which(u))
        dropped = len(self._queue) - len(kept)
        self._queue = kept
        if dropped:
            self._touched()
        return dropped

    def _record(self, spoken: Spoken) -> None:
        self.transcript.append(spoken)
        if len(self.transcript) > TRANSCRIPT_LIMIT:
            del self.transcript[: TRANSCRIPT_LIMIT // 5]

    def interrupt(self) -> int:
        """Barge-in: drop every interruptible prompt (also the one playing). Returns how many."""
        return self._drop(lambda u: u.interruptible)

    def withdraw(self, tag: str) -> int:
        """Drop every prompt tagged `tag`, also the one playing: what it says no longer holds
        (a past turn's keys and time). Returns how many."""
        return self._drop(lambda u: u.tag == tag)

    def shorten(self, tag: str, text: str) -> bool:
        """Say `text` instead of the unheard prompts tagged `tag` (one that is playing is heard
        to its end): what stays true, in fewer words once it is late. Returns whether any was
        replaced."""
        unheard = [u for u in self._queue if u.tag == tag and u.played == 0]
        if not unheard:
            return False
        first = unheard[0]
        self._drop(lambda u: u in unheard[1:])
        first.text, first.refresh = text.strip(), None
        self._render_soon(first)
        self._record(Spoken(first.text, None, first.priority))
        return True

    def stop_tone(self, *names: str) -> int:
        """Stop tones by name (the ringing once a call is answered), also mid-play."""
        kept = deque(u for u in self._queue if u.tone is None or u.tone not in names)
        stopped = len(self._queue) - len(kept)
        self._queue = kept
        if stopped:
            self._touched()
        return stopped

    def clear(self) -> None:
        self._queue.clear()
        self._touched()

    @property
    def queued_tones(self) -> list[str]:
        """Names of the tones still to play (or playing), in order."""
        return [u.tone for u in self._queue if u.tone is not None]

    @property
    def busy(self) -> bool:
        return bool(self._queue)

    @property
    def queued(self) -> list[Utterance]:
        """Everything still to play (the head first), for logs and tests."""
        return list(self._queue)

    @property
    def playing(self) -> Utterance | None:
        """The prompt at the head of the queue (playing, or about to)."""
        return self._queue[0] if self._queue else None

    # -- playing ---------------------------------------------------------------------------
    def next_frame(self) -> Audio | None:
        """The next 160 samples; silence while the head is still being rendered; None when
        nothing is queued."""
        if not self._queue:
            return None  # the common case of a call in a game: no allocation per tick
        out = np.zeros(FRAME_SAMPLES, dtype=np.int16)
        filled = 0
        while filled < FRAME_SAMPLES and self._queue:
            head = self._queue[0]
            if not head.ready():
                break
            if head.played == 0 and head.refresh is not None and not self._fresh(head):
                continue
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

    # -- playing elsewhere (a media process) ---------------------------------------------------
    def upcoming(self, limit: int = 8) -> list[Utterance]:
        """The prompts that may play now, back to back, when a media process plays them: the
        head and the ready ones behind it, up to the first that is not rendered yet or is a
        live line (whose words are checked when it reaches the head). The head's own live
        words are checked here, as :meth:`next_frame` does. The rules stay here: a prompt cut,
        withdrawn or preempted changes this list, and the player is told the new one."""
        queue = self._queue
        while queue:
            head = queue[0]
            if not head.ready():
                return []
            if head.played == 0 and head.refresh is not None and not self._fresh(head):
                continue
            assert head.audio is not None
            if len(head.audio) == 0:  # nothing to hear (a failed render): done at once
                queue.popleft()
                continue
            break
        out: list[Utterance] = []
        for item in queue:
            if len(out) >= limit or not item.ready() or (out and item.refresh is not None):
                break
            assert item.audio is not None
            if len(item.audio):
                out.append(item)
        return out

    def finished(self, item: Utterance) -> None:
        """`item` was played to its end elsewhere: it leaves the queue (if still in it)."""
        if item in self._queue:
            self._queue.remove(item)

    def _fresh(self, head: Utterance) -> bool:
        """Whether a live line at the head may start now: dropped if it has nothing true left
        to say, rendered again (silence meanwhile) if its words changed since it was queued."""
        assert head.refresh is not None
        words = head.refresh()
        if words is None:
            self._queue.popleft()
            return False
        words = words.strip()
        if words == head.text:
            return True
        head.text = words
        self._render_soon(head)
        # Once only: a timer's words change every second, and a renderer slower than that
        # (a loaded machine) would otherwise chase them forever while the caller hears silence.
        head.refresh = None
        return False

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
            head = self.playing
            if head is not None and not head.ready():
                await self.rendered()  # a live line rendered again when it reached the head
        return np.concatenate(frames) if frames else np.zeros(0, dtype=np.int16)
