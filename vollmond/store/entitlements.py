"""Premium periods and personal grants: what unlocks more than the free defaults.

Both are kept as history rows (granted, with reason and granter) rather than a flag, so that
support can answer "why does this person have premium?". They belong to an account or to a
phone-only identity (issue 10; `Owner`, a bare int is an account id).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import ColumnElement, func, or_, select

from vollmond.store._validate import check_aware, check_reason
from vollmond.store.db import Sessions
from vollmond.store.errors import GrantNotFoundError
from vollmond.store.models import GrantRow, PremiumRow
from vollmond.store.owners import (
    Owner,
    OwnerLike,
    owned_by,
    owned_by_any,
    owner_columns,
    require_owner,
    row_owner,
)
from vollmond.store.types import utcnow


@dataclass(frozen=True, slots=True)
class PremiumPeriod:
    """A span of premium status."""

    id: int
    account_id: int | None
    starts_at: datetime
    expires_at: datetime
    reason: str
    granted_by: int | None
    phone_identity_id: int | None = None


@dataclass(frozen=True, slots=True)
class Grant:
    """A personal permission such as a larger seat limit for private rounds."""

    id: int
    account_id: int | None
    name: str
    value: int | None
    reason: str
    granted_by: int | None
    created_at: datetime
    expires_at: datetime | None
    revoked_at: datetime | None
    phone_identity_id: int | None = None


async def _require(sessions: Sessions, who: OwnerLike) -> None:
    async with sessions() as session:
        await require_owner(session, who)


async def grant_premium(
    sessions: Sessions,
    who: OwnerLike,
    *,
    until: datetime,
    reason: str,
    now: datetime | None = None,
    granted_by: int | None = None,
) -> PremiumPeriod:
    """Give premium from `now` until `until`."""
    starts_at = check_aware(now, "now") if now else utcnow()
    if check_aware(until, "until") <= starts_at:
        raise ValueError("premium must end after it starts")
    row = PremiumRow(
        **owner_columns(who),
        starts_at=starts_at,
        expires_at=until,
        reason=check_reason(reason),
        granted_by=granted_by,
        created_at=utcnow(),
    )
    await _require(sessions, who)
    async with sessions.begin() as session:
        session.add(row)
    return _period(row)


def _period(row: PremiumRow) -> PremiumPeriod:
    return PremiumPeriod(
        id=row.id,
        account_id=row.account_id,
        phone_identity_id=row.phone_identity_id,
        starts_at=row.starts_at,
        expires_at=row.expires_at,
        reason=row.reason,
        granted_by=row.granted_by,
    )


async def premium_until(sessions: Sessions, who: OwnerLike, now: datetime) -> datetime | None:
    """When the premium running at `now` ends, or None if there is none."""
    check_aware(now, "now")
    async with sessions() as session:
        return await session.scalar(
            select(func.max(PremiumRow.expires_at)).where(
                owned_by(PremiumRow, who),
                PremiumRow.starts_at <= now,
                PremiumRow.expires_at > now,
            )
        )


async def has_premium(sessions: Sessions, who: OwnerLike, now: datetime) -> bool:
    """Whether premium is active at `now` (explicit, so the service's clock decides)."""
    return await premium_until(sessions, who, now) is not None


def _grant(row: GrantRow) -> Grant:
    return Grant(
        id=row.id,
        account_id=row.account_id,
        phone_identity_id=row.phone_identity_id,
        name=row.name,
        value=row.value,
        reason=row.reason,
        granted_by=row.granted_by,
        created_at=row.created_at,
        expires_at=row.expires_at,
        revoked_at=row.revoked_at,
    )


async def add_grant(
    sessions: Sessions,
    who: OwnerLike,
    name: str,
    *,
    reason: str,
    value: int | None = None,
    expires_at: datetime | None = None,
    granted_by: int | None = None,
    now: datetime | None = None,
) -> Grant:
    """Give one person a named permission, e.g. `add_grant(s, 7, "private_seats", value=16)`."""
    if not name.strip():
        raise ValueError("a grant needs a name")
    row = GrantRow(
        **owner_columns(who),
        name=name.strip(),
        value=value,
        reason=check_reason(reason),
        granted_by=granted_by,
        created_at=now or utcnow(),
        expires_at=expires_at,
        revoked_at=None,
    )
    await _require(sessions, who)
    async with sessions.begin() as session:
        session.add(row)
    return _grant(row)


def _in_force(now: datetime) -> tuple[ColumnElement[bool], ...]:
    """A grant given by `now`, and neither expired nor revoked then."""
    return (
        GrantRow.created_at <= now,
        or_(GrantRow.expires_at.is_(None), GrantRow.expires_at > now),
        or_(GrantRow.revoked_at.is_(None), GrantRow.revoked_at > now),
    )


async def active_grants(
    sessions: Sessions, who: OwnerLike, now: datetime, name: str | None = None
) -> list[Grant]:
    """Grants in force at `now`, optionally only those called `name`, oldest first."""
    check_aware(now, "now")
    query = select(GrantRow).where(owned_by(GrantRow, who), *_in_force(now))
    if name is not None:
        query = query.where(GrantRow.name == name)
    async with sessions() as session:
        rows = await session.scalars(query.order_by(GrantRow.id))
        return [_grant(row) for row in rows]


async def active_grants_each(
    sessions: Sessions, owners: Collection[Owner], now: datetime, name: str
) -> dict[Owner, list[Grant]]:
    """`active_grants` called `name` of several owners in one query."""
    check_aware(now, "now")
    query = select(GrantRow).where(
        owned_by_any(GrantRow, owners), GrantRow.name == name, *_in_force(now)
    )
    out: dict[Owner, list[Grant]] = {}
    async with sessions() as session:
        for row in await session.scalars(query.order_by(GrantRow.id)):
            owner = row_owner(row.account_id, row.phone_identity_id)
            out.setdefault(owner, []).append(_grant(row))
    return out


async def revoke_grant(sessions: Sessions, grant_id: int, *, now: datetime | None = None) -> None:
    """End a grant early; the row stays, with the time it was revoked."""
    async with sessions.begin() as session:
        row = await session.get(GrantRow, grant_id, with_for_update=True)
        if row is None:
            raise GrantNotFoundError(grant_id)
        if row.revoked_at is None:
            row.revoked_at = now or utcnow()
