"""Warnings, mutes, kicks and bans by area (O5, P3), and the one access check.

Every entry path asks :func:`access` before letting a person in; the answer is either
:data:`ALLOWED` or a :class:`Denied` carrying the reason and expiry the person must always be
told (O5). Imposing goes through :func:`impose`, which enforces the limits of the acting role
(:mod:`vollmond.moderation.authority`), books the karma deduction and writes the audit log.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from vollmond.moderation import audit
from vollmond.moderation.areas import Area, AreaKind
from vollmond.moderation.authority import Staff, load_staff
from vollmond.moderation.errors import (
    AreaReservedError,
    BanTooLongError,
    InvalidSanctionError,
    SanctionNotFoundError,
)
from vollmond.moderation.penalties import Penalty, book_penalty
from vollmond.moderation.subjects import Linked, Subject, SubjectKind, linked_subjects
from vollmond.settings.moderation import ModerationSettings
from vollmond.store._validate import check_aware
from vollmond.store.db import Sessions
from vollmond.store.models import SanctionRow

REASON_MAX_LENGTH = 500


class SanctionKind(enum.StrEnum):
    WARN = "warn"
    MUTE = "mute"
    KICK = "kick"
    BAN = "ban"


@dataclass(frozen=True, slots=True)
class _KindRules:
    """What each kind needs: a duration (mute), a game (kick), an area (ban)."""

    needs_duration: bool
    allows_duration: bool
    needs_game: bool
    needs_area: bool
    penalty: Penalty


_RULES = {
    SanctionKind.WARN: _KindRules(False, False, False, False, Penalty.WARN),
    SanctionKind.MUTE: _KindRules(True, True, False, False, Penalty.MUTE),
    SanctionKind.KICK: _KindRules(False, False, True, False, Penalty.KICK),
    SanctionKind.BAN: _KindRules(False, True, False, True, Penalty.BAN),
}


@dataclass(frozen=True, slots=True)
class Sanction:
    id: int
    kind: SanctionKind
    area: Area | None
    subject: Subject
    game_id: str | None
    alarm_id: int | None
    reason: str
    created_by: int
    created_at: datetime
    expires_at: datetime | None
    lifted_at: datetime | None
    lifted_by: int | None

    def active(self, now: datetime) -> bool:
        """In force at `now`: not lifted, not expired."""
        return self.lifted_at is None and (self.expires_at is None or self.expires_at > now)


@dataclass(frozen=True, slots=True)
class Allowed:
    """The person may enter the area."""

    def __bool__(self) -> bool:
        return True


@dataclass(frozen=True, slots=True)
class Denied:
    """Refused: what the person is told (O5) — the reason and until when (None: permanent)."""

    reason: str
    expires_at: datetime | None
    sanction_id: int
    area: Area

    def __bool__(self) -> bool:
        return False


ALLOWED = Allowed()
Access = Allowed | Denied


def _sanction(row: SanctionRow) -> Sanction:
    subject = (
        Subject.account(row.account_id)
        if row.account_id is not None
        else Subject(SubjectKind.PHONE, row.phone_identity_id or 0)
    )
    return Sanction(
        id=row.id,
        kind=SanctionKind(row.kind),
        area=Area.parse(row.area) if row.area is not None else None,
        subject=subject,
        game_id=row.game_id,
        alarm_id=row.alarm_id,
        reason=row.reason,
        created_by=row.created_by,
        created_at=row.created_at,
        expires_at=row.expires_at,
        lifted_at=row.lifted_at,
        lifted_by=row.lifted_by,
    )


def _check_reason(reason: str) -> str:
    cleaned = reason.strip()
    if not cleaned:
        raise InvalidSanctionError("a sanction needs a reason the person will be told")
    if len(cleaned) > REASON_MAX_LENGTH:
        raise InvalidSanctionError(f"reason is longer than {REASON_MAX_LENGTH} characters")
    return cleaned


def _check_shape(
    kind: SanctionKind, area: Area | None, duration: timedelta | None, game_id: str | None
) -> None:
    rules = _RULES[kind]
    if rules.needs_duration and duration is None:
        raise InvalidSanctionError(f"a {kind.value} needs a duration")
    if not rules.allows_duration and duration is not None:
        raise InvalidSanctionError(f"a {kind.value} has no duration")
    if duration is not None and duration <= timedelta(0):
        raise InvalidSanctionError("a duration must be positive")
    if rules.needs_game and game_id is None:
        raise InvalidSanctionError(f"a {kind.value} happens in a game")
    if rules.needs_area and area is None:
        raise InvalidSanctionError(f"a {kind.value} needs an area")


def check_ban_limits(staff: Staff, area: Area, duration: timedelta | None) -> None:
    """O5: moderators ban only for a limited time and never everything.

    Raises AreaReservedError for a moderator's `all` ban, BanTooLongError for a permanent
    ban or one longer than the operators' maximum; admins pass.
    """
    staff.require("moderate", "ban")
    if area.kind is AreaKind.ALL and not staff.authority.ban_everything:
        raise AreaReservedError(staff.account_id, "ban for every area (admins only)")
    limit = staff.authority.ban_limit
    if limit is not None and (duration is None or duration > limit):
        raise BanTooLongError(
            staff.account_id,
            f"ban permanently or longer than {limit.total_seconds() / 3600:g} hours (admins only)",
        )


def _subject_columns(subject: Subject) -> dict[str, int | None]:
    if subject.kind is SubjectKind.ACCOUNT:
        return {"account_id": subject.id, "phone_identity_id": None}
    return {"account_id": None, "phone_identity_id": subject.id}


async def impose(
    sessions: Sessions,
    settings: ModerationSettings,
    *,
    by: int,
    subject: Subject,
    kind: SanctionKind,
    reason: str,
    now: datetime,
    area: Area | None = None,
    duration: timedelta | None = None,
    game_id: str | None = None,
    alarm_id: int | None = None,
) -> Sanction:
    """Warn, mute, kick or ban `subject` on behalf of staff account `by`.

    `duration` None on a ban makes it permanent (admins only). The karma deduction (P3) is
    booked to the person's account after the sanction is stored.
    """
    check_aware(now, "now")
    cleaned = _check_reason(reason)
    _check_shape(kind, area, duration, game_id)
    async with sessions.begin() as session:
        staff = await load_staff(session, by, settings)
        staff.require("moderate", kind.value)
        if kind is SanctionKind.BAN:
            assert area is not None
            check_ban_limits(staff, area, duration)
        linked = await linked_subjects(session, subject)
        row = SanctionRow(
            kind=kind.value,
            area=str(area) if area is not None else None,
            game_id=game_id,
            alarm_id=alarm_id,
            reason=cleaned,
            created_by=by,
            created_at=now,
            expires_at=now + duration if duration is not None else None,
            **_subject_columns(subject),
        )
        session.add(row)
        await session.flush()
        audit.record(
            session,
            actor=by,
            action=f"sanction.{kind.value}",
            target_kind=subject.kind.value,
            target_id=subject.id,
            now=now,
            detail=f"sanction {row.id} area={row.area} expires={row.expires_at} {cleaned}",
        )
    await book_penalty(
        sessions, settings, linked.ledger, _RULES[kind].penalty, game_id=game_id, now=now
    )
    return _sanction(row)


async def lift(
    sessions: Sessions,
    settings: ModerationSettings,
    sanction_id: int,
    *,
    by: int,
    now: datetime,
) -> Sanction:
    """End a sanction early (unban); the row stays with who lifted it and when.

    A moderator may lift what moderators may impose; lifting a permanent or `all` ban takes
    an admin, so a moderator cannot undo an admin's decision.
    """
    check_aware(now, "now")
    async with sessions.begin() as session:
        staff = await load_staff(session, by, settings)
        staff.require("moderate", "lift a sanction")
        row = await session.get(SanctionRow, sanction_id, with_for_update=True)
        if row is None:
            raise SanctionNotFoundError(sanction_id)
        if row.kind == SanctionKind.BAN.value and row.area is not None:
            length = row.expires_at - row.created_at if row.expires_at is not None else None
            check_ban_limits(staff, Area.parse(row.area), length)
        if row.lifted_at is None:
            row.lifted_at = now
            row.lifted_by = by
            audit.record(
                session,
                actor=by,
                action="sanction.lift",
                target_kind="sanction",
                target_id=row.id,
                now=now,
            )
    return _sanction(row)


def _of_person(linked: Linked) -> ColumnElement[bool]:
    conditions: list[ColumnElement[bool]] = []
    if linked.account_id is not None:
        conditions.append(SanctionRow.account_id == linked.account_id)
    if linked.phone_identity_ids:
        conditions.append(SanctionRow.phone_identity_id.in_(linked.phone_identity_ids))
    return or_(*conditions)


def _in_force(now: datetime) -> ColumnElement[bool]:
    return (SanctionRow.lifted_at.is_(None)) & (
        SanctionRow.expires_at.is_(None) | (SanctionRow.expires_at > now)
    )


async def _active_of(
    session: AsyncSession, subject: Subject, kind: SanctionKind, now: datetime
) -> list[Sanction]:
    linked = await linked_subjects(session, subject)
    rows = await session.scalars(
        select(SanctionRow)
        .where(SanctionRow.kind == kind.value, _of_person(linked), _in_force(now))
        .order_by(SanctionRow.id)
    )
    return [_sanction(row) for row in rows]


def _longest(sanctions: list[Sanction]) -> Sanction:
    """The sanction that lasts longest (a permanent one first), to tell the person the truth
    about when they may come back."""
    return max(sanctions, key=lambda s: (s.expires_at is None, s.expires_at or s.created_at))


async def access(sessions: Sessions, subject: Subject, *areas: Area, now: datetime) -> Access:
    """May `subject` enter any of `areas` at `now`? THE check every entry path calls.

    Pass every area the action touches (joining a private Vampir round: ``Area.in_world(
    "vampir"), PRIVATE``); a ban on any of them, or on `all`, refuses. Bans on a linked
    account or phone identity count too. An unknown subject is allowed (there is nothing to
    ban yet), so entry paths can ask before registration.
    """
    check_aware(now, "now")
    if not areas:
        raise ValueError("access needs at least one area")
    async with sessions() as session:
        try:
            bans = await _active_of(session, subject, SanctionKind.BAN, now)
        except LookupError:
            return ALLOWED
    hits = [
        (ban, asked)
        for ban in bans
        for asked in areas
        if ban.area is not None and ban.area.covers(asked)
    ]
    if not hits:
        return ALLOWED
    ban, _ = max(hits, key=lambda hit: (hit[0].expires_at is None, hit[0].expires_at or now))
    assert ban.area is not None
    return Denied(ban.reason, ban.expires_at, ban.id, ban.area)


async def muted_until(sessions: Sessions, subject: Subject, now: datetime) -> Sanction | None:
    """The mute in force for `subject` (the longest), or None; rooms ask this before mixing."""
    check_aware(now, "now")
    async with sessions() as session:
        try:
            mutes = await _active_of(session, subject, SanctionKind.MUTE, now)
        except LookupError:
            return None
    return _longest(mutes) if mutes else None


async def list_sanctions(
    sessions: Sessions,
    *,
    now: datetime,
    subject: Subject | None = None,
    kind: SanctionKind | None = None,
    active_only: bool = True,
    limit: int = 200,
) -> list[Sanction]:
    """Sanctions newest first: of one person (and their linked identities) or of everyone."""
    query = select(SanctionRow)
    async with sessions() as session:
        if subject is not None:
            query = query.where(_of_person(await linked_subjects(session, subject)))
        if kind is not None:
            query = query.where(SanctionRow.kind == kind.value)
        if active_only:
            query = query.where(_in_force(now))
        rows = await session.scalars(query.order_by(SanctionRow.id.desc()).limit(limit))
        return [_sanction(row) for row in rows]
