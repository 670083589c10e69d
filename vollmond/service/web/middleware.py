"""ASGI wrappers at the very edge: who the client is, what a URL may contain, which headers
every answer carries. Each runs before routing, so no handler has to remember them.
"""

from __future__ import annotations

import ipaddress
import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from vollmond.settings import WebSettings

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

#: The policy the static client (vollmond/service/web/static) works under: its own scripts,
#: styles and sockets only, no inline script, no framing by other sites.
CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)


def _networks(addresses: tuple[str, ...]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(a, strict=False) for a in addresses)


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.strip())
    except ValueError:
        return None


class ClientAddress:
    """Believes `X-Forwarded-For`/`-Proto` only from the operator's trusted proxies.

    The client is the rightmost forwarded address that is not itself a trusted proxy: the
    entries left of it were written by the client and prove nothing. Without a trusted proxy
    in front, the TCP peer is the client, whatever headers it sends (run uvicorn with its own
    proxy handling off, as `vollmond serve` does).
    """

    def __init__(self, app: ASGIApp, trusted_proxies: tuple[str, ...]) -> None:
        self.app = app
        self.trusted = _networks(trusted_proxies)

    def _is_trusted(self, host: str) -> bool:
        ip = _ip(host)
        return ip is not None and any(ip in net for net in self.trusted)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        client = scope.get("client")
        if scope["type"] in ("http", "websocket") and client and self._is_trusted(client[0]):
            headers = dict(scope.get("headers") or [])
            forwarded = headers.get(b"x-forwarded-for", b"").decode("latin-1")
            hops = [h.strip() for h in forwarded.split(",") if h.strip()]
            while hops and self._is_trusted(hops[-1]):
                hops.pop()
            if hops and _ip(hops[-1]) is not None:
                scope = {**scope, "client": (hops[-1], 0)}
            proto = headers.get(b"x-forwarded-proto", b"").decode("latin-1").split(",")[-1]
            proto = proto.strip().lower()
            if proto in ("http", "https"):
                secure = proto == "https"
                if scope["type"] == "websocket":
                    scope = {**scope, "scheme": "wss" if secure else "ws"}
                else:
                    scope = {**scope, "scheme": proto}
        await self.app(scope, receive, send)


def _has_control(text: str) -> bool:
    return any(ord(c) < 0x20 or ord(c) == 0x7F for c in text)


class RejectControlCharacters:
    """A NUL (or other control character) in a path or query is refused before routing:
    PostgreSQL cannot store NUL in text, and no id, name or parameter of ours contains one."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        query = bytes(scope.get("query_string", b"")).lower()
        if _has_control(scope.get("path", "")) or b"%00" in query or b"\x00" in query:
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
                return
            body = json.dumps(
                {"error": "bad_url", "message": "the address contains a control character"}
            ).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 400,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(body)).encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)


class SecurityHeaders:
    """CSP, nosniff, no framing and no referrer on every answer; HSTS when served by HTTPS."""

    def __init__(self, app: ASGIApp, settings: WebSettings) -> None:
        self.app = app
        self.settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = [
            (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
            (b"x-content-type-options", b"nosniff"),
            (b"x-frame-options", b"DENY"),
            (b"referrer-policy", b"no-referrer"),
        ]
        if self.settings.https or scope.get("scheme") == "https":
            hsts = f"max-age={self.settings.hsts_max_age_s}; includeSubDomains"
            extra.append((b"strict-transport-security", hsts.encode()))

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {k.lower() for k, _ in message.get("headers", [])}
                headers = list(message.get("headers", []))
                headers += [(k, v) for k, v in extra if k not in present]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)
