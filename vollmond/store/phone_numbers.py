"""Proving that a caller number belongs to an account before it is linked (issue 8).

The signed-in web user asks to link a number and is shown a short one-time code (stored only
as a hash); they call in from that number and type the code in the announcer menu. Only then
is the number set on the account's phone identity. The answer to a link request is the same
whether or not the number belongs to someone else, so it reveals nothing.

A From number can be spoofed, so a verification over an ordinary call proves only that the
web user can place a call showing that number: such a number pre-fills the phone ID and nothing
more. A verification over a call whose number a trusted proxy asserted is real proof, and only
such a number may sign in without the PIN. The latest verification at least as strong as the
one before takes the number over (so a squatter can neither keep a number from its owner nor
displace a proxy-verified number with a spoofed call).
"""

from __future__ import annotations

import enum
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import func, select, update

from vollmond.settings import IdentitySettings
from vollmond.store.db import Sessions
from vollmond.store.errors import StoreError
from vollmond.store.hashing import hash_secret, verify_secret
from vollmond.store.models import PhoneIdentityRow, PhoneNumberClaimRow
from vollmond.store.phone import (
    PhoneIdentity,
    ensure_account_identity,
    get_phone_identity,
    normalize_number,
)
from vollmond.store.types import utcnow


class LinkRateLimitedError(StoreError):
    """The account asked to link numbers too often lately."""

    def __init__(self, retry_after_s: float) -> None:
        super().__init__(f"too many link requests; retry in {retry_after_s:.0f} s")
        self.retry_after_s = retry_after_s


@dataclass(frozen=True, slots=True)
class NumberClaim:
    """A pending link: the code to type (shown once, never stored in clear)."""

    number: str
    code: str
    expires_at: datetime


@dataclass(frozen=True, slots=True)
class PendingLink:
    """What the web shows of a pending link: never the code."""

    number: str
    expires_at: datetime


class VerifyOutcome(enum.Enum):
    VERIFIED = "verified"
    # No pending code for this number matched (also: none pending, expired, used up).
    WRONG = "wrong"


@dataclass(frozen=True, slots=True)
class Verification:
    outcome: VerifyOutcome
    identity: PhoneIdentity | None = None


def _new_code(digits: int) -> str:
    return "".join(secrets.choice("0123456789") for _ in range(digits))


async def request_number_link(
    sessions: Sessions,
    account_id: int,
    number: str,
    *,
    settings: IdentitySettings,
    now: datetime | None = None,
) -> NumberClaim:
    """Start linking `number` to the account; the code is to be typed from that number.

    Raises InvalidPhoneNumberError, LinkRateLimitedError. Replaces the account's earlier
    pending codes (only the newest one works)."""
    now = now or utcnow()
    normalized = normalize_number(number)
    since = now - timedelta(seconds=settings.link_window_s)
    await ensure_account_identity(sessions, account_id, settings=settings)
    code = _new_code(settings.code_digits)
    code_hash = await hash_secret(code)
    async with sessions.begin() as session:
        count, oldest = (
            await session.execute(
                select(func.count(), func.min(PhoneNumberClaimRow.created_at)).where(
                    PhoneNumberClaimRow.account_id == account_id,
                    PhoneNumberClaimRow.created_at > since,
                )
            )
        ).one()
        if count >= settings.link_requests:
            if oldest is not None and oldest.tzinfo is None:
                oldest = oldest.replace(tzinfo=now.tzinfo)
            retry = (oldest - since).total_seconds() if oldest is not None else 0.0
            raise LinkRateLimitedError(max(1.0, retry))
        await session.execute(
            update(PhoneNumberClaimRow)
            .where(
                PhoneNumberClaimRow.account_id == account_id,
                PhoneNumberClaimRow.verified_at.is_(None),
                PhoneNumberClaimRow.expires_at > now,
            )
            .values(expires_at=now)
        )
        expires = now + timedelta(seconds=settings.code_ttl_s)
        session.add(
            PhoneNumberClaimRow(
                account_id=account_id,
                number=normalized,
                code_hash=code_hash,
                created_at=now,
                expires_at=expires,
                attempts=0,
            )
        )
    return NumberClaim(normalized, code, expires)


async def pending_link(
    sessions: Sessions, account_id: int, *, now: datetime | None = None
) -> PendingLink | None:
    """The account's pending link, if any (for the web page)."""
    now = now or utcnow()
    async with sessions() as session:
        row = await session.scalar(
            select(PhoneNumberClaimRow)
            .where(
                PhoneNumberClaimRow.account_id == account_id,
                PhoneNumberClaimRow.verified_at.is_(None),
                PhoneNumberClaimRow.expires_at > now,
            )
            .order_by(PhoneNumberClaimRow.id.desc())
            .limit(1)
        )
    return PendingLink(row.number, row.expires_at) if row is not None else None


async def verify_number(
    sessions: Sessions,
    number: str,
    code: str,
    *,
    asserted: bool,
    settings: IdentitySettings,
    now: datetime | None = None,
) -> Verification:
    """The caller from `number` typed `code`: link the number if a pending code matches.

    `asserted`: the number came from a trusted proxy's P-Asserted-Identity (a real proof),
    not from the From header. Every wrong code counts against every pending code for the
    number; a code is void after `code_attempts_per_claim` wrong tries."""
    now = now or utcnow()
    try:
        normalized = normalize_number(number)
    except ValueError:
        return Verification(VerifyOutcome.WRONG)
    async with sessions() as session:
        claims = list(
            await session.scalars(
                select(PhoneNumberClaimRow).where(
                    PhoneNumberClaimRow.number == normalized,
                    PhoneNumberClaimRow.verified_at.is_(None),
                    PhoneNumberClaimRow.expires_at > now,
                    PhoneNumberClaimRow.attempts < settings.code_attempts_per_claim,
                )
            )
        )
    matched = None
    if code.isdigit() and len(code) == settings.code_digits:
        for claim in claims:
            if (await verify_secret(claim.code_hash, code)).ok:
                matched = claim
                break
    if matched is None:
        if claims:
            async with sessions.begin() as session:
                await session.execute(
                    update(PhoneNumberClaimRow)
                    .where(PhoneNumberClaimRow.id.in_([c.id for c in claims]))
                    .values(attempts=PhoneNumberClaimRow.attempts + 1)
                )
        return Verification(VerifyOutcome.WRONG)
    identity = await ensure_account_identity(sessions, matched.account_id, settings=settings)
    async with sessions.begin() as session:
        used = await session.scalar(
            update(PhoneNumberClaimRow)
            .where(PhoneNumberClaimRow.id == matched.id, PhoneNumberClaimRow.verified_at.is_(None))
            .values(verified_at=now)
            .returning(PhoneNumberClaimRow.id)
        )
        if used is None:  # a concurrent call used it first
            return Verification(VerifyOutcome.WRONG)
        holder = await session.scalar(
            select(PhoneIdentityRow).where(PhoneIdentityRow.number == normalized)
        )
        if holder is not None and holder.id != identity.id:
            if holder.number_asserted and not asserted:
                # A proxy-verified number is not taken over by a weaker proof. Same answer
                # as a wrong code: the caller learns nothing about the holder.
                return Verification(VerifyOutcome.WRONG)
            holder.number = None
            holder.number_verified_at = None
            holder.number_asserted = False
            await session.flush()
        await session.execute(
            update(PhoneIdentityRow)
            .where(PhoneIdentityRow.id == identity.id)
            .values(number=normalized, number_verified_at=now, number_asserted=asserted)
        )
    return Verification(VerifyOutcome.VERIFIED, await get_phone_identity(sessions, identity.id))
