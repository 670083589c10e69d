"""Prometheus metrics of one service process, on its own registry (no global state)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest


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

    def render(self) -> bytes:
        return generate_latest(self.registry)
