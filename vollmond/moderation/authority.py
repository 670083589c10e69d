"""What each staff role may do, as one table rather than role comparisons scattered around.

O3: only admins read recordings. O5: moderators ban for a limited time and never `all`;
admins ban for any time, permanently, and for every area. Players moderate nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from types import MappingProxyType

from sqlalchemy.ext.asyncio import AsyncSession

from vollmond.moderation.errors import NotPermittedError, SubjectNotFoundError
from vollmond.settings.moderation import ModerationSettings
from vollmond.store.models import AccountRow, Role


@dataclass(frozen=True, slots=True)
class Authority:
    """The powers of one role; `ban_limit` None means no limit (permanent bans allowed)."""

    moderate: bool = False
    ban_limit: timedelta | None = timedelta(0)
    ban_everything: bool = False
    recordings: bool = False
    administer: bool = False


def authorities(settings: ModerationSettings) -> Mapping[Role, Authority]:
    """The role table for these settings (the moderators' ban maximum is an operator's choice)."""
    return MappingProxyType(
        {
            Role.PLAYER: Authority(),
            Role.MODERATOR: Authority(
                moderate=True, ban_limit=timedelta(hours=settings.moderator_ban_max_hours)
            ),
            Role.ADMIN: Authority(
                moderate=True,
                ban_limit=None,
                ban_everything=True,
                recordings=True,
                administer=True,
            ),
        }
    )


@dataclass(frozen=True, slots=True)
class Staff:
    """The account acting, with its role as read from the database for this operation."""

    account_id: int
    role: Role
    authority: Authority

    def require(self, power: str, action: str) -> None:
        """Raise NotPermittedError unless this role has `power` (an Authority flag)."""
        if not getattr(self.authority, power):
            raise NotPermittedError(self.account_id, action)


async def load_staff(session: AsyncSession, account_id: int, settings: ModerationSettings) -> Staff:
    """The acting account's powers; the role is read inside the caller's transaction so a
    demotion takes effect at once."""
    row = await session.get(AccountRow, account_id)
    if row is None:
        raise SubjectNotFoundError(f"account {account_id} does not exist")
    role = Role(row.role)
    return Staff(account_id, role, authorities(settings)[role])
