"""Writers of one SQLite file in several processes wait their turn in a queue the kernel keeps.

SQLite lets one connection write a file at a time. A writer that finds the file taken does
not queue: it sleeps in SQLite's busy handler, in steps of 1 up to 100 ms, and tries again —
so with two worker processes committing log batches hundreds of times a second, one often
sleeps long after the other has finished, and that sleep is the command latency's tail
(`ws_load --workers 2` on SQLite: p99 in seconds where one worker had 0.2 s;
`benchmarks.sqlite_writers`: single commits waiting up to a second).

The log writers (the service's main write load) therefore take an exclusive `flock` on a file
beside the database around each transaction: a waiting writer blocks in the kernel and is woken
the moment the other lets go, and SQLite's own lock is then free. In one process the turn is
never contended (two system calls a batch). Other writes (sign-ups, karma) still meet the
busy handler, as before; they are few.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

SUFFIX = ".write-turn"


class WriteTurn:
    """The turn to write one SQLite file, shared by every process that opens it."""

    def __init__(self, database: str | Path) -> None:
        self.path = f"{database}{SUFFIX}"
        self._fd: int | None = os.open(self.path, os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600)

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Wait for the turn (blocking: call it from a writer's own thread), keep it inside."""
        assert self._fd is not None, "closed"
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
