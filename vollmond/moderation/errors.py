"""Exceptions of the moderation domain.

Each refusal a channel must answer differently has its own class: the console shows "only an
admin may ban permanently", the phone says "try again later", the CLI exits with the message.
"""

from __future__ import annotations

from datetime import datetime


class ModerationError(Exception):
    """Base class of every refusal raised on purpose by :mod:`vollmond.moderation`."""


class NotPermittedError(ModerationError, PermissionError):
    """The acting account's role does not allow this (e.g. a moderator playing a recording)."""

    def __init__(self, account_id: int, action: str) -> None:
        super().__init__(f"account {account_id} may not {action}")
        self.account_id = account_id
        self.action = action


class BanLimitError(NotPermittedError):
    """A moderator asked for more than moderators may impose (O5); an admin must do it."""


class BanTooLongError(BanLimitError):
    """A moderator's ban is permanent or longer than the operators' maximum."""


class AreaReservedError(BanLimitError):
    """A moderator tried a full ban (area `all`), which only admins impose."""


class AlarmRateLimitedError(ModerationError):
    """The caller raised too many alarms in the window; misuse of the operator call (O1)."""

    def __init__(self, retry_at: datetime) -> None:
        super().__init__(f"too many operator calls; next one possible at {retry_at.isoformat()}")
        self.retry_at = retry_at


class AlarmNotFoundError(ModerationError, LookupError):
    def __init__(self, alarm_id: int) -> None:
        super().__init__(f"alarm {alarm_id} does not exist")
        self.alarm_id = alarm_id


class AlarmStateError(ModerationError):
    """The alarm is not in a state that allows this step (taken twice, resolved twice)."""


class SanctionNotFoundError(ModerationError, LookupError):
    def __init__(self, sanction_id: int) -> None:
        super().__init__(f"sanction {sanction_id} does not exist")
        self.sanction_id = sanction_id


class InvalidSanctionError(ModerationError, ValueError):
    """The sanction is malformed: a mute without duration, a kick outside a game, no reason."""


class InvalidAreaError(ModerationError, ValueError):
    """Not one of the areas of O5 (`world:<id>`, private, spectate, ..., all)."""


class SubjectNotFoundError(ModerationError, LookupError):
    """The account or phone identity to act on does not exist."""


class RecordingNotFoundError(ModerationError, LookupError):
    def __init__(self, recording_id: str) -> None:
        super().__init__(f"recording {recording_id!r} does not exist")
        self.recording_id = recording_id


class RecordingDeletedError(RecordingNotFoundError):
    """The recording existed but was deleted (retention or by an admin)."""


class RecordingDamagedError(ModerationError):
    """The recording file fails authentication: tampered with, truncated or the wrong key."""


class VaultKeyError(ModerationError):
    """The service key file is missing, unreadable, of the wrong size or too widely readable."""
