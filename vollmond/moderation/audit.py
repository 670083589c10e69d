"""The append-only audit log: who did what to which target, and when.

Every moderation step writes its entry in the same transaction as the step itself, so there
is no action without its entry and no entry for an action that was rolled back. The table
refuses UPDATE and DELETE (migration 0006).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select

from vollmond.store.audit import DETAIL_MAX_LENGTH, record
from vollmond.store.db import Sessions
from vollmond.store.models import AuditEntryRow

__all__ = ["DETAIL_MAX_LENGTH", "AuditEntry", "audit_log", "record"]


@dataclass(frozen=True, slots=True)
class AuditEntry:
    id: int
    actor_account_id: int | None
    action: str
    target_kind: str
    target_id: str
    detail: str
    created_at: datetime


def _entry(row: AuditEntryRow) -> AuditEntry:
    return AuditEntry(
        id=row.id,
        actor_account_id=row.actor_account_id,
        action=row.action,
        target_kind=row.target_kind,
        target_id=row.target_id,
        detail=row.detail,
        created_at=row.created_at,
    )


async def audit_log(
    sessions: Sessions,
    *,
    target_kind: str | None = None,
    target_id: object | None = None,
    limit: int = 200,
) -> list[AuditEntry]:
    """The newest entries first, optionally those of one target."""
    query = select(AuditEntryRow)
    if target_kind is not None:
        query = query.where(AuditEntryRow.target_kind == target_kind)
    if target_id is not None:
        query = query.where(AuditEntryRow.target_id == str(target_id))
    async with sessions() as session:
        rows = await session.scalars(query.order_by(AuditEntryRow.id.desc()).limit(limit))
        return [_entry(row) for row in rows]
