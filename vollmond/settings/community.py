"""What the operators decide about the mailbox (X3) and friends (X4).

Two tables of the operator's settings file, `[mailbox]` and `[friends]` (docs/community.md).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class MailboxSettings:
    """Limits of every mailbox: how long a voice message may be, how long a text, how many
    messages and bytes a mailbox holds, and how long a message stays unless kept."""

    # A voice message by phone: at most this many seconds after the tone (the seed: 60).
    voice_max_s: int = 60
    # A text message from the web: at most this many characters.
    text_max_chars: int = 1000
    # A mailbox holds at most this many messages; a full mailbox refuses new ones.
    max_messages: int = 50
    # ... and at most this many bytes of voice and text together (60 s of voice is ~0.96 MB).
    max_bytes: int = 20_000_000
    # Messages not kept are deleted after this many days (0: never).
    retention_days: int = 30
    # How often the retention job runs.
    retention_interval_s: float = 3600.0
    # Messages one sender may leave in a minute (against flooding someone's mailbox).
    sends_per_minute: int = 5

    def __post_init__(self) -> None:
        if not 1 <= self.voice_max_s <= 600:
            raise ValueError("mailbox.voice_max_s must be 1..600")
        for name in ("text_max_chars", "max_messages", "max_bytes", "sends_per_minute"):
            if getattr(self, name) < 1:
                raise ValueError(f"mailbox.{name} must be at least 1")
        if self.retention_days < 0:
            raise ValueError("mailbox.retention_days must not be negative")
        if self.retention_interval_s <= 0:
            raise ValueError("mailbox.retention_interval_s must be positive")


@dataclass(frozen=True, slots=True)
class FriendsSettings:
    """Friends: how many, how long an invitation to a table holds, and when a web player
    counts as online."""

    max_friends: int = 200
    # An invitation to a friend's table expires after this many seconds.
    invitation_ttl_s: float = 300.0
    # A browser counts as online this long after its last call of the friends API (the page
    # asks every 10 s while open).
    web_online_s: float = 30.0

    def __post_init__(self) -> None:
        if self.max_friends < 1:
            raise ValueError("friends.max_friends must be at least 1")
        if self.invitation_ttl_s <= 0 or self.web_online_s <= 0:
            raise ValueError("friends.invitation_ttl_s and web_online_s must be positive")
