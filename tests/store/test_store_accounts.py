"""Accounts, passwords and roles (phone identities: test_store_phone.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from sqlalchemy import select

from vollmond.store import (
    AccountNotFoundError,
    InvalidAccountNameError,
    NameTakenError,
    Role,
    Sessions,
    WeakPasswordError,
    change_password,
    count_admins,
    create_account,
    create_admin,
    find_account,
    get_account,
    set_role,
    verify_password,
)
from vollmond.store.models import AccountRow

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


def test_the_service_hashes_with_the_full_argon2_parameters() -> None:
    """The test processes hash cheaply (tests/cheap_hashing.py); a process of the service's own
    keeps argon2id at 64 MiB, three passes, four lanes."""
    script = "import asyncio; from vollmond.store.hashing import hash_secret; "
    script += "print(asyncio.run(hash_secret('1357')))"
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert out.startswith("$argon2id$v=19$m=65536,t=3,p=4$"), out


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
