"""Sessions in signed HttpOnly SameSite cookies, and CSRF by double submit.

The session cookie carries only the account id, signed and time-limited; the CSRF cookie is
readable by the page, which must echo it in the `X-CSRF-Token` header of every state-changing
request, which a foreign site cannot do.
"""

from __future__ import annotations

import hmac
import secrets

from itsdangerous import BadSignature, URLSafeTimedSerializer
from starlette.requests import HTTPConnection
from starlette.responses import Response

SESSION_COOKIE = "vollmond_session"
CSRF_COOKIE = "vollmond_csrf"
CSRF_HEADER = "x-csrf-token"
SESSION_MAX_AGE_S = 14 * 24 * 3600


class Sessions:
    def __init__(self, secret: str, *, secure: bool = False) -> None:
        self._signer = URLSafeTimedSerializer(secret, salt="vollmond-session")
        self.secure = secure

    def login(self, response: Response, account_id: int) -> None:
        response.set_cookie(
            SESSION_COOKIE,
            self._signer.dumps({"a": account_id}),
            max_age=SESSION_MAX_AGE_S,
            httponly=True,
            samesite="strict",
            secure=self.secure,
        )

    def logout(self, response: Response) -> None:
        response.delete_cookie(SESSION_COOKIE)

    def account_id(self, conn: HTTPConnection) -> int | None:
        raw = conn.cookies.get(SESSION_COOKIE)
        if not raw:
            return None
        try:
            data = self._signer.loads(raw, max_age=SESSION_MAX_AGE_S)
        except BadSignature:
            return None
        value = data.get("a") if isinstance(data, dict) else None
        return value if isinstance(value, int) else None

    def ensure_csrf(self, response: Response, current: str | None) -> str:
        token = current or secrets.token_urlsafe(24)
        if current is None:
            response.set_cookie(
                CSRF_COOKIE, token, max_age=SESSION_MAX_AGE_S, samesite="strict", secure=self.secure
            )
        return token

    @staticmethod
    def csrf_ok(conn: HTTPConnection) -> bool:
        cookie = conn.cookies.get(CSRF_COOKIE, "")
        header = conn.headers.get(CSRF_HEADER, "")
        return bool(cookie) and hmac.compare_digest(cookie, header)
