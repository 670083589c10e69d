"""Prometheus metrics of one service process, on its own registry (no global state)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Protocol

from prometheus_client import CollectorRegistry, Counter, Gauge, ProcessCollector, generate_latest
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector


class SipStats(Protocol):
    """What ``/metrics`` shows of a SIP server at one moment (``vollmond.phone.sip.guard``'s
    value fits; the service does not import the telephone)."""

    @property
    def active_calls(self) -> int: ...

    @property
    def dropped(self) -> Mapping[str, int]:
        """Datagrams not taken, by reason (every reason the server knows, zeros included)."""
        ...


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
        # process_open_fds, process_resident_memory_bytes, ...: a leak shows here first.
        ProcessCollector(registry=self.registry)
        self._sip = _SipCollector()
        self.registry.register(self._sip)

    def watch_sip(self, source: SipStatsSource | None) -> None:
        """Report this SIP server's calls and drops (None: no telephone in this process)."""
        self._sip.source = source

    def render(self) -> bytes:
        return generate_latest(self.registry)
