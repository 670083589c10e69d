"""Prometheus metrics of one service process, on its own registry (no global state)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Protocol

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from vollmond.service.loop_lag import BUCKETS_S, LoopLag
from vollmond.service.shards.group_metrics import GroupMetrics
from vollmond.service.shards.stats import NodeStats
from vollmond.voice.relay import RelayStats


class MediaClockStats(Protocol):
    """The media clocks' counters (``vollmond.phone.media.ClockStats`` fits)."""

    @property
    def sent(self) -> int: ...
    @property
    def unsent(self) -> int: ...
    @property
    def late_ticks(self) -> int: ...
    @property
    def skipped_ticks(self) -> int: ...
    @property
    def lead_s(self) -> float: ...


class SipStats(Protocol):
    """What ``/metrics`` shows of a SIP server at one moment (``vollmond.phone.sip.guard``'s
    value fits; the service does not import the telephone)."""

    @property
    def active_calls(self) -> int: ...

    @property
    def dropped(self) -> Mapping[str, int]:
        """Datagrams not taken, by reason (every reason the server knows, zeros included)."""
        ...

    @property
    def media(self) -> MediaClockStats: ...


class SipStatsSource(Protocol):
    """The SIP server as the metrics see it (:class:`vollmond.phone.sip.uas.SipUas`)."""

    def sip_stats(self) -> SipStats: ...


class _SipCollector(Collector):
    """Reads the SIP server's counters at scrape time (no calls and no drops while there is no
    telephone), so the server itself needs no Prometheus types."""

    def __init__(self) -> None:
        self.source: SipStatsSource | None = None

    def collect(self) -> Iterator[Metric]:
        stats = self.source.sip_stats() if self.source is not None else None
        yield GaugeMetricFamily(
            "vollmond_sip_calls_active",
            "SIP calls not yet ended",
            value=stats.active_calls if stats is not None else 0,
        )
        dropped = CounterMetricFamily(
            "vollmond_sip_dropped",
            "SIP and RTP datagrams not taken, by reason (docs/security.md)",
            labels=["reason"],
        )
        for reason, count in sorted(stats.dropped.items() if stats is not None else ()):
            dropped.add_metric([reason], count)
        yield dropped
        yield from _media_clock_metrics(stats.media if stats is not None else None)


def _media_clock_metrics(media: MediaClockStats | None) -> Iterator[Metric]:
    """The RTP clocks: what a caller hears on time depends on these (docs/voice.md)."""
    for name, text, value in (
        ("vollmond_rtp_packets_sent", "RTP packets sent to callers", "sent"),
        ("vollmond_rtp_packets_unsent", "RTP packets the kernel refused", "unsent"),
        ("vollmond_media_late_ticks", "Media ticks sent a whole 20 ms period late", "late_ticks"),
        ("vollmond_media_skipped_ticks", "Media frames skipped after a stall", "skipped_ticks"),
    ):
        yield CounterMetricFamily(
            name, text, value=getattr(media, value) if media is not None else 0
        )
    yield GaugeMetricFamily(
        "vollmond_media_lead_seconds",
        "How long before its deadline the media clock starts making a tick (at most 0.01 s: "
        "near it, the clock is short of time)",
        value=media.lead_s if media is not None else 0.0,
    )


NodeStatsSource = Callable[[], NodeStats | None]


def _relay_metrics(relay: RelayStats) -> Iterator[Metric]:
    """The telephone's voice relay between processes (vollmond/voice/relay.py): lines relayed
    from here and hosted here now; gaps, late and dropped mix frames since the start."""
    yield GaugeMetricFamily(
        "vollmond_voice_relayed_lines",
        "Calls on this node whose game's voice room is on another node",
        value=relay.relayed_lines,
    )
    yield GaugeMetricFamily(
        "vollmond_voice_hosted_lines",
        "Calls on other nodes mixed in the games this node runs",
        value=relay.hosted_lines,
    )
    yield GaugeMetricFamily(
        "vollmond_voice_relay_delay_frames",
        "The longest playout delay of a relayed call now, in 20 ms frames (grows after gaps)",
        value=relay.delay_frames,
    )
    for name, value, help_text in (
        ("vollmond_voice_relay_underruns", relay.underruns, "Ticks a relayed call heard a gap"),
        ("vollmond_voice_relay_late", relay.late, "Relayed mix frames that came too late"),
        ("vollmond_voice_relay_dropped", relay.dropped, "Relayed mix frames dropped"),
        ("vollmond_voice_relay_bad_messages", relay.bad_messages, "Unreadable relay messages"),
    ):
        yield CounterMetricFamily(name, help_text, value=value)


class _NodeCollector(Collector):
    """This node among several, read at scrape time from the hub (issue 15): which node, the
    games it runs and follows, its leases and what happened to them since it started. Nothing
    while the process runs every game alone."""

    def __init__(self) -> None:
        self.source: NodeStatsSource | None = None

    def collect(self) -> Iterator[Metric]:
        stats = self.source() if self.source is not None else None
        if stats is None:
            return
        info = GaugeMetricFamily(
            "vollmond_node_info",
            "This node: its id and how games are owned",
            labels=["node", "ownership"],
        )
        info.add_metric([stats.node, stats.ownership], 1)
        yield info
        yield GaugeMetricFamily(
            "vollmond_games_owned",
            "Games this node runs (their actor is here)",
            value=stats.games_owned,
        )
        yield GaugeMetricFamily(
            "vollmond_games_mirrored",
            "Games owned by another node that this node's sockets follow",
            value=stats.games_mirrored,
        )
        if stats.relay is not None:
            yield from _relay_metrics(stats.relay)
        counters = stats.leases
        if counters is None:
            return
        yield GaugeMetricFamily(
            "vollmond_leases_held", "Game leases this node holds", value=stats.leases_held
        )
        if stats.next_expiry_s is not None:
            yield GaugeMetricFamily(
                "vollmond_lease_next_expiry_seconds",
                "Seconds until the soonest of this node's leases expires (as last renewed)",
                value=stats.next_expiry_s,
            )
        for name, value, help_text in (
            (
                "vollmond_leases_acquired",
                counters.acquired,
                "Leases acquired when asked about a game",
            ),
            (
                "vollmond_lease_renewals",
                counters.renewals,
                "Lease renewal rounds (one statement each)",
            ),
            (
                "vollmond_lease_renewal_failures",
                counters.renewal_failures,
                "Lease renewal rounds that failed",
            ),
            (
                "vollmond_leases_lost",
                counters.lost,
                "Games whose lease was found lost at a renewal",
            ),
            (
                "vollmond_lease_takeovers",
                counters.taken_over,
                "Expired leases of other nodes taken over",
            ),
            (
                "vollmond_lease_takeover_failures",
                counters.takeover_failures,
                "Takeover rounds that failed",
            ),
            (
                "vollmond_lease_fenced",
                counters.fenced,
                "Games whose log append was refused: lease taken over",
            ),
            (
                "vollmond_leases_handed_on",
                counters.handed_on,
                "Leases expired at a clean stop for others to take",
            ),
        ):
            yield CounterMetricFamily(name, help_text, value=value)


class LimitsStats(Protocol):
    """The sharing of the web's limits between processes (`SharedLimits`)."""

    @property
    def asked(self) -> int: ...

    @property
    def unanswered(self) -> int: ...


class _LimitsCollector(Collector):
    """How often this process asked another about a limit's key, and how often it got no
    answer and counted the key itself (docs/scaling.md, "Limits"). Nothing in one process."""

    def __init__(self) -> None:
        self.source: LimitsStats | None = None

    def collect(self) -> Iterator[Metric]:
        if self.source is None:
            return
        yield CounterMetricFamily(
            "vollmond_limits_asked",
            "Limit checks asked of the process that counts the key",
            value=self.source.asked,
        )
        yield CounterMetricFamily(
            "vollmond_limits_unanswered",
            "Limit checks the counting process did not answer (counted here instead)",
            value=self.source.unanswered,
        )


class HandoffStats(Protocol):
    """How many WebSocket connections one worker passed to their game's owner, adopted from
    another worker, and kept although another worker owns their game
    (`vollmond.service.shards.socket_handoff.SocketHandoff` fits)."""

    @property
    def passed(self) -> int: ...

    @property
    def adopted(self) -> int: ...

    @property
    def kept(self) -> int: ...


class _HandoffCollector(Collector):
    """Read at scrape time: a worker's hand-overs (docs/scaling.md). Nothing in one process."""

    def __init__(self) -> None:
        self.source: HandoffStats | None = None

    def collect(self) -> Iterator[Metric]:
        if self.source is None:
            return
        helps = {  # by the stats' attribute, which names the metric too
            "passed": "WebSocket connections passed to the worker owning their game",
            "adopted": "WebSocket connections adopted from another worker",
            "kept": "WebSocket connections served here though another worker owns their game"
            " (its inbox stayed full, or it did not listen)",
        }
        for name, text in helps.items():
            yield CounterMetricFamily(
                f"vollmond_ws_handoff_{name}", text, value=getattr(self.source, name)
            )


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.games_running = Gauge(
            "vollmond_games_running", "Games with a running actor", registry=self.registry
        )
        self.connected = Gauge(
            "vollmond_players_connected", "Open WebSocket connections", registry=self.registry
        )
        self.commands = Counter(
            "vollmond_commands", "Commands submitted by clients", registry=self.registry
        )
        self.messages = Counter(
            "vollmond_ws_messages", "WebSocket messages received", registry=self.registry
        )
        self.errors = Counter(
            "vollmond_errors", "Errors answered to clients", ["code"], registry=self.registry
        )
        # How late the event loop ran its callbacks (service/loop_lag.py): a stall shows here.
        self.loop_lag = LoopLag(
            Histogram(
                "vollmond_event_loop_lag_seconds",
                "How much later than due the event loop ran a callback (sampled every 0.1 s)",
                buckets=BUCKETS_S,
                registry=self.registry,
            )
        )
        # How long a command's log append waited for its commit (service/logwriter.py): its
        # events reach nobody before that, so a slow disk or a long batch shows here.
        self.log_append_wait = Histogram(
            "vollmond_log_append_wait_seconds",
            "How long a game's log append waited for its commit",
            buckets=BUCKETS_S,
            registry=self.registry,
        )
        # process_open_fds, process_resident_memory_bytes, ...: a leak shows here first.
        ProcessCollector(registry=self.registry)
        self._sip = _SipCollector()
        self.registry.register(self._sip)
        self._node = _NodeCollector()
        self.registry.register(self._node)
        self._limits = _LimitsCollector()
        self.registry.register(self._limits)
        self._handoff = _HandoffCollector()
        self.registry.register(self._handoff)
        self._games: Callable[[], int] | None = None
        #: Where several workers answer one port: every worker's figures (the app's lifespan).
        self.group: GroupMetrics | None = None

    def watch_limits(self, source: LimitsStats | None) -> None:
        """Report how the web's limits were shared with other processes (None: not shared)."""
        self._limits.source = source

    def watch_handoff(self, source: HandoffStats | None) -> None:
        """Report this worker's hand-overs of WebSocket connections (None: none here)."""
        self._handoff.source = source

    def watch_games(self, source: Callable[[], int]) -> None:
        """Read the running games from `source` (the hub's `running_games`) at each render."""
        self._games = source

    def watch_node(self, source: NodeStatsSource | None) -> None:
        """Report this node's games and leases from `source` at each scrape (the hub's
        `node_stats`; None, or a source answering None: a single process)."""
        self._node.source = source

    def watch_sip(self, source: SipStatsSource | None) -> None:
        """Report this SIP server's calls and drops (None: no telephone in this process)."""
        self._sip.source = source

    def render(self) -> bytes:
        """This process's figures."""
        if self._games is not None:
            self.games_running.set(self._games())
        return generate_latest(self.registry)

    async def scrape(self) -> bytes:
        """What `/metrics` answers: this process's figures, or every worker's (`group`)."""
        if self.group is not None:
            return await self.group.render()
        return self.render()
