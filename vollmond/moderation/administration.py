"""Administrative changes only admins make: roles, grants, password and PIN resets.

Each wraps the store function that already does the change and adds the two things an
operator's action needs: the admin check and an audit entry (written once the change is in).
"""

from __future__ import annotations

import enum
from datetime import datetime, timedelta

from vollmond.moderation import audit
from vollmond.moderation.authority import Staff, load_staff
from vollmond.moderation.errors import NotPermittedError
from vollmond.settings.moderation import ModerationSettings
from vollmond.store import (
    Role,
    add_grant,
    change_password,
    count_admins,
    credit_change,
    get_account,
    grant_premium,
    karma_change,
    set_pin,
    set_role,
)
from vollmond.store.db import Sessions
from vollmond.store.owners import OwnerLike, owner_of

#: The grant that raises one person's private-round size (P2), as the hub reads it.
PRIVATE_SEATS_GRANT = "private_seats"


class GrantKind(enum.StrEnum):
    PREMIUM = "premium"
    CREDIT = "credit"
    KARMA = "karma"
    PRIVATE_SEATS = "private_seats"


async def _admin(sessions: Sessions, settings: ModerationSettings, by: int, action: str) -> Staff:
    async with sessions() as session:
        staff = await load_staff(session, by, settings)
    staff.require("administer", action)
    return staff


async def _audit(
    sessions: Sessions,
    *,
    by: int,
    action: str,
    target_kind: str,
    target_id: object,
    now: datetime,
    detail: str = "",
) -> None:
    async with sessions.begin() as session:
        audit.record(
            session,
            actor=by,
            action=action,
            target_kind=target_kind,
            target_id=target_id,
            now=now,
            detail=detail,
        )


async def change_role(
    sessions: Sessions,
    settings: ModerationSettings,
    account_id: int,
    role: Role,
    *,
    by: int,
    now: datetime,
) -> None:
    """Make someone player, moderator or admin. The last admin cannot be demoted: nobody
    could appoint a new one except by hand in the database."""
    await _admin(sessions, settings, by, "change roles")
    before = (await get_account(sessions, account_id)).role
    if before is Role.ADMIN and role is not Role.ADMIN and await count_admins(sessions) <= 1:
        raise NotPermittedError(by, "demote the last admin")
    await set_role(sessions, account_id, role)
    await _audit(
        sessions,
        by=by,
        action="account.role",
        target_kind="account",
        target_id=account_id,
        now=now,
        detail=f"{before.value} -> {role.value}",
    )


async def grant(
    sessions: Sessions,
    settings: ModerationSettings,
    kind: GrantKind,
    who: OwnerLike,
    *,
    by: int,
    reason: str,
    now: datetime,
    amount: int | None = None,
    duration: timedelta | None = None,
) -> None:
    """Give premium (for `duration`), credit or karma (`amount`, negative to take), or a larger
    private-round size (`amount` seats, optionally for `duration`) to an account or a
    phone-only identity (both have the same ledgers, issue 10)."""
    await _admin(sessions, settings, by, f"grant {kind.value}")
    if kind is GrantKind.PREMIUM:
        if duration is None:
            raise ValueError("premium needs a duration")
        await grant_premium(
            sessions, who, until=now + duration, reason=reason, now=now, granted_by=by
        )
    elif kind is GrantKind.PRIVATE_SEATS:
        if amount is None or amount < 1:
            raise ValueError("private_seats needs a positive number of seats")
        await add_grant(
            sessions,
            who,
            PRIVATE_SEATS_GRANT,
            reason=reason,
            value=amount,
            expires_at=now + duration if duration is not None else None,
            granted_by=by,
            now=now,
        )
    else:
        if amount is None:
            raise ValueError(f"{kind.value} needs an amount")
        book = credit_change if kind is GrantKind.CREDIT else karma_change
        await book(sessions, who, amount, reason, now=now)
    owner = owner_of(who)
    await _audit(
        sessions,
        by=by,
        action=f"grant.{kind.value}",
        target_kind="phone" if owner.is_phone else "account",
        target_id=owner.phone_id if owner.is_phone else owner.account_id,
        now=now,
        detail=f"amount={amount} duration={duration} {reason}",
    )


async def reset_password(
    sessions: Sessions,
    settings: ModerationSettings,
    account_id: int,
    password: str,
    *,
    by: int,
    now: datetime,
) -> None:
    """Set a new password for someone who lost theirs (the admin tells it to them)."""
    await _admin(sessions, settings, by, "reset passwords")
    await change_password(sessions, account_id, password)
    await _audit(
        sessions,
        by=by,
        action="account.reset_password",
        target_kind="account",
        target_id=account_id,
        now=now,
    )


async def reset_pin(
    sessions: Sessions,
    settings: ModerationSettings,
    identity_id: int,
    pin: str,
    *,
    by: int,
    now: datetime,
) -> None:
    """Set a new telephone PIN for a phone identity."""
    await _admin(sessions, settings, by, "reset PINs")
    await set_pin(sessions, identity_id, pin)
    await _audit(
        sessions,
        by=by,
        action="phone.reset_pin",
        target_kind="phone",
        target_id=identity_id,
        now=now,
    )
