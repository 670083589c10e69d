"""Phone identities (issue 8): random phone IDs, numbers linked only by a one-time code, the
PIN lockout per identity and the limit per source — on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from sqlalchemy import insert, select

from vollmond.settings import IdentitySettings
from vollmond.store import (
    AccountNotFoundError,
    InvalidPhoneNumberError,
    InvalidPinError,
    PhoneIdentityLinkedError,
    PhoneIdentityNotFoundError,
    PinOutcome,
    Sessions,
    account_identity,
    check_pin,
    create_account,
    create_phone_identity,
    identify_caller,
    link_identity,
    request_number_link,
    set_account_pin,
    set_pin,
    verify_number,
    verify_pin,
)
from vollmond.store.models import PhoneIdentityRow, PhoneNumberClaimRow
from vollmond.store.phone import (
    get_phone_identity,
    identify_asserted,
    lockout_duration,
    set_expert,
)
from vollmond.store.phone_numbers import LinkRateLimitedError, VerifyOutcome, pending_link
from vollmond.store.types import utcnow

PASSWORD = "mondschein-42"
S = IdentitySettings()


async def test_new_phone_ids_are_random_and_old_sequential_ids_keep_working(
    sessions: Sessions,
) -> None:
    made = [await create_phone_identity(sessions, pin="4711") for _ in range(6)]
    ids = [identity.id for identity in made]
    assert all(len(str(i)) == S.phone_id_digits for i in ids)
    assert len(set(ids)) == len(ids)
    assert sorted(ids) != list(range(min(ids), min(ids) + len(ids)))  # not a sequence
    # An identity from before (sequential id 3, as the old schema made them) still signs in.
    async with sessions.begin() as session:
        await session.execute(
            insert(PhoneIdentityRow).values(
                id=3, created_at=utcnow(), number_asserted=False, pin_failures=0, lockouts=0
            )
        )
    await set_pin(sessions, 3, "1357")
    assert await verify_pin(sessions, 3, "1357")
    checked = await check_pin(sessions, 3, "1357", source="ip:192.0.2.1", settings=S)
    assert checked.outcome is PinOutcome.OK and checked.identity is not None
    assert checked.identity.id == 3


async def test_pin_verifies_and_rejects(sessions: Sessions) -> None:
    identity = await create_phone_identity(sessions, pin="123456")
    assert await verify_pin(sessions, identity.id, "123456")
    assert not await verify_pin(sessions, identity.id, "123457")
    assert not await verify_pin(sessions, identity.id, "12ab")
    assert not await verify_pin(sessions, identity.id + 1, "123456")
    await set_pin(sessions, identity.id, "9999")
    assert await verify_pin(sessions, identity.id, "9999")
    assert not await verify_pin(sessions, identity.id, "123456")
    async with sessions() as session:
        stored = await session.scalar(
            select(PhoneIdentityRow.pin_hash).where(PhoneIdentityRow.id == identity.id)
        )
    assert stored is not None and "9999" not in stored
    with pytest.raises(InvalidPinError):
        await create_phone_identity(sessions, pin="12")


async def test_a_number_is_linked_only_by_its_code(sessions: Sessions) -> None:
    account = await create_account(sessions, "Frida", PASSWORD)
    claim = await request_number_link(sessions, account.id, "+49 30 1234-567", settings=S)
    assert claim.number == "+49301234567"
    assert len(claim.code) == S.code_digits and claim.code.isdigit()
    # Pending: the number does nothing yet (no pre-fill, no sign-in).
    assert await identify_caller(sessions, "+49301234567") is None
    pending = await pending_link(sessions, account.id)
    assert pending is not None and pending.number == "+49301234567"
    # The code is kept only as a hash.
    async with sessions() as session:
        stored = await session.scalar(select(PhoneNumberClaimRow.code_hash))
    assert stored is not None and claim.code not in stored
    wrong = "0" * S.code_digits if claim.code != "0" * S.code_digits else "1" * S.code_digits
    assert (
        await verify_number(sessions, "+49301234567", wrong, asserted=False, settings=S)
    ).outcome is VerifyOutcome.WRONG
    # The right code from another number does not link either.
    assert (
        await verify_number(sessions, "+49301234568", claim.code, asserted=False, settings=S)
    ).outcome is VerifyOutcome.WRONG
    verified = await verify_number(
        sessions, "+49 (30) 1234567", claim.code, asserted=False, settings=S
    )
    assert verified.outcome is VerifyOutcome.VERIFIED and verified.identity is not None
    assert verified.identity.account_id == account.id
    found = await identify_caller(sessions, "+49 (30) 1234567")
    assert found is not None and found.id == verified.identity.id
    assert not found.number_asserted
    assert await identify_asserted(sessions, "+49301234567") is None  # From-verified only
    assert await identify_caller(sessions, "anonymous") is None
    assert await pending_link(sessions, account.id) is None
    # A code works once.
    assert (
        await verify_number(sessions, "+49301234567", claim.code, asserted=False, settings=S)
    ).outcome is VerifyOutcome.WRONG


async def test_a_link_request_answers_alike_whether_or_not_the_number_is_taken(
    sessions: Sessions,
) -> None:
    owner = await create_account(sessions, "Hanna", PASSWORD)
    other = await create_account(sessions, "Ida", PASSWORD)
    claim = await request_number_link(sessions, owner.id, "0303333333", settings=S)
    await verify_number(sessions, "0303333333", claim.code, asserted=False, settings=S)
    taken = await request_number_link(sessions, other.id, "0303333333", settings=S)
    free = await request_number_link(sessions, other.id, "0304444444", settings=S)
    assert type(taken) is type(free)
    assert (taken.number, len(taken.code)) == ("0303333333", S.code_digits)
    assert (taken.expires_at - utcnow()) > timedelta(seconds=S.code_ttl_s - 60)
    found = await identify_caller(sessions, "0303333333")
    assert found is not None and found.account_id == owner.id


async def test_a_proxy_verified_number_is_not_taken_over_by_a_spoofed_call(
    sessions: Sessions,
) -> None:
    owner = await create_account(sessions, "Karl", PASSWORD)
    squatter = await create_account(sessions, "Mallory", PASSWORD)
    # Mallory links Karl's number by a call with a spoofed From: it pre-fills her ID, no more.
    spoofed = await request_number_link(sessions, squatter.id, "0305555555", settings=S)
    await verify_number(sessions, "0305555555", spoofed.code, asserted=False, settings=S)
    assert await identify_asserted(sessions, "0305555555") is None
    # Karl proves it through the trusted proxy: the number is his, and signs in by itself.
    real = await request_number_link(sessions, owner.id, "0305555555", settings=S)
    verified = await verify_number(sessions, "0305555555", real.code, asserted=True, settings=S)
    assert verified.outcome is VerifyOutcome.VERIFIED
    asserted = await identify_asserted(sessions, "0305555555")
    assert asserted is not None and asserted.account_id == owner.id
    mallory = await account_identity(sessions, squatter.id)
    assert mallory is not None and mallory.number is None
    # Spoofing again cannot take it back.
    again = await request_number_link(sessions, squatter.id, "0305555555", settings=S)
    lost = await verify_number(sessions, "0305555555", again.code, asserted=False, settings=S)
    assert lost.outcome is VerifyOutcome.WRONG
    holder = await identify_caller(sessions, "0305555555")
    assert holder is not None and holder.account_id == owner.id


async def test_link_requests_are_rate_limited_per_account(sessions: Sessions) -> None:
    account = await create_account(sessions, "Lena", PASSWORD)
    other = await create_account(sessions, "Mia", PASSWORD)
    settings = IdentitySettings(link_requests=3, link_window_s=3600)
    now = utcnow()
    for i in range(3):
        await request_number_link(sessions, account.id, f"030100{i}", settings=settings, now=now)
    with pytest.raises(LinkRateLimitedError) as limited:
        await request_number_link(sessions, account.id, "0301009", settings=settings, now=now)
    assert 3500 < limited.value.retry_after_s <= 3600
    await request_number_link(sessions, other.id, "0301009", settings=settings, now=now)
    later = now + timedelta(seconds=3601)
    await request_number_link(sessions, account.id, "0301009", settings=settings, now=later)
    with pytest.raises(InvalidPhoneNumberError):
        await request_number_link(sessions, other.id, "call me", settings=S)
    with pytest.raises(AccountNotFoundError):
        await request_number_link(sessions, other.id + 1000, "0301009", settings=S)


async def test_a_code_dies_after_too_many_wrong_tries_and_when_it_expires(
    sessions: Sessions,
) -> None:
    account = await create_account(sessions, "Nora", PASSWORD)
    claim = await request_number_link(sessions, account.id, "0306666666", settings=S)
    wrong = f"{(int(claim.code) + 1) % 10**S.code_digits:0{S.code_digits}d}"
    for _ in range(S.code_attempts_per_claim):
        await verify_number(sessions, "0306666666", wrong, asserted=False, settings=S)
    used_up = await verify_number(sessions, "0306666666", claim.code, asserted=False, settings=S)
    assert used_up.outcome is VerifyOutcome.WRONG
    fresh = await request_number_link(sessions, account.id, "0306666666", settings=S)
    late = utcnow() + timedelta(seconds=S.code_ttl_s + 1)
    expired = await verify_number(
        sessions, "0306666666", fresh.code, asserted=False, settings=S, now=late
    )
    assert expired.outcome is VerifyOutcome.WRONG
    assert await identify_caller(sessions, "0306666666") is None


async def test_five_wrong_pins_lock_the_identity_for_growing_times(sessions: Sessions) -> None:
    identity = await create_phone_identity(sessions, pin="2468")
    now = utcnow()
    source = "ip:192.0.2.5"

    async def attempt(pin: str, at: timedelta) -> PinOutcome:
        checked = await check_pin(
            sessions, identity.id, pin, source=source, settings=S, now=now + at
        )
        return checked.outcome

    outcomes = [await attempt("0000", timedelta(seconds=i)) for i in range(S.lockout_failures)]
    assert outcomes == [PinOutcome.WRONG] * (S.lockout_failures - 1) + [PinOutcome.LOCKED_NOW]
    # Locked: even the right PIN is not looked at.
    assert await attempt("2468", timedelta(minutes=14)) is PinOutcome.LOCKED
    # The second lockout in a row lasts twice as long.
    first_end = timedelta(seconds=S.lockout_failures - 1) + lockout_duration(1, S)
    base = first_end + timedelta(seconds=1)
    for i in range(S.lockout_failures):
        await attempt("0000", base + timedelta(seconds=i))
    locked = await check_pin(
        sessions,
        identity.id,
        "2468",
        source=source,
        settings=S,
        now=now + base + timedelta(minutes=20),
    )
    assert locked.outcome is PinOutcome.LOCKED and locked.until is not None
    assert locked.until - (now + base) > timedelta(minutes=29)
    # After it ends, the right PIN works and resets the count.
    assert await attempt("2468", base + timedelta(minutes=31)) is PinOutcome.OK
    assert lockout_duration(2, S) == 2 * lockout_duration(1, S)
    assert lockout_duration(50, S) == timedelta(seconds=S.lockout_max_s)


async def test_wrong_pins_from_one_source_are_limited_across_identities(
    sessions: Sessions,
) -> None:
    settings = IdentitySettings(source_failures=6, source_window_s=600, lockout_failures=5)
    victims = [await create_phone_identity(sessions, pin="7777") for _ in range(3)]
    now = utcnow()
    for i in range(6):  # two wrong PINs each for three IDs: none is locked
        victim = victims[i % 3]
        checked = await check_pin(
            sessions, victim.id, "0000", source="ip:198.51.100.9", settings=settings, now=now
        )
        assert checked.outcome is PinOutcome.WRONG
    blocked = await check_pin(
        sessions, victims[0].id, "7777", source="ip:198.51.100.9", settings=settings, now=now
    )
    assert blocked.outcome is PinOutcome.SOURCE_BLOCKED
    assert blocked.until is not None and blocked.until > now
    other = await check_pin(
        sessions, victims[0].id, "7777", source="ip:203.0.113.1", settings=settings, now=now
    )
    assert other.outcome is PinOutcome.OK
    later = now + timedelta(seconds=601)
    again = await check_pin(
        sessions, victims[1].id, "7777", source="ip:198.51.100.9", settings=settings, now=later
    )
    assert again.outcome is PinOutcome.OK


async def test_concurrent_wrong_pins_are_all_counted(sessions: Sessions) -> None:
    identity = await create_phone_identity(sessions, pin="1212")
    results = await asyncio.gather(
        *(
            check_pin(sessions, identity.id, "0000", source=f"ip:192.0.2.{i}", settings=S)
            for i in range(S.lockout_failures)
        )
    )
    assert sum(r.outcome is PinOutcome.LOCKED_NOW for r in results) == 1
    locked = await check_pin(sessions, identity.id, "1212", source="ip:192.0.2.99", settings=S)
    assert locked.outcome is PinOutcome.LOCKED


async def test_the_account_pin_and_identity(sessions: Sessions) -> None:
    account = await create_account(sessions, "Olga", PASSWORD)
    assert await account_identity(sessions, account.id) is None
    identity = await set_account_pin(sessions, account.id, "3141")
    assert identity.account_id == account.id and identity.has_pin
    again = await set_account_pin(sessions, account.id, "2718")
    assert again.id == identity.id
    assert await verify_pin(sessions, identity.id, "2718")
    with pytest.raises(InvalidPinError):
        await set_account_pin(sessions, account.id, "12")


async def test_pin_only_identity_links_once(sessions: Sessions) -> None:
    first = await create_account(sessions, "Jana", PASSWORD)
    second = await create_account(sessions, "Karla", PASSWORD)
    identity = await create_phone_identity(sessions, pin="2468")
    assert identity.number is None
    linked = await link_identity(sessions, identity.id, first.id)
    assert linked.account_id == first.id
    with pytest.raises(PhoneIdentityLinkedError):
        await link_identity(sessions, identity.id, second.id)
    with pytest.raises(PhoneIdentityNotFoundError):
        await link_identity(sessions, identity.id + 1, second.id)
    assert (await link_identity(sessions, identity.id, first.id)).account_id == first.id


async def test_expert_mode_is_kept_with_the_identity(sessions: Sessions) -> None:
    identity = await create_phone_identity(sessions, pin="4711", settings=S)
    assert not identity.expert
    await set_expert(sessions, identity.id, True)
    assert (await get_phone_identity(sessions, identity.id)).expert
    await set_expert(sessions, identity.id, False)
    assert not (await get_phone_identity(sessions, identity.id)).expert
    with pytest.raises(PhoneIdentityNotFoundError):
        await set_expert(sessions, identity.id + 1_000_000, True)
