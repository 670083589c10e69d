"""How much one address or one seat may do through the web (settings: `WebSettings`).

One `WebLimits` per app, shared by every request and socket, so a seat cannot escape its chat
or alarm budget by opening another tab. Refusals carry a code and a sentence from the
catalogues (``web.*``), in the language the client asked for.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from starlette.requests import HTTPConnection

from vollmond.i18n import text
from vollmond.service.policy import Policy
from vollmond.service.web.ratelimit import RateLimiter
from vollmond.settings import WebSettings
from vollmond.worlds import LANGUAGES, World, get_world

if TYPE_CHECKING:
    from vollmond.service.shards.shared_limits import SharedLimits

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


class LimitTable:
    """This process's limiters by name: sliding windows (`allow`) and ceilings of open
    sockets (`acquire`, `release`). Every process of a service has the same table (from the
    same settings); where the games are sharded, each key is counted by one process
    (`service/shards/shared_limits.py`). An unknown name is a KeyError."""

    def __init__(self) -> None:
        self.rates: dict[str, RateLimiter] = {}
        self.counters: dict[str, ConnectionCounter] = {}

    def allow(self, limit: str, key: str) -> bool:
        return self.rates[limit].allow(key)

    def acquire(self, limit: str, key: str) -> bool:
        return self.counters[limit].acquire(key)

    def release(self, limit: str, key: str) -> None:
        self.counters[limit].release(key)


#: The web's limits (the names other processes are asked about).
CHAT, LOGIN, CODE, SOCKETS = "chat", "login", "code", "sockets"


class WebLimits:
    """The web's budgets: sockets per address, chat per seat, sign-in and sign-up, guest
    and invitation-code attempts per address (operator alarms: moderation's `alarm_limit`,
    the same for every channel). One budget for the whole service: with the games sharded
    over processes, each key is counted by its owner among them (`shared`)."""

    def __init__(self, settings: WebSettings, policy: Policy | None = None) -> None:
        self.settings = settings
        policy = policy or Policy()
        keys = settings.rate_limit_max_keys
        self.table = LimitTable()
        rates = self.table.rates
        rates[CHAT] = RateLimiter(settings.chat_messages_per_seat_per_minute, 60.0, max_keys=keys)
        # Sign-ups, sign-ins and guests (keys "signup:", "login:", "guest:" + address).
        rates[LOGIN] = RateLimiter(policy.login_attempts_per_minute, 60.0, max_keys=keys)
        rates[CODE] = RateLimiter(policy.invitation_attempts_per_minute, 60.0, max_keys=keys)
        self.table.counters[SOCKETS] = ConnectionCounter(settings.ws_connections_per_address)
        #: Set where the games are sharded over processes (the app's lifespan).
        self.shared: SharedLimits | None = None

    async def allow(self, limit: str, key: str) -> bool:
        """One more use of `key` under rate limit `limit` (False: refused)."""
        if self.shared is not None:
            return await self.shared.allow(limit, key)
        return self.table.allow(limit, key)

    async def acquire_socket(self, address: str) -> bool:
        if self.shared is not None:
            return await self.shared.acquire(SOCKETS, address)
        return self.table.acquire(SOCKETS, address)

    def release_socket(self, address: str) -> None:
        if self.shared is not None:
            self.shared.release(SOCKETS, address)
        else:
            self.table.release(SOCKETS, address)

    async def chat_allowed(self, game_id: str, seat: int) -> bool:
        return await self.allow(CHAT, f"{game_id}:{seat}")

    async def close(self) -> None:
        """Stop answering other processes about the keys counted here (the service stops)."""
        if self.shared is not None:
            await self.shared.close()
