"""A moderator on the telephone is told of a new operator call (O1, issue 9).

Whoever signs in on the phone with an account that may moderate (moderator or admin) follows
the moderation core's live alarm feed for the rest of the call, wherever they are (announcer
menu, a game, listening in): each new alarm is a short spoken notice, ahead of the game's news
(urgent), and not remembered as the block ``#1`` repeats. The role is read again at every
alarm, so a demoted moderator stops hearing them at the next one. Taking and resolving alarms
(the same feed) is not announced; that is the console's business.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vollmond.moderation.alarms import AlarmStatus
from vollmond.phone.session.prompts import Priority

if TYPE_CHECKING:
    from vollmond.phone.session.session import PhoneSession


async def follow_alarms(session: PhoneSession) -> None:
    """Until the call ends: speak each new alarm to this caller while they may moderate."""
    enforcer = session.enforcer
    if enforcer is None:
        return
    async with enforcer.moderation.feed.subscribe() as queue:
        session.on_duty = True
        try:
            while True:
                alarm = await queue.get()
                if alarm.status is not AlarmStatus.OPEN:
                    continue
                if not await enforcer.is_staff(session.account_id):
                    continue
                notice = enforcer.duty_notice(alarm, session.lang)
                session.say(notice, priority=Priority.URGENT, remember=False)
        finally:
            session.on_duty = False


async def go_on_duty(session: PhoneSession) -> None:
    """After sign-in: a caller whose account may moderate follows the alarm feed."""
    enforcer = session.enforcer
    if enforcer is None or session.on_duty or not await enforcer.is_staff(session.account_id):
        return
    session.spawn(follow_alarms(session), name=f"moderator-duty:{session.account_id}")
