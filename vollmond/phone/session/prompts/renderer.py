"""Prompt audio shared by every caller of a node: one render per distinct sentence.

A public event is told to every caller at the table with the same words. Each caller's
:class:`~.queue.PromptQueue` asks the node's :class:`Renders` for the audio of its sentence:

* audio rendered before (kept, most recently used first, up to `memory_items` sentences) is
  handed out at once, the same array to every queue — no worker-thread job per caller;
* a sentence being rendered right now is joined: every caller waits on the one render;
* anything else starts one render in a worker thread (a voice may run a program).

The key is the voice (one `Renders` per voice), the language and the exact words. So audio is
shared only between callers who were given identical words: a caller's own setting (expert
mode, language) that changes the words gives another key, and a caller never receives the
audio of words that were not queued for them. Audio arrays are read-only by contract (a queue
slices them, never writes).

A render that fails is not kept: every caller waiting on it hears nothing for that sentence
(as before, see `Utterance.ready`) and the next one asking renders it again.

The words of an event are shared the same way (:meth:`Renders.words`): the game's actor hands
every subscriber the same event object, so its sentence is made once per language, world and
rule set for the whole table, not once per caller.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Final

import numpy as np

from vollmond.phone.session.prompts.voice import Audio, Voice

log = logging.getLogger(__name__)

MEMORY_ITEMS: Final = 512
"""Sentences kept as audio by default (a few seconds of 8 kHz speech each: ≈ 25 MB at most,
most of them the same arrays the voice keeps in its own cache)."""

WORDS_ITEMS: Final = 64
"""Events whose words are kept (the events of the latest fan-outs)."""

Key = tuple[str, str]
"""(language, words)"""


class Renders:
    """The audio of a sentence for every caller of a node, rendered once (see the module)."""

    def __init__(self, voice: Voice, *, memory_items: int = MEMORY_ITEMS) -> None:
        self.voice = voice
        self.memory_items = memory_items
        self._done: OrderedDict[Key, Audio] = OrderedDict()
        self._running: dict[Key, asyncio.Future[Audio]] = {}
        self._words: OrderedDict[tuple[int, Hashable], tuple[object, str]] = OrderedDict()
        self.started = 0  # renders started in a worker thread (for tests and metrics)

    def audio(self, text: str, lang: str) -> Audio | asyncio.Future[Audio]:
        """The audio of `text` if it is known, else the future of its one render. The future
        is shared by every caller who asked: never cancel it (a queue that no longer needs it
        just drops it; the render finishes for the others and for the next caller)."""
        key = (lang, text)
        done = self._done.get(key)
        if done is not None:
            self._done.move_to_end(key)
            return done
        running = self._running.get(key)
        if running is not None and running.get_loop() is asyncio.get_running_loop():
            return running
        future = asyncio.ensure_future(asyncio.to_thread(self._render, text, lang))
        self._running[key] = future
        self.started += 1
        future.add_done_callback(lambda f: self._finished(key, f))
        return future

    def words(self, about: object, how: Hashable, make: Callable[[], str]) -> str:
        """The words for `about` (an event, by identity) said `how` (language, world, rule
        set): `make()` the first time, the same string for every later caller. The event is
        held while its words are kept, so no other object can take its identity meanwhile."""
        key = (id(about), how)
        kept = self._words.get(key)
        if kept is not None and kept[0] is about:
            return kept[1]
        made = make()
        self._words[key] = (about, made)
        while len(self._words) > WORDS_ITEMS:
            self._words.popitem(last=False)
        return made

    async def settled(self) -> None:
        """Wait until every render this loop started has finished (tests, shutdown)."""
        loop = asyncio.get_running_loop()
        while running := [f for f in self._running.values() if f.get_loop() is loop]:
            await asyncio.gather(*running, return_exceptions=True)

    def _finished(self, key: Key, future: asyncio.Future[Audio]) -> None:
        if self._running.get(key) is future:
            del self._running[key]
        if future.cancelled() or future.exception() is not None:
            return  # not kept: the next caller renders it again (the failure is logged)
        self._done[key] = future.result()
        self._done.move_to_end(key)
        while len(self._done) > self.memory_items:
            self._done.popitem(last=False)

    def _render(self, text: str, lang: str) -> Audio:
        try:
            return np.asarray(self.voice.render(text, lang), dtype=np.int16)
        except Exception:  # a broken voice must not take the callers' lines down
            log.exception("prompt_render_failed")
            raise
