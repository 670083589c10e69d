"""What a node tells operators about itself: `/metrics` and the console's "Nodes" (issue 15).

Plain values, read at scrape time: the hub and the lease ownership keep counting, the metrics
(service/metrics.py) and the moderation API turn a snapshot into Prometheus text or JSON, so
neither the hub nor the leases need Prometheus types.
"""

from __future__ import annotations

from dataclasses import dataclass

from vollmond.voice.relay import RelayStats


@dataclass(slots=True)
class LeaseCounters:
    """Since the node started. A renewal or takeover *round* is one statement for all games;
    a round that failed (the store was away) is tried again at the next period."""

    acquired: int = 0  # leases acquired when asked about a game (free, expired, never leased)
    renewals: int = 0  # renewal rounds that ran
    renewal_failures: int = 0  # renewal rounds that failed
    lost: int = 0  # games found no longer this node's at a renewal (it missed renewing)
    taken_over: int = 0  # expired leases of other nodes taken over (their games resumed here)
    takeover_failures: int = 0  # takeover rounds that failed
    fenced: int = 0  # games whose append the store refused under a lease taken over meanwhile
    handed_on: int = 0  # leases expired at a clean stop for the other nodes to take at once


@dataclass(frozen=True, slots=True)
class NodeStats:
    """One node (or one worker of `--workers`) at one moment."""

    node: str
    ownership: str  # "hash" (the fixed list) or "leases"
    games_owned: int  # games this node runs (their actor is here), finished ones not counted
    games_mirrored: int  # games owned elsewhere that this node's sockets follow
    leases_held: int = 0
    next_expiry_s: float | None = None  # seconds until the soonest of its leases expires
    leases: LeaseCounters | None = None  # a copy; None without leases
    relay: RelayStats | None = None  # the telephone's voice relay; None without a telephone
