"""The mailbox (X3): text messages from the web, voice messages from the phone.

Every account and every phone-only identity has one. What the service decides here and the
store does not: the operators' limits (`[mailbox]`: length, count, size, a sender's rate,
retention), that a message from someone the recipient blocked is refused, and where a voice
message's audio lies (encrypted, `voicebox.py`). Bans (area `mailbox`, O5) are checked by the
channels before they call in, as for every other area.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import unicodedata
from collections import deque
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta

import structlog

from vollmond.service.community.errors import CommunityError
from vollmond.service.community.people import as_person
from vollmond.service.community.voicebox import VoiceBox
from vollmond.settings.community import MailboxSettings
from vollmond.store.community import (
    Mail,
    MailKind,
    MailNotFoundError,
    add_mail,
    delete_mail,
    expire_mail,
    get_mail,
    is_blocked,
    keep_mail,
    list_mail,
    mail_counts,
    mark_read,
)
from vollmond.store.db import Sessions
from vollmond.store.owners import Owner
from vollmond.store.types import utcnow

log = structlog.get_logger(__name__)

SAMPLE_RATE = 8000
SAMPLE_BYTES = 2
#: Senders whose rate is remembered before the quiet ones are forgotten.
RATE_KEYS = 10_000


def clean_text(text: str) -> str:
    """A message as typed, without control characters (line breaks become spaces)."""
    spaced = "".join(" " if unicodedata.category(c).startswith("C") else c for c in text)
    return " ".join(spaced.split())


class Mailbox:
    def __init__(
        self,
        sessions: Sessions,
        settings: MailboxSettings,
        voices: VoiceBox,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.sessions = sessions
        self.settings = settings
        self.voices = voices
        self.clock = clock
        self._sent: dict[Owner, deque[float]] = {}

    # -- leaving a message -----------------------------------------------------------------
    async def send_text(
        self, sender: Owner, recipient: Owner, text: str, *, reply_to: int | None = None
    ) -> Mail:
        body = clean_text(text)
        if not body:
            raise CommunityError("mail_empty")
        if len(body) > self.settings.text_max_chars:
            raise CommunityError("mail_too_long", max=self.settings.text_max_chars)
        size = len(body.encode())
        sender, recipient = await self._admit(sender, recipient, size)
        return await add_mail(
            self.sessions, recipient, sender, body=body, size_bytes=size, reply_to=reply_to
        )

    async def send_voice(
        self, sender: Owner, recipient: Owner, pcm: bytes, *, reply_to: int | None = None
    ) -> Mail:
        """A recorded message (8 kHz 16-bit mono); longer than `voice_max_s` is refused."""
        duration_ms = len(pcm) * 1000 // (SAMPLE_RATE * SAMPLE_BYTES)
        if not pcm:
            raise CommunityError("mail_empty")
        if duration_ms > self.settings.voice_max_s * 1000 + 100:  # one frame of slack
            raise CommunityError("mail_too_long_voice", max=self.settings.voice_max_s)
        sender, recipient = await self._admit(sender, recipient, len(pcm))
        voice = await self.voices.seal(pcm)
        try:
            return await add_mail(
                self.sessions,
                recipient,
                sender,
                voice=voice,
                duration_ms=duration_ms,
                size_bytes=len(pcm),
                reply_to=reply_to,
            )
        except Exception:
            self.voices.remove(voice)
            raise

    async def _admit(self, sender: Owner, recipient: Owner, size: int) -> tuple[Owner, Owner]:
        """The checks before any message: blocked, the sender's rate, the recipient's room."""
        sender = await as_person(self.sessions, sender)
        recipient = await as_person(self.sessions, recipient)
        if sender == recipient:
            raise CommunityError("mail_self")
        if await is_blocked(self.sessions, recipient, sender):
            raise CommunityError("mail_blocked")
        now = self.clock()
        if len(self._sent) > RATE_KEYS:  # forget senders quiet for a minute
            self._sent = {k: v for k, v in self._sent.items() if v and now - v[-1] <= 60.0}
        sent = self._sent.setdefault(sender, deque())
        while sent and now - sent[0] > 60.0:
            sent.popleft()
        if len(sent) >= self.settings.sends_per_minute:
            raise CommunityError("mail_rate")
        count, _, used = await mail_counts(self.sessions, recipient)
        if count >= self.settings.max_messages or used + size > self.settings.max_bytes:
            raise CommunityError("mail_full")
        sent.append(now)
        return sender, recipient

    # -- one's own mailbox -----------------------------------------------------------------
    async def inbox(self, owner: Owner) -> list[Mail]:
        return await list_mail(self.sessions, owner)

    async def unread(self, owner: Owner) -> int:
        return (await mail_counts(self.sessions, owner))[1]

    async def read(self, owner: Owner, mail_id: int) -> Mail:
        """The message, now marked as read (heard)."""
        return await self._guard(mark_read(self.sessions, owner, mail_id), mail_id)

    async def get(self, owner: Owner, mail_id: int) -> Mail:
        return await self._guard(get_mail(self.sessions, owner, mail_id), mail_id)

    async def audio(self, owner: Owner, mail_id: int) -> bytes:
        """A voice message's PCM (only its recipient's), marked as heard."""
        mail = await self.read(owner, mail_id)
        if mail.kind is not MailKind.VOICE or mail.voice is None:
            raise CommunityError("mail_not_voice")
        return await self.voices.read(mail.voice)

    async def keep(self, owner: Owner, mail_id: int, kept: bool = True) -> Mail:
        return await self._guard(keep_mail(self.sessions, owner, mail_id, kept), mail_id)

    async def delete(self, owner: Owner, mail_id: int) -> None:
        mail = await self._guard(delete_mail(self.sessions, owner, mail_id), mail_id)
        if mail.voice is not None:
            self.voices.remove(mail.voice)

    async def reply_text(self, owner: Owner, mail_id: int, text: str) -> Mail:
        mail = await self.get(owner, mail_id)
        return await self.send_text(owner, mail.sender, text, reply_to=mail.id)

    @staticmethod
    async def _guard(step: Awaitable[Mail], mail_id: int) -> Mail:
        try:
            return await step
        except MailNotFoundError:
            raise CommunityError("mail_not_found", id=mail_id) from None

    # -- retention -------------------------------------------------------------------------
    async def expire(self, now: datetime | None = None) -> int:
        """Delete the messages older than `retention_days` that were not kept."""
        if self.settings.retention_days == 0:
            return 0
        before = (now or utcnow()) - timedelta(days=self.settings.retention_days)
        gone = await expire_mail(self.sessions, before)
        for mail in gone:
            if mail.voice is not None:
                self.voices.remove(mail.voice)
        return len(gone)

    async def run_retention(self) -> None:
        while True:
            with contextlib.suppress(Exception):
                count = await self.expire()
                if count:
                    log.info("mail_expired", count=count)
            await asyncio.sleep(self.settings.retention_interval_s)
