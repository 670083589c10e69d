"""Moderation tables: the alarm queue, sanctions, recordings and the append-only audit log.

Staff roles are not a table of their own: an account's `role` (player / moderator / admin,
:class:`~vollmond.store.models.accounts.Role`) already says it. A person is named either by
account or by phone identity (a caller who never made an account can still be banned); the
CHECK constraints make sure exactly one of the two is set where a subject is required.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import CheckConstraint, ForeignKey, Integer, LargeBinary, String
from sqlalchemy.orm import Mapped, mapped_column

from vollmond.store.models.base import Base
from vollmond.store.types import BigId, UTCDateTime, utcnow

ALARM_STATUSES = ("open", "taken", "resolved")
ALARM_OUTCOMES = ("dismissed", "warned", "muted", "kicked", "banned", "false_alarm")
SANCTION_KINDS = ("warn", "mute", "kick", "ban")


def _one_of(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(value) for value in values)})"


class AlarmRow(Base):
    """One operator call (O1): who called, about whom and why, and what a moderator decided."""

    __tablename__ = "moderation_alarms"
    __table_args__ = (
        CheckConstraint(_one_of("status", ALARM_STATUSES), name="status_known"),
        CheckConstraint(
            f"outcome IS NULL OR {_one_of('outcome', ALARM_OUTCOMES)}", name="outcome_known"
        ),
        CheckConstraint("reason IS NULL OR reason BETWEEN 1 AND 4", name="reason_range"),
        CheckConstraint(
            "caller_account_id IS NOT NULL OR caller_phone_identity_id IS NOT NULL "
            "OR caller_house IS NOT NULL",
            name="caller_named",
        ),
        CheckConstraint(
            "(status = 'resolved') = (outcome IS NOT NULL)", name="resolved_has_outcome"
        ),
        CheckConstraint("(game_id IS NULL) <> (conference IS NULL)", name="game_or_conference"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    # A game's alarm names the game; a conference room's (X2) names the room instead.
    game_id: Mapped[str | None] = mapped_column(String(32), ForeignKey("games.id"), index=True)
    conference: Mapped[str | None] = mapped_column(String(64))
    round: Mapped[int] = mapped_column(Integer)
    phase: Mapped[str] = mapped_column(String(32))
    caller_account_id: Mapped[int | None] = mapped_column(BigId, ForeignKey("accounts.id"))
    caller_phone_identity_id: Mapped[int | None] = mapped_column(
        BigId, ForeignKey("phone_identities.id")
    )
    caller_house: Mapped[int | None] = mapped_column(Integer)
    reason: Mapped[int | None] = mapped_column(Integer)
    accused_house: Mapped[int | None] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, index=True)
    status: Mapped[str] = mapped_column(String(16), index=True)
    taken_by: Mapped[int | None] = mapped_column(BigId, ForeignKey("accounts.id"))
    taken_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    outcome: Mapped[str | None] = mapped_column(String(16))
    note: Mapped[str | None] = mapped_column(String(500))
    resolved_by: Mapped[int | None] = mapped_column(BigId, ForeignKey("accounts.id"))
    resolved_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class SanctionRow(Base):
    """A warning, mute, kick or ban of one person; rows are lifted, never deleted."""

    __tablename__ = "moderation_sanctions"
    __table_args__ = (
        CheckConstraint(_one_of("kind", SANCTION_KINDS), name="kind_known"),
        CheckConstraint("(account_id IS NULL) <> (phone_identity_id IS NULL)", name="one_subject"),
        CheckConstraint("kind <> 'ban' OR area IS NOT NULL", name="ban_has_area"),
        CheckConstraint("kind <> 'mute' OR expires_at IS NOT NULL", name="mute_expires"),
        CheckConstraint("expires_at IS NULL OR expires_at > created_at", name="expiry_later"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    kind: Mapped[str] = mapped_column(String(8))
    area: Mapped[str | None] = mapped_column(String(80))
    account_id: Mapped[int | None] = mapped_column(BigId, ForeignKey("accounts.id"), index=True)
    phone_identity_id: Mapped[int | None] = mapped_column(
        BigId, ForeignKey("phone_identities.id"), index=True
    )
    game_id: Mapped[str | None] = mapped_column(String(32), ForeignKey("games.id"))
    alarm_id: Mapped[int | None] = mapped_column(BigId, ForeignKey("moderation_alarms.id"))
    reason: Mapped[str] = mapped_column(String(500))
    created_by: Mapped[int] = mapped_column(BigId, ForeignKey("accounts.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    lifted_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    lifted_by: Mapped[int | None] = mapped_column(BigId, ForeignKey("accounts.id"))


class RecordingRow(Base):
    """Metadata of one encrypted recording (O2-O4); the audio itself is a file, never a column.

    `wrapped_key` is the recording's own AES key encrypted under the service key (which lives
    outside the database), `key_nonce` the nonce of that wrapping.
    """

    __tablename__ = "moderation_recordings"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    game_id: Mapped[str | None] = mapped_column(String(32), ForeignKey("games.id"), index=True)
    alarm_id: Mapped[int | None] = mapped_column(BigId, ForeignKey("moderation_alarms.id"))
    room: Mapped[str] = mapped_column(String(64))
    started_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    blob_path: Mapped[str] = mapped_column(String(255))
    wrapped_key: Mapped[bytes] = mapped_column(LargeBinary(64))
    key_nonce: Mapped[bytes] = mapped_column(LargeBinary(16))
    key_fingerprint: Mapped[str] = mapped_column(String(16))
    hold_reason: Mapped[str | None] = mapped_column(String(500))
    hold_by: Mapped[int | None] = mapped_column(BigId, ForeignKey("accounts.id"))
    held_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    deleted_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class AuditEntryRow(Base):
    """Who did what to which target, when; append-only (triggers refuse UPDATE and DELETE).

    `actor_account_id` is NULL for the service itself (the retention job).
    """

    __tablename__ = "moderation_audit"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    actor_account_id: Mapped[int | None] = mapped_column(
        BigId, ForeignKey("accounts.id"), index=True
    )
    action: Mapped[str] = mapped_column(String(64))
    target_kind: Mapped[str] = mapped_column(String(32))
    target_id: Mapped[str] = mapped_column(String(64))
    detail: Mapped[str] = mapped_column(String(500))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, index=True)
