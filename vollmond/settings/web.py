"""What the web entry path trusts and how much it accepts (docs/security.md)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class WebSettings:
    """Limits and trust of the HTTP and WebSocket entry path."""

    # Reverse proxies whose X-Forwarded-For is believed; nobody else's is.
    trusted_proxies: tuple[str, ...] = ()
