"""What the operators decide about moderation (docs/moderation.md, RULES O1-O5, P3).

One table `[moderation]` of the operator's settings file. The defaults follow seed 004: a
recording runs at most 5 minutes (conference rooms exactly 5), is kept 30 days, and moderators
ban for a limited time only.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ModerationSettings:
    """Limits of moderators, karma costs of sanctions, alarm rate limit, recording vault."""

    # Longest ban a moderator may impose; longer, permanent or `all` bans need an admin (O5).
    moderator_ban_max_hours: int = 7 * 24
    # Karma deducted from the sanctioned person (P3); 0 books nothing. Positive numbers.
    karma_warn: int = 5
    karma_mute: int = 10
    karma_kick: int = 20
    karma_ban: int = 50
    karma_false_alarm: int = 10
    # Misuse of the operator call (O1): at most `alarm_limit` alarms per caller per window.
    alarm_limit: int = 3
    alarm_window_s: int = 600
    # O2: a game recording stops at the end of the round, at most this long; a conference
    # room recording runs exactly `conference_recording_s`.
    recording_max_s: int = 300
    conference_recording_s: int = 300
    # O2: before a recording starts, every caller at the table hears the warning and the tone;
    # the recording waits for that, but never longer than this (a line stuck in a long prompt).
    recording_notice_wait_s: float = 45.0
    # O3: recordings are deleted this many days after they started, unless on evidence hold.
    retention_days: int = 30
    # The service key that wraps every recording key; must NOT lie in the database. Relative
    # paths are inside the data directory. Created 0600 on first use.
    vault_key_path: str = "recordings.key"
    # Where the encrypted recording files go (relative to the data directory if relative).
    recordings_dir: str = "recordings"
    # Enforcement in the running service (vollmond/service/enforce.py): how often it looks for
    # new warnings/mutes/kicks and for games an admin aborted (also from `vollmond admin`),
    # how long a person's mute is believed before it is read again (the phone mixer asks every
    # 20 ms and must not query the database), and how often the retention job runs.
    enforce_poll_s: float = 1.0
    mute_refresh_s: float = 5.0
    retention_interval_s: float = 3600.0

    def __post_init__(self) -> None:
        for name in (
            "moderator_ban_max_hours",
            "alarm_limit",
            "alarm_window_s",
            "recording_max_s",
            "conference_recording_s",
            "recording_notice_wait_s",
            "retention_days",
            "enforce_poll_s",
            "mute_refresh_s",
            "retention_interval_s",
        ):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive")
        for name in ("karma_warn", "karma_mute", "karma_kick", "karma_ban", "karma_false_alarm"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} is a deduction and must not be negative")
        if not self.vault_key_path.strip() or not self.recordings_dir.strip():
            raise ValueError("vault_key_path and recordings_dir must name a path")
