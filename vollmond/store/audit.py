"""Writing one entry of the append-only audit log (read in `vollmond.moderation.audit`).

In the store, so that a store operation that must be audited (linking a phone identity merges
its ledgers, issue 10) writes its entry in its own transaction, as moderation does.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from vollmond.store.models import AuditEntryRow

DETAIL_MAX_LENGTH = 500


def record(
    session: AsyncSession,
    *,
    actor: int | None,
    action: str,
    target_kind: str,
    target_id: object,
    now: datetime,
    detail: str = "",
) -> None:
    """Add an entry to the caller's transaction; `actor` None is the service itself."""
    session.add(
        AuditEntryRow(
            actor_account_id=actor,
            action=action,
            target_kind=target_kind,
            target_id=str(target_id),
            detail=detail[:DETAIL_MAX_LENGTH],
            created_at=now,
        )
    )
