"""How much one address or one seat may do through the web (settings: `WebSettings`).

One `WebLimits` per app, shared by every request and socket, so a seat cannot escape its chat
or alarm budget by opening another tab. Refusals carry a code and a sentence from the
catalogues (``web.*``), in the language the client asked for.
"""

from __future__ import annotations

from collections import Counter

from starlette.requests import HTTPConnection

from vollmond.i18n import text
from vollmond.service.web.ratelimit import RateLimiter
from vollmond.settings import WebSettings
from vollmond.worlds import LANGUAGES, World, get_world

#: Refusals outside any game speak with the default world's names.
DEFAULT_WORLD = "werwolf"


def client_address(conn: HTTPConnection) -> str:
    """The client's address (`ClientAddress` has already applied trusted proxies)."""
    return conn.client.host if conn.client else "unknown"


def preferred_language(conn: HTTPConnection) -> str:
    """German unless the browser prefers English (`Accept-Language`), for refusals sent
    before the client has named its language."""
    first = conn.headers.get("accept-language", "").split(",")[0].strip().lower()
    lang = first[:2]
    return lang if lang in LANGUAGES else "de"


def web_text(code: str, lang: str, world: World | None = None) -> str:
    """The catalogue sentence ``web.<code>`` in `lang`."""
    return text(f"web.{code}", lang, world or get_world(DEFAULT_WORLD))


class ConnectionCounter:
    """Open WebSockets per client address, with a ceiling."""

    def __init__(self, per_address: int) -> None:
        self.per_address = per_address
        self._open: Counter[str] = Counter()

    def acquire(self, address: str) -> bool:
        if self._open[address] >= self.per_address:
            return False
        self._open[address] += 1
        return True

    def release(self, address: str) -> None:
        self._open[address] -= 1
        if self._open[address] <= 0:
            del self._open[address]

    def open_from(self, address: str) -> int:
        return self._open[address]


class WebLimits:
    """The web's budgets: sockets per address, chat per seat (operator alarms: moderation's
    `alarm_limit`, the same for every channel)."""

    def __init__(self, settings: WebSettings) -> None:
        self.settings = settings
        keys = settings.rate_limit_max_keys
        self.sockets = ConnectionCounter(settings.ws_connections_per_address)
        self.chat = RateLimiter(settings.chat_messages_per_seat_per_minute, 60.0, max_keys=keys)

    def chat_allowed(self, game_id: str, seat: int) -> bool:
        return self.chat.allow(f"{game_id}:{seat}")
