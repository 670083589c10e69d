"""Time-limited TURN credentials, as coturn's ``use-auth-secret`` checks them.

The "TURN REST API" scheme (draft-uberti-behave-turn-rest): the user name is
``<expiry unix time>:<name>`` and the password is ``base64(HMAC-SHA1(secret, user name))``.
coturn knows the shared secret (``static-auth-secret``), recomputes the password and refuses a
user name whose expiry has passed. So each page gets its own credential that ends by itself;
no lasting TURN password ever reaches a browser.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TurnCredential:
    username: str
    password: str


def turn_credential(secret: str, name: str, now: float, ttl_s: int) -> TurnCredential:
    """A credential for ``name`` valid until ``now + ttl_s`` (seconds since the epoch).

    >>> turn_credential("s3cret", "g1.2", 1000.0, 60)
    TurnCredential(username='1060:g1.2', password='/xW5x1Rtfqx0Oqp2rtoeA+Tfyd8=')
    """
    username = f"{int(now) + ttl_s}:{name}"
    digest = hmac.new(secret.encode(), username.encode(), hashlib.sha1).digest()
    return TurnCredential(username, base64.b64encode(digest).decode("ascii"))
