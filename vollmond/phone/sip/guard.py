"""What the SIP server lets in: trusted proxies, per-source rates, call caps and drop counts.

A UDP source address proves nothing (it may be spoofed) and anyone may send, so the server
decides per datagram, before it keeps any state, whether to take it. Everything here is pure
bookkeeping with the clock passed in; the user agent server (:mod:`vollmond.phone.sip.uas`)
asks and acts. See docs/security.md, "SIP and RTP".
"""

from __future__ import annotations

import enum
import ipaddress
from collections import Counter, OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from vollmond.phone.sip.message import SipParseError, header_uri, split_list_value
from vollmond.settings.sip import SipSettings

if TYPE_CHECKING:  # the guard itself needs no numpy
    from vollmond.phone.media import ClockStats


class DropReason(enum.StrEnum):
    """Why a datagram was not taken (a label of ``vollmond_sip_dropped_total``)."""

    #: Not SIP, or a request missing what an answer needs (then answered 400 if possible).
    MALFORMED = "malformed"
    #: Above the per-source INVITE or request rate.
    RATE_LIMITED = "rate_limited"
    #: The server holds ``max_calls`` calls already (503).
    OVER_CAPACITY = "over_capacity"
    #: The source holds ``max_calls_per_source`` calls already (486).
    SOURCE_BUSY = "source_busy"
    #: RTP from an address other than the call's signalled (and latched) peer.
    FOREIGN_RTP = "foreign_rtp"
    #: A datagram on a media port that is not RTP or not a valid telephone-event.
    MALFORMED_RTP = "malformed_rtp"
    #: A bug of ours while handling a request (answered 500, resources released).
    INTERNAL_ERROR = "internal_error"


class TrustedProxies:
    """The operator's allow-list (addresses or CIDR networks) of SIP proxies and trunks."""

    def __init__(self, entries: Iterable[str]) -> None:
        self._networks = tuple(ipaddress.ip_network(e, strict=False) for e in entries)

    def __contains__(self, host: object) -> bool:
        if not isinstance(host, str) or not self._networks:
            return False
        try:
            address = ipaddress.ip_address(host.split("%", 1)[0])
        except ValueError:
            return False
        return any(address in network for network in self._networks)


@dataclass(slots=True)
class _Bucket:
    tokens: float
    updated: float


class RateLimiter:
    """Token buckets per source address, at most ``capacity`` of them (least recently used
    forgotten first), so spoofed sources cannot grow memory without bound.

    >>> limiter = RateLimiter(rate=1.0, burst=2, capacity=10)
    >>> [limiter.allow("10.0.0.1", now=0.0) for _ in range(3)]
    [True, True, False]
    >>> limiter.allow("10.0.0.1", now=1.0)
    True
    """

    def __init__(self, rate: float, burst: int, capacity: int) -> None:
        self.rate = rate
        self.burst = float(burst)
        self.capacity = capacity
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()

    def __len__(self) -> int:
        return len(self._buckets)

    def allow(self, source: str, now: float) -> bool:
        """Take one token for ``source``; False when its bucket is empty."""
        bucket = self._buckets.get(source)
        if bucket is None:
            bucket = _Bucket(self.burst, now)
            self._buckets[source] = bucket
            if len(self._buckets) > self.capacity:
                self._buckets.popitem(last=False)
        else:
            self._buckets.move_to_end(source)
            bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.updated) * self.rate)
            bucket.updated = now
        if bucket.tokens < 1.0:
            return False
        bucket.tokens -= 1.0
        return True


@dataclass(frozen=True, slots=True)
class Refusal:
    """A new call the server will not take, and how it says so."""

    status: int
    reason: DropReason
    retry_after: int | None = None


class Admission:
    """The decisions on datagrams and new calls, from the operator's :class:`SipSettings`."""

    def __init__(self, settings: SipSettings) -> None:
        self.settings = settings
        self.trusted = TrustedProxies(settings.trusted_proxies)
        self._requests = RateLimiter(
            settings.requests_per_second, settings.request_burst, settings.tracked_sources
        )
        self._invites = RateLimiter(
            settings.invites_per_second, settings.invite_burst, settings.tracked_sources
        )

    def request_allowed(self, source: str, now: float) -> bool:
        """Any well-formed request from ``source`` (trusted proxies are never limited)."""
        return source in self.trusted or self._requests.allow(source, now)

    def refuse_call(self, source: str, now: float, total: int, from_source: int) -> Refusal | None:
        """Why a new INVITE from ``source`` is refused, given the calls held in ``total`` and
        from that source; None to take it. The INVITE rate is checked last, so refused calls
        do not use up the source's INVITE tokens."""
        settings = self.settings
        if total >= settings.max_calls:
            return Refusal(503, DropReason.OVER_CAPACITY, settings.retry_after)
        if source in self.trusted:
            return None
        if from_source >= settings.max_calls_per_source:
            return Refusal(486, DropReason.SOURCE_BUSY)
        if not self._invites.allow(source, now):
            return Refusal(503, DropReason.RATE_LIMITED, settings.retry_after)
        return None


class DropCounts:
    """Datagrams not taken, by reason (read by the Prometheus collector)."""

    def __init__(self) -> None:
        self._counts: Counter[DropReason] = Counter()

    def add(self, reason: DropReason) -> None:
        self._counts[reason] += 1

    def __getitem__(self, reason: DropReason) -> int:
        return self._counts[reason]

    def snapshot(self) -> Mapping[str, int]:
        """Every reason with its count (zeros included, so the series exist from the start)."""
        return {reason.value: self._counts[reason] for reason in DropReason}


@dataclass(frozen=True, slots=True)
class SipStats:
    """What ``/metrics`` shows of the SIP server at one moment."""

    active_calls: int
    dropped: Mapping[str, int]
    media: ClockStats


def asserted_number(value: str) -> str | None:
    """The user part (the number) of a P-Asserted-Identity value; a ``tel:`` URI wins over a
    ``sip:`` one when both are given (RFC 3325 allows one of each).

    >>> asserted_number('"Alice" <sip:+4930123@proxy.example;user=phone>, <tel:+4930123>')
    '+4930123'
    >>> asserted_number("<sip:proxy.example>") is None
    True
    """
    numbers: list[tuple[bool, str]] = []
    for part in split_list_value(value):
        try:
            uri = header_uri(part)
        except SipParseError:
            continue
        scheme, _, rest = uri.partition(":")
        scheme = scheme.strip().lower()
        if scheme == "tel":
            user = rest
        elif scheme in ("sip", "sips") and "@" in rest:
            user = rest.split("@", 1)[0]
        else:
            continue
        user = user.split(";", 1)[0].strip()
        if user:
            numbers.append((scheme != "tel", user))
    numbers.sort(key=lambda n: n[0])  # stable: the first tel, else the first sip URI
    return numbers[0][1] if numbers else None
