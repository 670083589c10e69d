"""Who moderation acts on, and who acts.

A *subject* is a person as the entry paths know them: an account (web) or a phone identity
(telephone). DESIGN.md §7 "Identity": both share the same ledgers once linked, so a ban on
either reaches the other (:func:`linked_subjects`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from vollmond.moderation.errors import SubjectNotFoundError
from vollmond.store.db import Sessions
from vollmond.store.models import AccountRow, PhoneIdentityRow
from vollmond.store.owners import Owner
from vollmond.store.phone import normalize_number


class SubjectKind(enum.StrEnum):
    ACCOUNT = "account"
    PHONE = "phone"


@dataclass(frozen=True, slots=True)
class Subject:
    """An account or a phone identity, by id."""

    kind: SubjectKind
    id: int

    @staticmethod
    def account(account_id: int) -> Subject:
        return Subject(SubjectKind.ACCOUNT, account_id)

    @staticmethod
    def phone(identity_id: int) -> Subject:
        return Subject(SubjectKind.PHONE, identity_id)

    def __str__(self) -> str:
        return f"{self.kind.value}:{self.id}"


@dataclass(frozen=True, slots=True)
class Linked:
    """Everything that names the same person: at most one account and its phone identities."""

    account_id: int | None
    phone_identity_ids: tuple[int, ...]

    @property
    def ledger(self) -> Owner | None:
        """Whose karma a penalty costs: the account, else the phone-only identity (issue 10)."""
        if self.account_id is not None:
            return Owner.account(self.account_id)
        if len(self.phone_identity_ids) == 1:
            return Owner.phone(self.phone_identity_ids[0])
        return None


async def linked_subjects(session: AsyncSession, subject: Subject) -> Linked:
    """The account and phone identities that belong to `subject`'s person.

    Raises SubjectNotFoundError if the subject itself does not exist.
    """
    account_id: int | None
    if subject.kind is SubjectKind.ACCOUNT:
        if await session.get(AccountRow, subject.id) is None:
            raise SubjectNotFoundError(f"account {subject.id} does not exist")
        account_id = subject.id
    else:
        identity = await session.get(PhoneIdentityRow, subject.id)
        if identity is None:
            raise SubjectNotFoundError(f"phone identity {subject.id} does not exist")
        account_id = identity.account_id
    if account_id is None:
        return Linked(None, (subject.id,))
    phones = await session.scalars(
        select(PhoneIdentityRow.id).where(PhoneIdentityRow.account_id == account_id)
    )
    return Linked(account_id, tuple(sorted(phones)))


async def phone_by_number(sessions: Sessions, number: str) -> Subject:
    """The phone identity holding caller number `number` (however it is formatted), for an
    operator who knows only the number; raises SubjectNotFoundError."""
    normalized = normalize_number(number)
    async with sessions() as session:
        identity_id = await session.scalar(
            select(PhoneIdentityRow.id).where(PhoneIdentityRow.number == normalized)
        )
    if identity_id is None:
        raise SubjectNotFoundError(f"no phone identity with number {number!r}")
    return Subject.phone(identity_id)
