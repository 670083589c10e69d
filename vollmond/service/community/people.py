"""Who a typed name or phone ID is, and what a person is called (for lists and messages).

A person is an account, or a phone identity without one (`Owner`). A phone ID linked to an
account is that account: a message or a friendship addressed to the phone ID reaches the
account's mailbox and friends list.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from vollmond.service.community.errors import CommunityError
from vollmond.store import find_account
from vollmond.store.community import owner_key, person_of
from vollmond.store.db import Sessions
from vollmond.store.models import AccountRow, PhoneIdentityRow
from vollmond.store.owners import Owner

_KEY = re.compile(r"([ap]):([0-9]{1,18})")
_DIGITS = re.compile(r"[0-9]{1,18}")


@dataclass(frozen=True, slots=True)
class Named:
    """A person as a list shows them: an account's name, or a phone-only identity's ID."""

    owner: Owner
    name: str | None  # the account's name; None for a phone-only identity
    phone_id: int | None

    @property
    def key(self) -> str:
        return owner_key(self.owner)

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "name": self.name, "phone_id": self.phone_id}


def parse_key(text: str) -> Owner | None:
    """``a:12`` / ``p:4711`` (what the lists hand out) as an owner; None for anything else."""
    match = _KEY.fullmatch(text.strip())
    if match is None:
        return None
    number = int(match.group(2))
    return Owner.account(number) if match.group(1) == "a" else Owner.phone(number)


async def find_person(sessions: Sessions, text: str) -> Owner:
    """The person `text` names: a list's key, a phone ID (digits), or an account name.
    Digits are tried as a phone ID first, then as a name. CommunityError("unknown_person")."""
    cleaned = text.strip()
    keyed = parse_key(cleaned)
    if keyed is not None:
        return await _existing(sessions, keyed)
    if _DIGITS.fullmatch(cleaned):
        async with sessions() as session:
            row = await session.get(PhoneIdentityRow, int(cleaned))
            if row is not None:
                return await person_of(session, Owner.phone(row.id))
    if cleaned:
        account = await find_account(sessions, cleaned)
        if account is not None:
            return Owner.account(account.id)
    raise CommunityError("unknown_person", who=cleaned[:64])


async def _existing(sessions: Sessions, owner: Owner) -> Owner:
    async with sessions() as session:
        if owner.account_id is not None:
            found = await session.get(AccountRow, owner.account_id) is not None
        else:
            found = await session.get(PhoneIdentityRow, owner.phone_id) is not None
        if not found:
            raise CommunityError("unknown_person", who=owner_key(owner))
        return await person_of(session, owner)


async def as_person(sessions: Sessions, owner: Owner) -> Owner:
    async with sessions() as session:
        return await person_of(session, owner)


async def names(sessions: Sessions, owners: list[Owner]) -> dict[Owner, Named]:
    """Each owner with its display name, in one query per kind."""
    accounts = {o.account_id for o in owners if o.account_id is not None}
    found: dict[int, str] = {}
    if accounts:
        async with sessions() as session:
            rows = await session.execute(
                select(AccountRow.id, AccountRow.name).where(AccountRow.id.in_(accounts))
            )
            found = {int(i): str(n) for i, n in rows}
    return {
        o: Named(o, found.get(o.account_id) if o.account_id is not None else None, o.phone_id)
        for o in owners
    }
