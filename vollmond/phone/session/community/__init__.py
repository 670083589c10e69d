"""The mailbox (X3) and friends (X4) on the telephone, and their hooks into the announcer.

The announcer (`menu.py`) calls in here at four places, one line each, so this part stays in
its own modules: :func:`signed_in` (online for friends, invitations followed, "N neue
Nachrichten"), :func:`menu_lines` (an invitation not told yet),
:data:`MENU_KEYS` and :func:`menu_key` (``6`` mailbox, ``7`` friends, ``8`` accepts the
latest invitation: to a table, or into a friend's conference room), and :func:`closed` when
the call ends.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from vollmond.phone.session.community.common import community, person, spoken_name
from vollmond.phone.session.community.friends import open_friends
from vollmond.phone.session.community.mailbox import MailMenu, open_mailbox
from vollmond.phone.session.conference import enter_room
from vollmond.phone.session.prompts import Priority
from vollmond.service.community import CommunityError, Invitation, ToRoom, ToTable
from vollmond.service.conference import RoomClosedError, conference_rooms
from vollmond.service.hub import Owner
from vollmond.worlds import get_world

if TYPE_CHECKING:
    from vollmond.phone.session.menu import Announcer
    from vollmond.phone.session.session import PhoneSession

MAILBOX_KEY: Final = "6"
FRIENDS_KEY: Final = "7"
ACCEPT_KEY: Final = "8"
MENU_KEYS: Final = frozenset((MAILBOX_KEY, FRIENDS_KEY, ACCEPT_KEY))

#: Announcer states in which an invitation is told at once (elsewhere: when back in the menu).
_AT_EASE: Final = frozenset(("menu", "worlds", "tables", "watch", "rulesets", "code", "seatcode"))


@dataclass
class _Call:
    """What the community keeps per call."""

    ended: list[Callable[[], None]] = field(default_factory=list)
    told: set[int] = field(default_factory=set)


_CALLS: weakref.WeakKeyDictionary[PhoneSession, _Call] = weakref.WeakKeyDictionary()


async def signed_in(announcer: Announcer) -> None:
    """A caller with a phone ID (or account) is online for their friends while the call
    lasts, hears invitations to a friend's table, and is told of new messages."""
    session = announcer.s
    me = person(session)
    if me is None:
        return
    call = _CALLS.setdefault(session, _Call())
    if call.ended:
        return  # signed in once already on this call
    box = community(session)
    call.ended.append(box.online.call_started(me))
    call.ended.append(box.friends.watch(me, lambda inv: _invited(session, inv)))
    unread = await box.mail.unread(me)
    if unread:
        session.say(session.t("phone.mail.notice", n=unread), remember=False)


def _invited(session: PhoneSession, invitation: Invitation) -> None:
    announcer = session.announcer
    if session.mode is announcer and announcer.state in _AT_EASE:
        _tell(session, invitation, Priority.NEWS)


def _tell(session: PhoneSession, invitation: Invitation, priority: Priority) -> None:
    call = _CALLS.setdefault(session, _Call())
    call.told.add(invitation.id)
    session.say(_invitation_line(session, invitation), priority=priority)


def _invitation_line(session: PhoneSession, invitation: Invitation) -> str:
    """ "Anna lädt dich an den Tisch in Werwolf ein …" / "… ruft dich in einen privaten
    Konferenzraum …": the words follow where the invitation leads."""
    to = invitation.to
    world = get_world(to.world) if to.world is not None else None
    key = f"phone.friends.invited_{to.kind.value}"
    return session.t(key, world, name=spoken_name(session, invitation.inviter))


def menu_lines(announcer: Announcer) -> list[str]:
    """A friend's invitation not told yet, after the announcer's choices (which name the
    keys 6 and 7 themselves)."""
    session = announcer.s
    me = person(session)
    if me is None:
        return []
    lines: list[str] = []
    call = _CALLS.get(session)
    for invitation in community(session).friends.invitations(me)[:1]:
        if call is not None and invitation.id not in call.told:
            call.told.add(invitation.id)
            lines.append(_invitation_line(session, invitation))
    return lines


async def menu_key(announcer: Announcer, choice: str) -> bool:
    """Handle ``6``, ``7`` or ``8`` in the announcer; False for any other key."""
    session = announcer.s
    if choice == MAILBOX_KEY:
        await open_mailbox(session)
    elif choice == FRIENDS_KEY:
        await open_friends(session)
    elif choice == ACCEPT_KEY:
        await _accept(announcer)
    else:
        return False
    return True


async def _accept(announcer: Announcer) -> None:
    session = announcer.s
    me = person(session)
    invitations = community(session).friends.invitations(me) if me is not None else []
    if me is None or not invitations:
        session.refuse(session.t("phone.friends.no_invitation"))
        return
    invitation = invitations[0]
    match invitation.to:
        case ToTable(game_id=game_id):
            friends = community(session).friends
            try:
                friends.invitation(me, invitation.id)  # still open
            except CommunityError:
                session.refuse(session.t("phone.friends.no_invitation"))
                return
            await announcer._join(game_id)
            if announcer.lobby_game == game_id:  # used once seated; a refused join keeps it
                with contextlib.suppress(CommunityError):
                    friends.take(me, invitation.id)
        case ToRoom(room_id=room_id):
            await _enter_invited_room(session, me, invitation.id, room_id)


async def _enter_invited_room(
    session: PhoneSession, me: Owner, invitation_id: int, room_id: str
) -> None:
    """Into the friend's conference room; the invitation is used once the caller is in (a
    full room or a ban keeps it, as a full table does in the browser)."""
    try:
        room = await conference_rooms(session.hub).invited(room_id)
    except RoomClosedError:
        community(session).friends.withdraw(ToRoom(room_id))
        session.refuse(session.t("rooms.error.closed"))
        return
    if await enter_room(session, room, listening=False):
        with contextlib.suppress(CommunityError):  # ran out meanwhile: the caller is in anyway
            community(session).friends.take(me, invitation_id)


def closed(session: PhoneSession) -> None:
    """The call ended: offline for friends, no more invitations, no recording kept."""
    call = _CALLS.pop(session, None)
    if call is not None:
        for end in call.ended:
            end()
    if isinstance(session.mode, MailMenu):
        session.mode.close()


__all__ = ["MENU_KEYS", "closed", "menu_key", "menu_lines", "signed_in"]
