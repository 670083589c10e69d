"""The caller's own voice for a session that asks for it (a voice message being recorded).

The telephone service hands every received frame to :func:`feed` (one hook line in
``PhoneService.on_audio``); a session that records registers a sink with :func:`capture` and
removes it with :func:`release`. Kept apart from the session class, so the session needs no
new attribute and nothing is captured unless a recording runs.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

Sink = Callable[[npt.NDArray[np.int16]], None]

_SINKS: weakref.WeakKeyDictionary[object, Sink] = weakref.WeakKeyDictionary()


def capture(session: object, sink: Sink) -> None:
    _SINKS[session] = sink


def release(session: object) -> None:
    _SINKS.pop(session, None)


def feed(session: object, samples: npt.NDArray[np.int16]) -> None:
    """A received 20 ms frame of `session`'s caller (called by the media path: never raises
    into it, costs one dictionary look-up when nothing records)."""
    sink = _SINKS.get(session)
    if sink is not None:
        sink(samples)
