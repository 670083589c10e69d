"""The alarm queue (O1): operator calls from the phone (`*9#`, `*9RNN#`), the web button and
later the spoken word, each persisted with game, round, phase, caller, reason, accused seat.

Moderators take an alarm and resolve it with an outcome and a note; a false alarm costs the
caller karma (P3), and a caller who calls too often is refused (misuse, O1).
"""

from __future__ import annotations

import enum
import zlib
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, false, func, select, text, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from vollmond.moderation import audit
from vollmond.moderation.authority import load_staff
from vollmond.moderation.errors import (
    AlarmNotFoundError,
    AlarmRateLimitedError,
    AlarmStateError,
    SubjectNotFoundError,
)
from vollmond.moderation.penalties import Penalty, book_penalty
from vollmond.moderation.subjects import Subject, linked_subjects
from vollmond.settings.moderation import ModerationSettings
from vollmond.store._validate import check_aware
from vollmond.store.db import Sessions
from vollmond.store.errors import GameNotFoundError
from vollmond.store.models import AlarmRow
from vollmond.store.owners import Owner

NOTE_MAX_LENGTH = 500
REASONS = range(1, 5)


class AlarmStatus(enum.StrEnum):
    OPEN = "open"
    TAKEN = "taken"
    RESOLVED = "resolved"


class Outcome(enum.StrEnum):
    """What a moderator decided; only FALSE_ALARM costs the caller karma."""

    DISMISSED = "dismissed"
    WARNED = "warned"
    MUTED = "muted"
    KICKED = "kicked"
    BANNED = "banned"
    FALSE_ALARM = "false_alarm"


@dataclass(frozen=True, slots=True)
class Caller:
    """Who pressed `*9#`: their account or phone identity if known, and their house number.

    A guest at a web table may have neither account nor phone identity; then the house number
    in that game is all there is, and the rate limit counts per (game, house).
    """

    account_id: int | None = None
    phone_identity_id: int | None = None
    house: int | None = None

    def __post_init__(self) -> None:
        if self.account_id is None and self.phone_identity_id is None and self.house is None:
            raise ValueError("an alarm's caller needs an account, a phone identity or a house")


@dataclass(frozen=True, slots=True)
class Alarm:
    """An operator call from a game (`game_id`) or a conference room (`conference`, X2)."""

    id: int
    game_id: str | None
    round: int
    phase: str
    caller: Caller
    reason: int | None
    accused_house: int | None
    created_at: datetime
    status: AlarmStatus
    taken_by: int | None
    taken_at: datetime | None
    outcome: Outcome | None
    note: str | None
    resolved_by: int | None
    resolved_at: datetime | None
    conference: str | None = None


def _alarm(row: AlarmRow) -> Alarm:
    return Alarm(
        id=row.id,
        game_id=row.game_id,
        round=row.round,
        phase=row.phase,
        caller=Caller(row.caller_account_id, row.caller_phone_identity_id, row.caller_house),
        reason=row.reason,
        accused_house=row.accused_house,
        created_at=row.created_at,
        status=AlarmStatus(row.status),
        taken_by=row.taken_by,
        taken_at=row.taken_at,
        outcome=Outcome(row.outcome) if row.outcome is not None else None,
        note=row.note,
        resolved_by=row.resolved_by,
        resolved_at=row.resolved_at,
        conference=row.conference,
    )


def _same_caller(caller: Caller, place: str) -> tuple[str, ColumnElement[bool]]:
    """The rate limit's key and its condition: the most stable identity the caller has."""
    if caller.account_id is not None:
        return f"account:{caller.account_id}", AlarmRow.caller_account_id == caller.account_id
    if caller.phone_identity_id is not None:
        return (
            f"phone:{caller.phone_identity_id}",
            AlarmRow.caller_phone_identity_id == caller.phone_identity_id,
        )
    where = (AlarmRow.game_id == place) | (AlarmRow.conference == place)
    return f"seat:{place}:{caller.house}", where & (AlarmRow.caller_house == caller.house)


async def _serialise(session: AsyncSession, key: str) -> None:
    """Count and insert one caller's alarms one at a time, so that two presses at once cannot
    both slip under the limit: an advisory lock per caller on PostgreSQL; on SQLite a write
    statement first, which takes the database's write lock before the count is read."""
    dialect = session.get_bind().dialect.name
    if dialect == "postgresql":
        await session.execute(
            text("SELECT pg_advisory_xact_lock(:key)"), {"key": zlib.crc32(key.encode())}
        )
    elif dialect == "sqlite":
        await session.execute(
            update(AlarmRow).where(false()).values(status=AlarmRow.status),
            execution_options={"synchronize_session": False},
        )


async def raise_alarm(
    sessions: Sessions,
    settings: ModerationSettings,
    *,
    game_id: str | None,
    round: int,
    phase: str,
    caller: Caller,
    now: datetime,
    reason: int | None = None,
    accused_house: int | None = None,
    conference: str | None = None,
) -> Alarm:
    """Persist an operator call from a game, or from a conference room (`conference`, the
    room's id, and no game); raises AlarmRateLimitedError past the per-caller limit."""
    check_aware(now, "now")
    if (game_id is None) == (conference is None):
        raise ValueError("an alarm names either a game or a conference room")
    if reason is not None and reason not in REASONS:
        raise ValueError("an alarm's reason is 1 to 4")
    if accused_house is not None and accused_house < 1:
        raise ValueError("house numbers start at 1")
    place = game_id if game_id is not None else conference
    assert place is not None
    key, condition = _same_caller(caller, place)
    window = timedelta(seconds=settings.alarm_window_s)
    try:
        async with sessions.begin() as session:
            await _serialise(session, key)
            recent = (
                await session.execute(
                    select(func.count(), func.min(AlarmRow.created_at)).where(
                        condition, AlarmRow.created_at > now - window
                    )
                )
            ).one()
            if recent[0] >= settings.alarm_limit:
                raise AlarmRateLimitedError(recent[1] + window)
            row = AlarmRow(
                game_id=game_id,
                conference=conference,
                round=round,
                phase=phase,
                caller_account_id=caller.account_id,
                caller_phone_identity_id=caller.phone_identity_id,
                caller_house=caller.house,
                reason=reason,
                accused_house=accused_house,
                created_at=now,
                status=AlarmStatus.OPEN.value,
            )
            session.add(row)
    except IntegrityError as exc:
        raise GameNotFoundError(place) from exc
    return _alarm(row)


async def get_alarm(sessions: Sessions, alarm_id: int) -> Alarm:
    async with sessions() as session:
        row = await session.get(AlarmRow, alarm_id)
    if row is None:
        raise AlarmNotFoundError(alarm_id)
    return _alarm(row)


async def list_alarms(
    sessions: Sessions,
    *,
    statuses: tuple[AlarmStatus, ...] = (AlarmStatus.OPEN, AlarmStatus.TAKEN),
    game_id: str | None = None,
    limit: int = 200,
) -> list[Alarm]:
    """The queue, oldest first (who waited longest is served first)."""
    query = select(AlarmRow).where(AlarmRow.status.in_([s.value for s in statuses]))
    if game_id is not None:
        query = query.where(AlarmRow.game_id == game_id)
    async with sessions() as session:
        rows = await session.scalars(query.order_by(AlarmRow.id).limit(limit))
        return [_alarm(row) for row in rows]


async def take_alarm(
    sessions: Sessions, settings: ModerationSettings, alarm_id: int, *, by: int, now: datetime
) -> Alarm:
    """A moderator takes an open alarm; taking it twice (the same moderator) is harmless,
    taking one another moderator holds raises AlarmStateError."""
    check_aware(now, "now")
    async with sessions.begin() as session:
        (await load_staff(session, by, settings)).require("moderate", "take an alarm")
        claimed = await session.scalar(
            update(AlarmRow)
            .where(AlarmRow.id == alarm_id, AlarmRow.status == AlarmStatus.OPEN.value)
            .values(status=AlarmStatus.TAKEN.value, taken_by=by, taken_at=now)
            .returning(AlarmRow.id)
            .execution_options(synchronize_session=False)
        )
        row = await session.get(AlarmRow, alarm_id, populate_existing=True)
        if row is None:
            raise AlarmNotFoundError(alarm_id)
        if claimed is None and not (row.status == AlarmStatus.TAKEN.value and row.taken_by == by):
            raise AlarmStateError(f"alarm {alarm_id} is {row.status} (by {row.taken_by})")
        if claimed is not None:
            audit.record(
                session,
                actor=by,
                action="alarm.take",
                target_kind="alarm",
                target_id=alarm_id,
                now=now,
            )
    return _alarm(row)


async def _caller_ledger(session: AsyncSession, row: AlarmRow) -> Owner | None:
    """Whose karma a false alarm costs: the caller's account, else the phone-only identity's
    own ledger (the same rule as a sanction's, `Linked.ledger`); None for an unknown caller."""
    if row.caller_account_id is not None:
        return Owner.account(row.caller_account_id)
    if row.caller_phone_identity_id is None:
        return None
    try:
        linked = await linked_subjects(session, Subject.phone(row.caller_phone_identity_id))
    except SubjectNotFoundError:
        return None
    return linked.ledger


async def resolve_alarm(
    sessions: Sessions,
    settings: ModerationSettings,
    alarm_id: int,
    *,
    by: int,
    outcome: Outcome,
    now: datetime,
    note: str = "",
) -> Alarm:
    """Close an alarm with the moderator's outcome and note (an open alarm is taken on the
    way). A false alarm books the karma deduction to the caller's ledger (account or phone-only
    identity)."""
    check_aware(now, "now")
    cleaned = note.strip()
    if len(cleaned) > NOTE_MAX_LENGTH:
        raise ValueError(f"note is longer than {NOTE_MAX_LENGTH} characters")
    async with sessions.begin() as session:
        (await load_staff(session, by, settings)).require("moderate", "resolve an alarm")
        row = await session.get(AlarmRow, alarm_id, with_for_update=True)
        if row is None:
            raise AlarmNotFoundError(alarm_id)
        if row.status == AlarmStatus.RESOLVED.value:
            raise AlarmStateError(f"alarm {alarm_id} is already resolved ({row.outcome})")
        if row.taken_by is None:
            row.taken_by, row.taken_at = by, now
        row.status = AlarmStatus.RESOLVED.value
        row.outcome = outcome.value
        row.note = cleaned or None
        row.resolved_by, row.resolved_at = by, now
        caller_ledger = await _caller_ledger(session, row)
        audit.record(
            session,
            actor=by,
            action="alarm.resolve",
            target_kind="alarm",
            target_id=alarm_id,
            now=now,
            detail=f"{outcome.value} {cleaned}",
        )
    if outcome is Outcome.FALSE_ALARM:
        await book_penalty(
            sessions, settings, caller_ledger, Penalty.FALSE_ALARM, game_id=row.game_id, now=now
        )
    return _alarm(row)
