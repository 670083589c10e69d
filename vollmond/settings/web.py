"""What the web entry path trusts and how much it accepts (docs/security.md, "Web").

Every number an operator may want to change is here, with a default that is safe for a
service reachable from the internet without a proxy in front.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class WebSettings:
    """Limits and trust of the HTTP and WebSocket entry path."""

    # Reverse proxies whose X-Forwarded-For / X-Forwarded-Proto is believed; nobody else's is
    # (the peer address of the TCP connection is the client otherwise).
    trusted_proxies: tuple[str, ...] = ()
    # Served over HTTPS (directly or behind a TLS proxy): cookies get `Secure`, answers get HSTS.
    https: bool = False
    hsts_max_age_s: int = 365 * 24 * 3600
    # How long a sign-in lasts; the server can end it earlier (logout, revocation).
    session_max_age_s: int = 14 * 24 * 3600
    # Request bodies larger than this are refused while they are read (413).
    max_body_bytes: int = 16 * 1024
    # Open WebSockets per client address; more are refused with `too_many_connections`.
    ws_connections_per_address: int = 32
    # Chat messages (Say) one seat may send per minute, on top of the engine's own checks.
    chat_messages_per_seat_per_minute: int = 30
    # A WebSocket whose client has sent a `ping` promises a heartbeat: silent for longer than
    # this, it is taken for dead (a half-open connection) and closed, so its seat shows absent.
    ws_heartbeat_timeout_s: float = 10.0
    # A waiting round without any seated player (everyone left, the host too) is called off
    # after this many seconds, so abandoned rounds do not pile up in the list. 0: never.
    empty_lobby_grace_s: float = 120.0
    # Shown on the front page so people can call in (empty: not shown), e.g. "+49 30 1234567"
    # and "sip:vollmond@example.org".
    phone_number: str = ""
    sip_address: str = ""
    # How many client addresses/seats each rate limiter remembers; the oldest are forgotten.
    rate_limit_max_keys: int = 10_000
