"""The key grammar (DESIGN §4, completed in docs/phone-keys.md): DTMF keys in, tokens out.

The parser only cuts the key stream into tokens; what a token means depends on where the caller
is (menu, night, vote, call) and is decided by the session. The rules:

* ``digits #`` is an entry (a house number, a menu choice, a size, a code). A pause of
  ``timeout_s`` after digits completes the entry as if ``#`` had been pressed; this is how a
  lone ``0`` (abstain) works, while ``05#`` is house 5 — a leading zero never changes a number.
* ``* ... #`` is a star command: ``*0 NN #`` call, ``*0#`` hang up, ``*9#`` / ``*9 R NN #``
  operator, ``*#`` interjection, ``* NN #`` and ``** NN #`` a day action. ``*0*`` (toggle the
  call mode) ends at its second star. A star command cut off by a pause is an error.
* ``# digit`` is an info command (help, repeat, status, ...). ``#`` alone followed by a pause,
  or ``##``, is "nobody" (S8, S14). While the caller is in a call (ringing or talking), ``#``
  hangs up at once (C4) — the session sets :attr:`KeyParser.hash_immediate` then.
* Keys in :attr:`KeyParser.immediate` act at once when nothing is buffered: ``1``/``2`` while
  a call rings (C2), ``1``/``2`` for yes/no questions.
* More than ``max_len`` keys without an end is an error; so is a key that is not a DTMF key.
* After an error the rest of that burst of keys is dropped: keys that follow the previous one
  within ``flood_gap_s`` make no token. So a command is always a whole token typed on its own —
  ``*#`` (interjection) inside a flood of stars and hashes interjects nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

DTMF_KEYS: Final = frozenset("0123456789*#")
DEFAULT_TIMEOUT_S: Final = 3.0
DEFAULT_MAX_LEN: Final = 20  # a 16-digit invitation code plus its "#" fits
DEFAULT_FLOOD_GAP_S: Final = 0.5


@dataclass(frozen=True, slots=True)
class Entry:
    """Digits ended by ``#`` (confirmed) or by a pause."""

    digits: str
    confirmed: bool = True

    @property
    def number(self) -> int:
        return int(self.digits)


@dataclass(frozen=True, slots=True)
class Star:
    """A star command: the keys between the first ``*`` and its end (``#`` or ``*``)."""

    body: str
    end: str = "#"


@dataclass(frozen=True, slots=True)
class Info:
    """``#`` followed by a digit."""

    digit: str


@dataclass(frozen=True, slots=True)
class Hash:
    """``#`` alone: hang up in a call, otherwise "nobody"."""


@dataclass(frozen=True, slots=True)
class Single:
    """A key that acts at once (answer 1/2, yes/no)."""

    key: str


@dataclass(frozen=True, slots=True)
class BadKeys:
    """Keys that make no command; `reason` is a catalogue word (phone.keyerror.<reason>)."""

    reason: str
    keys: str


Token = Entry | Star | Info | Hash | Single | BadKeys


class KeyParser:
    def __init__(
        self,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_len: int = DEFAULT_MAX_LEN,
        flood_gap_s: float = DEFAULT_FLOOD_GAP_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.timeout_s = timeout_s
        self.max_len = max_len
        self.flood_gap_s = flood_gap_s
        self._flood = False  # dropping the rest of a burst that made an error
        self.clock = clock
        self.immediate: frozenset[str] = frozenset()
        self.hash_immediate = False
        self.buffer = ""
        self._last_key = 0.0

    @property
    def deadline(self) -> float | None:
        """When the buffered keys time out (clock seconds), or None with nothing buffered."""
        return self._last_key + self.timeout_s if self.buffer else None

    def reset(self) -> None:
        self.buffer = ""

    def feed(self, key: str) -> list[Token]:
        now = self.clock()
        if self._flood:
            if now - self._last_key < self.flood_gap_s:
                self._last_key = now
                return []
            self._flood = False
        if key not in DTMF_KEYS or len(key) != 1:
            self._last_key = now
            return [self._done(BadKeys("unknown_key", self.buffer + key))]
        self._last_key = now
        if not self.buffer:
            if key in self.immediate:
                return [Single(key)]
            if key == "#" and self.hash_immediate:
                return [Hash()]
        self.buffer += key
        token = self._complete(self.buffer, key)
        if token is not None:
            return [self._done(token)]
        if len(self.buffer) > self.max_len:
            return [self._done(BadKeys("too_long", self.buffer))]
        return []

    def expire(self) -> list[Token]:
        """Called when the pause after the last key is over (by the session's timer)."""
        deadline = self.deadline
        if deadline is None or self.clock() < deadline:
            return []
        keys = self.buffer
        if keys == "#":
            return [self._done(Hash())]
        if keys.isdigit():
            return [self._done(Entry(keys, confirmed=False))]
        return [self._done(BadKeys("incomplete", keys))]

    def _done(self, token: Token) -> Token:
        self.buffer = ""
        self._flood = isinstance(token, BadKeys)
        return token

    @staticmethod
    def _complete(keys: str, last: str) -> Token | None:
        first = keys[0]
        if first == "#":
            if len(keys) == 1:
                return None
            if last.isdigit():
                return Info(last)
            return Hash() if last == "#" else BadKeys("star_after_hash", keys)
        if first == "*":
            body = keys[1:]
            if last == "#":
                body = body[:-1]
                if body.count("*") > 1 or ("*" in body and not body.startswith("*")):
                    return BadKeys("misplaced_star", keys)
                return Star(body)
            if keys == "*0*":
                return Star("0", end="*")
            if last == "*" and keys not in ("*", "**"):
                return BadKeys("misplaced_star", keys)
            return None
        # digits first
        if last == "#":
            return Entry(keys[:-1])
        if last == "*":
            return BadKeys("star_after_digits", keys)
        return None
