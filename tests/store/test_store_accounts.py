"""Accounts, passwords, roles and phone identities."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import select

from vollmond.store import (
    AccountNotFoundError,
    InvalidAccountNameError,
    InvalidPhoneNumberError,
    InvalidPinError,
    NameTakenError,
    PhoneIdentityLinkedError,
    PhoneIdentityNotFoundError,
    PhoneNumberTakenError,
    Role,
    Sessions,
    WeakPasswordError,
    change_password,
    count_admins,
    create_account,
    create_admin,
    create_phone_identity,
    find_account,
    get_account,
    identify_caller,
    link_identity,
    link_phone,
    set_pin,
    set_role,
    verify_password,
    verify_pin,
)
from vollmond.store.models import AccountRow, PhoneIdentityRow

PASSWORD = "mondschein-42"


async def test_password_verifies_and_rejects(sessions: Sessions) -> None:
    account = await create_account(sessions, "Anna", PASSWORD)
    assert account.role is Role.PLAYER
    assert await verify_password(sessions, "Anna", PASSWORD) == account
    assert await verify_password(sessions, "Anna", PASSWORD + "x") is None
    assert await verify_password(sessions, "Anna", "") is None
    assert await verify_password(sessions, "Nobody", PASSWORD) is None


async def test_only_an_argon2_hash_is_stored(sessions: Sessions) -> None:
    account = await create_account(sessions, "Bruno", PASSWORD)
    async with sessions() as session:
        stored = await session.scalar(
            select(AccountRow.password_hash).where(AccountRow.id == account.id)
        )
    assert stored is not None
    assert stored.startswith("$argon2id$")
    assert PASSWORD not in stored


async def test_names_are_unique_ignoring_case_and_spaces(sessions: Sessions) -> None:
    await create_account(sessions, "Anna", PASSWORD)
    with pytest.raises(NameTakenError):
        await create_account(sessions, "  aNNA ", "other-password")
    found = await find_account(sessions, "ANNA")
    assert found is not None
    assert found.name == "Anna"
    # The name lookup at login ignores case the same way.
    assert await verify_password(sessions, "anna", PASSWORD) is not None


@pytest.mark.parametrize("name", ["", "   ", "x" * 65, "Anna\u200b", "Tab\tName"])
async def test_bad_names_are_refused(sessions: Sessions, name: str) -> None:
    with pytest.raises(InvalidAccountNameError):
        await create_account(sessions, name, PASSWORD)


@pytest.mark.parametrize("password", ["", "short", "x" * 1025])
async def test_bad_passwords_are_refused(sessions: Sessions, password: str) -> None:
    with pytest.raises(WeakPasswordError):
        await create_account(sessions, "Carla", password)


async def test_change_password(sessions: Sessions) -> None:
    account = await create_account(sessions, "Dora", PASSWORD)
    await change_password(sessions, account.id, "new-password-1")
    assert await verify_password(sessions, "Dora", PASSWORD) is None
    assert await verify_password(sessions, "Dora", "new-password-1") is not None
    with pytest.raises(AccountNotFoundError):
        await change_password(sessions, account.id + 1000, "new-password-1")


async def test_admin_bootstrap_and_roles(sessions: Sessions) -> None:
    assert await count_admins(sessions) == 0
    admin = await create_admin(sessions, "Root", PASSWORD)
    assert admin.role is Role.ADMIN
    assert await count_admins(sessions) == 1
    player = await create_account(sessions, "Emil", PASSWORD)
    promoted = await set_role(sessions, player.id, Role.MODERATOR)
    assert promoted.role is Role.MODERATOR
    assert (await get_account(sessions, player.id)).role is Role.MODERATOR
    with pytest.raises(AccountNotFoundError):
        await get_account(sessions, player.id + 1000)


async def test_caller_is_identified_by_number_in_any_format(sessions: Sessions) -> None:
    account = await create_account(sessions, "Frida", PASSWORD)
    identity = await link_phone(sessions, account.id, number="+49 30 1234-567", pin="4711")
    assert identity.number == "+49301234567"
    assert identity.account_id == account.id
    assert identity.has_pin
    found = await identify_caller(sessions, "+49 (30) 1234567")
    assert found == identity
    assert await identify_caller(sessions, "+49301234568") is None
    assert await identify_caller(sessions, "anonymous") is None


async def test_pin_verifies_and_rejects(sessions: Sessions) -> None:
    identity = await create_phone_identity(sessions, number="0301234567", pin="123456")
    assert await verify_pin(sessions, identity.id, "123456")
    assert not await verify_pin(sessions, identity.id, "123457")
    assert not await verify_pin(sessions, identity.id, "12ab")
    assert not await verify_pin(sessions, identity.id + 1000, "123456")
    await set_pin(sessions, identity.id, "9999")
    assert await verify_pin(sessions, identity.id, "9999")
    assert not await verify_pin(sessions, identity.id, "123456")
    async with sessions() as session:
        stored = await session.scalar(
            select(PhoneIdentityRow.pin_hash).where(PhoneIdentityRow.id == identity.id)
        )
    assert stored is not None
    assert "9999" not in stored


async def test_identity_without_pin_never_verifies(sessions: Sessions) -> None:
    identity = await create_phone_identity(sessions, number="0301111111")
    assert not identity.has_pin
    assert not await verify_pin(sessions, identity.id, "0000")


async def test_phone_first_caller_is_adopted_by_their_account(sessions: Sessions) -> None:
    """Someone who played by phone first keeps that identity when they sign up on the web."""
    identity = await create_phone_identity(sessions, number="0302222222")
    account = await create_account(sessions, "Gustav", PASSWORD)
    linked = await link_phone(sessions, account.id, number="030 222 2222")
    assert linked.id == identity.id
    assert linked.account_id == account.id


async def test_number_of_another_account_cannot_be_taken(sessions: Sessions) -> None:
    first = await create_account(sessions, "Hanna", PASSWORD)
    second = await create_account(sessions, "Ida", PASSWORD)
    await link_phone(sessions, first.id, number="0303333333")
    with pytest.raises(PhoneNumberTakenError):
        await link_phone(sessions, second.id, number="0303333333")
    with pytest.raises(PhoneNumberTakenError):
        await create_phone_identity(sessions, number="0303333333")
    found = await identify_caller(sessions, "0303333333")
    assert found is not None
    assert found.account_id == first.id


async def test_accounts_racing_for_one_number(sessions: Sessions) -> None:
    """Two people claiming the same phone-first identity at once: exactly one gets it."""
    identity = await create_phone_identity(sessions, number="0305555555")
    accounts = [await create_account(sessions, f"Racer{i}", PASSWORD) for i in range(4)]
    results = await asyncio.gather(
        *(link_phone(sessions, a.id, number="0305555555") for a in accounts),
        *(link_identity(sessions, identity.id, a.id) for a in accounts),
        return_exceptions=True,
    )
    winners = {r.account_id for r in results if not isinstance(r, BaseException)}
    losers = [r for r in results if isinstance(r, BaseException)]
    assert len(winners) == 1
    assert all(isinstance(r, PhoneNumberTakenError | PhoneIdentityLinkedError) for r in losers)
    found = await identify_caller(sessions, "0305555555")
    assert found is not None
    assert found.id == identity.id
    assert found.account_id in winners


async def test_pin_only_identity_links_once(sessions: Sessions) -> None:
    first = await create_account(sessions, "Jana", PASSWORD)
    second = await create_account(sessions, "Karl", PASSWORD)
    identity = await create_phone_identity(sessions, pin="2468")
    assert identity.number is None
    linked = await link_identity(sessions, identity.id, first.id)
    assert linked.account_id == first.id
    with pytest.raises(PhoneIdentityLinkedError):
        await link_identity(sessions, identity.id, second.id)
    with pytest.raises(PhoneIdentityNotFoundError):
        await link_identity(sessions, identity.id + 1000, second.id)
    assert (await link_identity(sessions, identity.id, first.id)).account_id == first.id
    own = await link_phone(sessions, second.id, pin="1357")
    assert own.number is None
    assert own.account_id == second.id


async def test_phone_input_is_validated(sessions: Sessions) -> None:
    account = await create_account(sessions, "Lena", PASSWORD)
    with pytest.raises(InvalidPhoneNumberError):
        await link_phone(sessions, account.id, number="call me")
    with pytest.raises(InvalidPinError):
        await link_phone(sessions, account.id, number="0304444444", pin="12")
    with pytest.raises(ValueError, match="number, a PIN or both"):
        await create_phone_identity(sessions)
    with pytest.raises(AccountNotFoundError):
        await link_phone(sessions, account.id + 1000, number="0304444444")
