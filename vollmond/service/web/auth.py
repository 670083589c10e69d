"""Sessions in HttpOnly SameSite cookies that the server can end, and CSRF by double submit.

The session cookie carries a random session id; the store keeps its hash and the account
(`vollmond.store.websessions`), so logout ends the session on the server, not only in the
browser that logged out: a copied cookie is worthless afterwards. Every sign-in gets a fresh id
(the one the browser brought is ended), and sign-in and logout also hand out a fresh CSRF
token, so nothing a page learnt before carries over to the next person at the same browser.

The CSRF cookie is readable by the page, which must echo it in the `X-CSRF-Token` header of
every state-changing request, which a foreign site cannot do. A browser without one gets it
with the HTML page itself, before any of the page's scripts run: were it handed out only by
the API, the page's first requests, sent in parallel without a cookie, would each bring back a
different token, and a form sent meanwhile could echo one token while its request carried the
next (the browser tests saw "the page is outdated" on sign-up under load).
"""

from __future__ import annotations

import hmac
import secrets

from starlette.datastructures import MutableHeaders
from starlette.requests import HTTPConnection
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from vollmond.settings import WebSettings
from vollmond.store import Sessions as StoreSessions
from vollmond.store.websessions import close_session, open_session, session_account

SESSION_COOKIE = "vollmond_session"
CSRF_COOKIE = "vollmond_csrf"
CSRF_HEADER = "x-csrf-token"
#: Where the session middleware leaves the signed-in account id for this request.
ACCOUNT_SCOPE_KEY = "vollmond.account_id"


class Sessions:
    """Sign-in, sign-out and the current account; `store` is set once the store is open."""

    def __init__(self, settings: WebSettings, store: StoreSessions | None = None) -> None:
        self.settings = settings
        self.store = store

    def secure(self, conn: HTTPConnection) -> bool:
        return self.settings.https or conn.url.scheme in ("https", "wss")

    async def login(self, request: HTTPConnection, response: Response, account_id: int) -> None:
        """Sign in: end the session the browser brought (no fixation), open a new one."""
        assert self.store is not None
        old = request.cookies.get(SESSION_COOKIE)
        if old:
            await close_session(self.store, old)
        token = await open_session(self.store, account_id, self.settings.session_max_age_s)
        response.set_cookie(
            SESSION_COOKIE,
            token,
            max_age=self.settings.session_max_age_s,
            httponly=True,
            samesite="strict",
            secure=self.secure(request),
        )
        self._new_csrf(request, response)

    async def logout(self, request: HTTPConnection, response: Response) -> None:
        """Sign out: the session ends on the server, the cookies are replaced."""
        assert self.store is not None
        token = request.cookies.get(SESSION_COOKIE)
        if token:
            await close_session(self.store, token)
        response.delete_cookie(
            SESSION_COOKIE, httponly=True, samesite="strict", secure=self.secure(request)
        )
        self._new_csrf(request, response)

    async def resolve(self, conn: HTTPConnection) -> int | None:
        """Look the session cookie up in the store (once per request, by the middleware)."""
        raw = conn.cookies.get(SESSION_COOKIE)
        if not raw or self.store is None:
            return None
        return await session_account(self.store, raw)

    @staticmethod
    def account_id(conn: HTTPConnection) -> int | None:
        """The signed-in account of this request (resolved by `SessionMiddleware`)."""
        value = conn.scope.get(ACCOUNT_SCOPE_KEY)
        return value if isinstance(value, int) else None

    def ensure_csrf(self, response: Response, current: str | None, conn: HTTPConnection) -> str:
        fresh = (CSRF_COOKIE + "=").encode()
        if any(k == b"set-cookie" and v.startswith(fresh) for k, v in response.raw_headers):
            return current or ""  # login/logout already handed out a fresh one
        token = current or secrets.token_urlsafe(24)
        if current is None:
            self._set_csrf(conn, response, token)
        return token

    def _new_csrf(self, conn: HTTPConnection, response: Response) -> None:
        self._set_csrf(conn, response, secrets.token_urlsafe(24))

    def _set_csrf(self, conn: HTTPConnection, response: Response, token: str) -> None:
        response.set_cookie(
            CSRF_COOKIE,
            token,
            max_age=self.settings.session_max_age_s,
            samesite="strict",
            secure=self.secure(conn),
        )

    def csrf_set_cookie(self, conn: HTTPConnection) -> str:
        """A `Set-Cookie` value with a fresh CSRF token, for answers that are not a `Response`
        built by a handler (the static HTML pages)."""
        carrier = Response()
        self._new_csrf(conn, carrier)
        return carrier.headers["set-cookie"]

    @staticmethod
    def csrf_ok(conn: HTTPConnection) -> bool:
        cookie = conn.cookies.get(CSRF_COOKIE, "")
        header = conn.headers.get(CSRF_HEADER, "")
        return bool(cookie) and hmac.compare_digest(cookie.encode(), header.encode())


class SessionMiddleware:
    """Resolves the session cookie of each HTTP request and WebSocket into an account id, and
    hands a browser without a CSRF token one with the HTML page it loads."""

    def __init__(self, app: ASGIApp, sessions: Sessions) -> None:
        self.app = app
        self.sessions = sessions

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # Static files need no account: only the API and the socket look the session up.
        path = scope.get("path", "")
        if scope["type"] in ("http", "websocket") and path.startswith(("/api/", "/ws")):
            scope[ACCOUNT_SCOPE_KEY] = await self.sessions.resolve(HTTPConnection(scope))
        elif scope["type"] == "http" and scope.get("method") == "GET":
            conn = HTTPConnection(scope)
            if CSRF_COOKIE not in conn.cookies:
                send = self._with_csrf_on_html(conn, send)
        await self.app(scope, receive, send)

    def _with_csrf_on_html(self, conn: HTTPConnection, send: Send) -> Send:
        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                if headers.get("content-type", "").startswith("text/html"):
                    headers.append("set-cookie", self.sessions.csrf_set_cookie(conn))
            await send(message)

        return sending
