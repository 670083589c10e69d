"""Phone-only identities keep ledgers of their own, and linking one to an account merges them
once, audited, in the link's transaction (issue 10) — on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import insert, text
from sqlalchemy.exc import DBAPIError, IntegrityError

from vollmond.moderation.audit import audit_log
from vollmond.store import (
    PhoneIdentityLinkedError,
    Sessions,
    active_grants,
    add_grant,
    create_account,
    create_phone_identity,
    credit_balance,
    credit_change,
    credit_history,
    grant_premium,
    has_premium,
    karma_change,
    karma_history,
    karma_total,
    link_identity,
)
from vollmond.store.merge import MERGE_ACTION, MERGED_PHONE
from vollmond.store.models import KarmaEntryRow
from vollmond.store.owners import Owner

PASSWORD = "mondschein-42"


async def test_a_link_merges_the_phone_ledgers_once_and_audited(sessions: Sessions) -> None:
    account = await create_account(sessions, "Merle", PASSWORD)
    other = await create_account(sessions, "Otto", PASSWORD)
    await karma_change(sessions, account.id, 5, "game_stayed")
    identity = await create_phone_identity(sessions, pin="2468")
    phone = Owner.phone(identity.id)
    await karma_change(sessions, phone, 30, "game_won")
    await karma_change(sessions, phone, -4, "idle_removal")
    await credit_change(sessions, phone, 25, "Gutschrift")
    now = datetime.now(UTC)
    await grant_premium(sessions, phone, until=now + timedelta(days=5), reason="Test")
    await add_grant(
        sessions, phone, "karma_unlock", reason="Test", value=15, expires_at=now + timedelta(days=2)
    )

    linked = await link_identity(sessions, identity.id, account.id)
    assert linked.account_id == account.id
    # The balances moved: the phone side is closed, the account holds both.
    assert await karma_total(sessions, phone) == 0
    assert await karma_total(sessions, account.id) == 5 + 26
    assert await credit_balance(sessions, phone) == 0
    assert await credit_balance(sessions, account.id) == 25
    assert await has_premium(sessions, account.id, now + timedelta(days=1))
    moved = await active_grants(sessions, account.id, now + timedelta(hours=1), "karma_unlock")
    assert [(g.value, g.reason) for g in moved] == [(15, MERGED_PHONE)]
    # Both histories show it, newest first; the phone side keeps what it earned.
    phone_karma = await karma_history(sessions, phone)
    assert [(e.reason, e.amount) for e in phone_karma] == [
        (MERGED_PHONE, -26),
        ("idle_removal", -4),
        ("game_won", 30),
    ]
    assert [(e.reason, e.amount) for e in (await karma_history(sessions, account.id))[:1]] == [
        (MERGED_PHONE, 26)
    ]
    closing = (await credit_history(sessions, phone))[0]
    assert (closing.reason, closing.amount, closing.balance_after) == (MERGED_PHONE, -25, 0)
    assert [(e.reason, e.amount) for e in await credit_history(sessions, account.id)] == [
        (MERGED_PHONE, 25)
    ]
    # The audit row names the phone ID and what moved.
    audited = await audit_log(sessions, target_kind="phone", target_id=identity.id)
    assert [(a.action, a.actor_account_id) for a in audited] == [(MERGE_ACTION, account.id)]
    assert "karma=26" in audited[0].detail and "credit=25" in audited[0].detail

    # Linking again (the same account) merges nothing a second time; another account may not.
    await karma_change(sessions, phone, 3, "game_stayed")  # however it came there
    assert (await link_identity(sessions, identity.id, account.id)).account_id == account.id
    with pytest.raises(PhoneIdentityLinkedError):
        await link_identity(sessions, identity.id, other.id)
    assert await karma_total(sessions, account.id) == 31
    assert await credit_balance(sessions, account.id) == 25
    assert len(await audit_log(sessions, target_kind="phone", target_id=identity.id)) == 1
    assert await karma_total(sessions, other.id) == 0


async def test_an_empty_phone_ledger_links_without_entries(sessions: Sessions) -> None:
    account = await create_account(sessions, "Leer", PASSWORD)
    identity = await create_phone_identity(sessions, pin="1357")
    await link_identity(sessions, identity.id, account.id)
    assert await karma_history(sessions, account.id) == []
    assert await credit_history(sessions, Owner.phone(identity.id)) == []
    audited = await audit_log(sessions, target_kind="phone", target_id=identity.id)
    assert [a.detail for a in audited] == [
        f"account={account.id} karma=0 credit=0 premium_periods=0 grants=0"
    ]


async def test_a_ledger_row_has_exactly_one_owner_and_stays_append_only(
    sessions: Sessions,
) -> None:
    account = await create_account(sessions, "Eins", PASSWORD)
    identity = await create_phone_identity(sessions)
    for owners in (
        {"account_id": None, "phone_identity_id": None},
        {"account_id": account.id, "phone_identity_id": identity.id},
    ):
        with pytest.raises(IntegrityError):
            async with sessions.begin() as session:
                await session.execute(
                    insert(KarmaEntryRow).values(
                        amount=1, reason="x", created_at=datetime.now(UTC), **owners
                    )
                )
    entry = await karma_change(sessions, Owner.phone(identity.id), 2, "game_stayed")
    for statement in (
        f"UPDATE karma_ledger SET amount = 9 WHERE id = {entry.id}",
        f"DELETE FROM karma_ledger WHERE id = {entry.id}",
    ):
        with pytest.raises(DBAPIError, match="append-only"):
            async with sessions.begin() as session:
                await session.execute(text(statement))
    with pytest.raises(ValueError):
        Owner(account_id=1, phone_id=2)
