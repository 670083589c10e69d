"""Whose ledger a row is: an account's or a phone-only identity's (issue 10).

Karma, credit, premium and grants are kept for both kinds of player alike; the functions of
the ledgers take an `Owner`, or a bare account id as before (most callers are the web's, where
there is always an account).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, TypeAlias

from sqlalchemy import ColumnElement, false, or_
from sqlalchemy.ext.asyncio import AsyncSession

from vollmond.store.errors import AccountNotFoundError, PhoneIdentityNotFoundError
from vollmond.store.models import AccountRow, PhoneIdentityRow


@dataclass(frozen=True, slots=True)
class Owner:
    """An account or a phone identity, exactly one (as the ledgers' `one_owner` check)."""

    account_id: int | None = None
    phone_id: int | None = None

    def __post_init__(self) -> None:
        if (self.account_id is None) == (self.phone_id is None):
            raise ValueError("an owner is an account or a phone identity, exactly one")

    @classmethod
    def account(cls, account_id: int) -> Owner:
        return cls(account_id=account_id)

    @classmethod
    def phone(cls, phone_id: int) -> Owner:
        return cls(phone_id=phone_id)

    @property
    def is_phone(self) -> bool:
        return self.phone_id is not None

    def __str__(self) -> str:
        return f"phone:{self.phone_id}" if self.is_phone else f"account:{self.account_id}"


OwnerLike: TypeAlias = "Owner | int"
"""An `Owner`, or an account id (what every ledger function took before issue 10)."""


def owner_of(who: OwnerLike) -> Owner:
    return who if isinstance(who, Owner) else Owner.account(who)


def owned_by(model: Any, who: OwnerLike) -> ColumnElement[bool]:
    """The WHERE condition selecting `who`'s rows of a ledger-like table."""
    owner = owner_of(who)
    if owner.phone_id is not None:
        return model.phone_identity_id == owner.phone_id  # type: ignore[no-any-return]
    return model.account_id == owner.account_id  # type: ignore[no-any-return]


def owned_by_any(model: Any, owners: Collection[Owner]) -> ColumnElement[bool]:
    """The WHERE condition selecting the rows of any of `owners` (one query for a table's
    players instead of one each); select the owner columns with it (`row_owner`)."""
    accounts = [o.account_id for o in owners if o.account_id is not None]
    phones = [o.phone_id for o in owners if o.phone_id is not None]
    conditions = []
    if accounts:
        conditions.append(model.account_id.in_(accounts))
    if phones:
        conditions.append(model.phone_identity_id.in_(phones))
    return or_(*conditions) if conditions else false()


def row_owner(account_id: int | None, phone_id: int | None) -> Owner:
    """The owner of a row of a ledger-like table, from its two owner columns."""
    return Owner.account(account_id) if account_id is not None else Owner(phone_id=phone_id)


def owner_columns(who: OwnerLike) -> dict[str, int | None]:
    """The owner columns of a new row."""
    owner = owner_of(who)
    return {"account_id": owner.account_id, "phone_identity_id": owner.phone_id}


def holder_table(who: OwnerLike) -> tuple[type[AccountRow] | type[PhoneIdentityRow], int]:
    """The row that keeps `who`'s credit balance, and its id."""
    owner = owner_of(who)
    if owner.phone_id is not None:
        return PhoneIdentityRow, owner.phone_id
    assert owner.account_id is not None
    return AccountRow, owner.account_id


def not_found(who: OwnerLike) -> Exception:
    owner = owner_of(who)
    if owner.phone_id is not None:
        return PhoneIdentityNotFoundError(owner.phone_id)
    return AccountNotFoundError(owner.account_id or 0)


async def require_owner(session: AsyncSession, who: OwnerLike) -> None:
    """Raise AccountNotFoundError / PhoneIdentityNotFoundError for an unknown owner."""
    table, key = holder_table(who)
    if await session.get(table, key) is None:
        raise not_found(who)
