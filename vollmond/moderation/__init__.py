"""Moderation (issue 9, RULES O1-O5, P3): the alarm queue, sanctions and bans by area with
the one access check, the encrypted recording vault with its retention job, and the audit log.

Storage is in :mod:`vollmond.store.models.moderation`; what each role may do is one table in
:mod:`vollmond.moderation.authority`; channels reach all of it through
:class:`vollmond.moderation.service.Moderation` (docs/moderation.md).
"""

from vollmond.moderation.alarms import Alarm, AlarmStatus, Caller, Outcome
from vollmond.moderation.areas import (
    ALL,
    CONFERENCE,
    FRIENDS,
    MAILBOX,
    PRIVATE,
    SPECTATE,
    WEB,
    Area,
    AreaKind,
)
from vollmond.moderation.errors import (
    AlarmNotFoundError,
    AlarmRateLimitedError,
    AlarmStateError,
    AreaReservedError,
    BanLimitError,
    BanTooLongError,
    InvalidAreaError,
    InvalidSanctionError,
    ModerationError,
    NotPermittedError,
    RecordingDamagedError,
    RecordingDeletedError,
    RecordingNotFoundError,
    SanctionNotFoundError,
    SubjectNotFoundError,
    VaultKeyError,
)
from vollmond.moderation.sanctions import ALLOWED, Access, Allowed, Denied, Sanction, SanctionKind
from vollmond.moderation.service import Moderation
from vollmond.moderation.subjects import Subject, SubjectKind

__all__ = [
    "ALL",
    "ALLOWED",
    "CONFERENCE",
    "FRIENDS",
    "MAILBOX",
    "PRIVATE",
    "SPECTATE",
    "WEB",
    "Access",
    "Alarm",
    "AlarmNotFoundError",
    "AlarmRateLimitedError",
    "AlarmStateError",
    "AlarmStatus",
    "Allowed",
    "Area",
    "AreaKind",
    "AreaReservedError",
    "BanLimitError",
    "BanTooLongError",
    "Caller",
    "Denied",
    "InvalidAreaError",
    "InvalidSanctionError",
    "Moderation",
    "ModerationError",
    "NotPermittedError",
    "Outcome",
    "RecordingDamagedError",
    "RecordingDeletedError",
    "RecordingNotFoundError",
    "Sanction",
    "SanctionKind",
    "SanctionNotFoundError",
    "Subject",
    "SubjectKind",
    "SubjectNotFoundError",
    "VaultKeyError",
]
