"""Browser sessions the server can end (docs/security.md, "Web").

A session id is 256 random bits handed to the browser once, in an HttpOnly cookie; the store
keeps only its SHA-256. Logout deletes the row, so a copied cookie stops working at once, and
expired rows are swept whenever a new session is made.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta

from sqlalchemy import delete, select

from vollmond.store.db import Sessions
from vollmond.store.models import WebSessionRow
from vollmond.store.types import utcnow

#: Longer than any cookie value we hand out, so junk is refused before hashing and querying.
MAX_TOKEN_LENGTH = 128


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


async def open_session(
    sessions: Sessions, account_id: int, max_age_s: int, *, now: datetime | None = None
) -> str:
    """A new session id for the account, valid for `max_age_s` seconds."""
    moment = now or utcnow()
    token = secrets.token_urlsafe(32)
    async with sessions.begin() as session:
        await session.execute(delete(WebSessionRow).where(WebSessionRow.expires_at <= moment))
        session.add(
            WebSessionRow(
                token_hash=_hash(token),
                account_id=account_id,
                created_at=moment,
                expires_at=moment + timedelta(seconds=max_age_s),
            )
        )
    return token


async def session_account(
    sessions: Sessions, token: str, *, now: datetime | None = None
) -> int | None:
    """The account signed in by this session id, or None (unknown, ended or expired)."""
    if not token or len(token) > MAX_TOKEN_LENGTH or not token.isascii() or "\x00" in token:
        return None
    async with sessions() as session:
        row = await session.scalar(
            select(WebSessionRow).where(WebSessionRow.token_hash == _hash(token))
        )
    if row is None or row.expires_at <= (now or utcnow()):
        return None
    return row.account_id


async def close_session(sessions: Sessions, token: str) -> None:
    """End this session (logout, rotation); an unknown id is not an error."""
    if not token or len(token) > MAX_TOKEN_LENGTH:
        return
    async with sessions.begin() as session:
        await session.execute(delete(WebSessionRow).where(WebSessionRow.token_hash == _hash(token)))


async def close_account_sessions(sessions: Sessions, account_id: int) -> int:
    """End every session of the account (password change, a ban); returns how many."""
    async with sessions.begin() as session:
        result = await session.execute(
            delete(WebSessionRow).where(WebSessionRow.account_id == account_id)
        )
    return int(getattr(result, "rowcount", 0) or 0)
