"""The mailbox by phone (X3, key ``6`` in the announcer).

``1`` plays the messages one by one, newest first (a text is read aloud, a voice message
played); on a message ``1`` next, ``2`` again, ``3`` reply by voice, ``4`` keep, ``7`` delete,
``0`` back. ``2`` leaves a voice message for a phone ID (typed with ``#``); friends are
reached from the friends list (key ``7`` of the announcer). ``0`` back to the announcer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from vollmond.moderation import MAILBOX
from vollmond.phone.session.community.common import (
    back_to_announcer,
    community,
    error_line,
    spoken_name,
)
from vollmond.phone.session.community.recorder import Step, VoiceRecorder
from vollmond.phone.session.keys import Entry, Single, Token
from vollmond.service.community import (
    CommunityError,
    Mail,
    Mailbox,
    MailKind,
    find_person,
    names,
)
from vollmond.service.hub import Owner

if TYPE_CHECKING:
    from vollmond.phone.session.session import PhoneSession


DIGITS = frozenset("0123456789")


class MailMenu:
    """A session mode: the caller's mailbox."""

    def __init__(self, session: PhoneSession, me: Owner) -> None:
        self.s = session
        self.me = me
        self.state = "top"
        self.mails: list[Mail] = []
        self.index = 0
        self.recorder: VoiceRecorder | None = None

    @property
    def box(self) -> Mailbox:
        return community(self.s).mail

    async def enter(self) -> None:
        self.mails = await self.box.inbox(self.me)
        unread = sum(1 for m in self.mails if m.unread)
        self.state = "top"
        self.s.set_mode(self)
        self.s.say(
            self.s.t("phone.mail.summary", n=len(self.mails), new=unread),
            self.s.t("phone.mail.top_keys"),
        )

    async def leave_message_for(self, recipient: Owner, *, reply_to: int | None = None) -> None:
        """Record a message for `recipient` (also from the friends list)."""
        self.s.set_mode(self)
        self.state = "record"

        async def send(pcm: bytes) -> bool:
            try:
                await self.box.send_voice(self.me, recipient, pcm, reply_to=reply_to)
            except CommunityError as exc:
                self.s.refuse(error_line(self.s, exc))
                return False
            self.s.say(self.s.t("phone.mail.sent"), remember=False)
            return True

        max_s = self.box.settings.voice_max_s
        self.recorder = VoiceRecorder(self.s, max_s, send, self._recorded)
        self.recorder.begin()

    def _recorded(self) -> None:
        self.recorder = None
        back_to_announcer(self.s)

    # -- Mode ------------------------------------------------------------------------------
    def immediate(self) -> frozenset[str]:
        if self.recorder is not None:
            return self.recorder.immediate
        # The mailbox's choices are single keys: any digit acts at once (a wrong one is told).
        return frozenset() if self.state == "to" else DIGITS

    def hash_immediate(self) -> bool:
        return self.recorder is not None and self.recorder.hash_immediate

    def help(self) -> list[str]:
        if self.recorder is not None:
            return self.recorder.help()
        key = {"top": "top_long", "message": "message_long", "to": "ask_to_long"}[self.state]
        return [self.s.t(f"phone.mail.{key}")]

    def reminder(self) -> list[str] | None:
        if self.recorder is not None:
            return self.recorder.reminder()
        key = {"top": "top_keys", "message": "message_keys", "to": "ask_to"}[self.state]
        return [self.s.t(f"phone.mail.{key}")]

    async def handle(self, token: Token) -> None:
        if self.recorder is not None:
            await self.recorder.handle(token)
            return
        choice = token.key if isinstance(token, Single) else None
        if isinstance(token, Entry):
            choice = token.digits
        if choice is None:
            self.s.refuse(self.s.t("phone.keyerror.not_here"))
            return
        if self.state == "to":
            await self._to(choice)
        elif self.state == "message":
            await self._message(choice)
        else:
            await self._top(choice)

    async def _top(self, choice: str) -> None:
        if choice == "1":
            if not self.mails:
                self.s.say(self.s.t("phone.mail.empty"), self.s.t("phone.mail.top_keys"))
                return
            self.index = 0
            await self._play()
        elif choice == "2":
            self.state = "to"
            self.s.say(self.s.t("phone.mail.ask_to"))
        elif choice == "0":
            back_to_announcer(self.s)
        else:
            self.s.refuse(self.s.t("phone.menu.no_choice", n=int(choice)))

    async def _to(self, choice: str) -> None:
        if choice == "0":
            await self.enter()
            return
        try:
            recipient = await find_person(self.s.hub.sessions, choice)
        except CommunityError as exc:
            self.s.refuse(error_line(self.s, exc))
            return
        await self.leave_message_for(recipient)

    async def _play(self) -> None:
        mail = self.mails[self.index]
        self.state = "message"
        sender = (await names(self.s.hub.sessions, [mail.sender]))[mail.sender]
        head = self.s.t(
            "phone.mail.header",
            n=self.index + 1,
            size=len(self.mails),
            name=spoken_name(self.s, sender),
            new=self.s.t("phone.mail.new") if mail.unread else "",
        )
        if mail.kind is MailKind.TEXT:
            self.s.say(head, self.s.t("phone.mail.text", text=mail.body or ""))
        else:
            self.s.say(head, remember=False)
            pcm = await self.box.audio(self.me, mail.id)
            audio = np.frombuffer(pcm, dtype="<i2").astype(np.int16)
            self.s.tone("mail_message", audio)
        await self.box.read(self.me, mail.id)
        self.s.say(self.s.t("phone.mail.message_keys"))

    async def _message(self, choice: str) -> None:
        mail = self.mails[self.index]
        if choice == "1":
            if self.index + 1 >= len(self.mails):
                self.s.say(self.s.t("phone.mail.last"), self.s.t("phone.mail.message_keys"))
                return
            self.index += 1
            await self._play()
        elif choice == "2":
            await self._play()
        elif choice == "3":
            await self.leave_message_for(mail.sender, reply_to=mail.id)
        elif choice == "4":
            await self.box.keep(self.me, mail.id)
            self.s.say(self.s.t("phone.mail.kept"), self.s.t("phone.mail.message_keys"))
        elif choice == "7":
            await self.box.delete(self.me, mail.id)
            self.mails.pop(self.index)
            self.s.say(self.s.t("phone.mail.deleted"), remember=False)
            if not self.mails:
                await self.enter()
                return
            self.index = min(self.index, len(self.mails) - 1)
            await self._play()
        elif choice == "0":
            await self.enter()
        else:
            self.s.refuse(self.s.t("phone.menu.no_choice", n=int(choice)))

    def close(self) -> None:
        if self.recorder is not None and self.recorder.step is not Step.DONE:
            self.recorder.cancel()


async def open_mailbox(session: PhoneSession) -> None:
    from vollmond.phone.session.community.common import admitted  # noqa: PLC0415

    me = await admitted(session, MAILBOX)
    if me is not None:
        await MailMenu(session, me).enter()
