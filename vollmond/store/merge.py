"""Merging a phone-only identity's ledgers into the account it is linked to (issue 10).

Once, when the identity is linked (the UPDATE that sets its account, `store.phone`), and in
the same transaction: each ledger with a balance gets a closing entry on the phone side and a
transfer entry on the account side, both with the reason `MERGED_PHONE`; running premium
periods and grants are given again to the account with that reason. Nothing is updated or
deleted: the phone side's history stays, and ends in its closing entry. The audit log names
the phone ID, the account and what moved.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from vollmond.store.audit import record
from vollmond.store.credit import book_credit, credit_held
from vollmond.store.karma import book_karma, karma_sum
from vollmond.store.models import GrantRow, PremiumRow
from vollmond.store.owners import Owner, owned_by, owner_columns

MERGED_PHONE = "merged_phone"
"""The reason code of both sides' entries; the catalogues name it (karma.reason.merged_phone)."""
MERGE_ACTION = "phone_ledgers_merged"
"""The audit log's action (target: the phone identity)."""


@dataclass(frozen=True, slots=True)
class Merged:
    """What moved from the phone identity to the account."""

    karma: int
    credit: int
    premium_periods: int
    grants: int


async def merge_phone_ledgers(
    session: AsyncSession, phone_id: int, account_id: int, now: datetime
) -> Merged:
    """Move the phone identity's balances to the account inside the caller's transaction.

    The caller calls this only for the link itself (the identity had no account before), so a
    second link of the same identity never merges again."""
    phone, account = Owner.phone(phone_id), Owner.account(account_id)
    karma = await karma_sum(session, phone)
    if karma:
        book_karma(session, phone, -karma, MERGED_PHONE, now=now)
        book_karma(session, account, karma, MERGED_PHONE, now=now)
    credit = await credit_held(session, phone)
    if credit:
        await book_credit(session, phone, -credit, MERGED_PHONE, now=now)
        await book_credit(session, account, credit, MERGED_PHONE, now=now)
    periods = list(
        await session.scalars(
            select(PremiumRow).where(owned_by(PremiumRow, phone), PremiumRow.expires_at > now)
        )
    )
    for period in periods:
        session.add(
            PremiumRow(
                **owner_columns(account),
                starts_at=period.starts_at,
                expires_at=period.expires_at,
                reason=MERGED_PHONE,
                granted_by=period.granted_by,
                created_at=now,
            )
        )
    grants = list(
        await session.scalars(
            select(GrantRow).where(
                owned_by(GrantRow, phone),
                GrantRow.revoked_at.is_(None),
                or_(GrantRow.expires_at.is_(None), GrantRow.expires_at > now),
            )
        )
    )
    for grant in grants:
        session.add(
            GrantRow(
                **owner_columns(account),
                name=grant.name,
                value=grant.value,
                reason=MERGED_PHONE,
                granted_by=grant.granted_by,
                created_at=now,
                expires_at=grant.expires_at,
                revoked_at=None,
            )
        )
    merged = Merged(karma, credit, len(periods), len(grants))
    record(
        session,
        actor=account_id,
        action=MERGE_ACTION,
        target_kind="phone",
        target_id=phone_id,
        now=now,
        detail=(
            f"account={account_id} karma={karma} credit={credit} "
            f"premium_periods={len(periods)} grants={len(grants)}"
        ),
    )
    return merged
