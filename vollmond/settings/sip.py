"""What the SIP server trusts and how many calls and datagrams it takes (docs/security.md).

Anyone on the internet can send a UDP datagram with any source address to a public SIP port,
so every number here bounds what one such sender can make the server do: how many calls it
holds open, how many INVITEs and other requests it answers, and how much it remembers about
senders. The defaults suit one node answering callers directly; behind a proxy (Kamailio) list
the proxy in ``trusted_proxies`` — its calls are exempt from the per-source limits, because
every caller then arrives from that one address.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SipSettings:
    """Limits and trust of the telephone entry path."""

    # Addresses or networks (CIDR) of SIP proxies/trunks (e.g. Kamailio) whose
    # P-Asserted-Identity is believed and whose SDP may name a media address (rtpengine) other
    # than the signalling source. Nobody else gets either.
    trusted_proxies: tuple[str, ...] = ()
    # Calls at once, in total: a new INVITE beyond this is answered 503 + Retry-After.
    max_calls: int = 200
    # Calls at once from one source address (trusted proxies exempt): beyond, 486 Busy Here.
    max_calls_per_source: int = 8
    # New INVITEs per second from one source address (token bucket with this burst); beyond,
    # 503 + Retry-After, sent once and statelessly so it cannot be amplified.
    invites_per_second: float = 2.0
    invite_burst: int = 10
    # Well-formed requests of any method per second from one source (burst): beyond, dropped
    # silently. Bounds the transactions (memory) one sender can make the server keep.
    requests_per_second: float = 50.0
    request_burst: int = 200
    # Seconds a refused caller is told to wait (Retry-After of the 503s).
    retry_after: int = 30
    # Source addresses whose rate the server remembers (least recently seen are forgotten).
    tracked_sources: int = 10_000

    def __post_init__(self) -> None:
        for name in ("max_calls", "max_calls_per_source", "invite_burst", "request_burst"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        for name in ("invites_per_second", "requests_per_second"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive")
        if self.retry_after < 0 or self.tracked_sources < 1:
            raise ValueError("retry_after must be >= 0 and tracked_sources >= 1")
        for entry in self.trusted_proxies:
            ipaddress.ip_network(entry, strict=False)  # ValueError names the bad entry
