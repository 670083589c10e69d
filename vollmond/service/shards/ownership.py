"""Who owns a game: the one process that runs its actor, takes its commands and writes its log.

On one machine the set of workers is fixed while the service runs, so ownership is a
deterministic function of the game id (`HashOwnership`): every worker answers the same without
asking anyone, nothing is stored, and a restart with another number of workers simply resumes
each running game on its new owner from the log. Between machines (issue 15) nodes come and go,
so the answer comes from a lease table in PostgreSQL instead — behind the same `Ownership`.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Protocol


class Ownership(Protocol):
    def owner_of(self, game_id: str) -> str:
        """The name of the node (worker) that owns `game_id`."""


class HashOwnership:
    """Rendezvous hashing over the fixed list of node names: each game goes to the node with the
    highest hash of (node, game). Stable across processes and runs (CRC-32, not Python's
    salted `hash`); adding a node moves only the games the new node wins."""

    def __init__(self, nodes: Sequence[str]) -> None:
        if not nodes:
            raise ValueError("at least one node")
        self.nodes = tuple(nodes)

    def owner_of(self, game_id: str) -> str:
        return max(self.nodes, key=lambda node: zlib.crc32(f"{node}/{game_id}".encode()))


def worker_names(count: int) -> list[str]:
    """The node names of `count` workers on one machine: w0, w1, ..."""
    return [f"w{i}" for i in range(count)]
