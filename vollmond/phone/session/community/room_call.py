"""Key ``4`` on a person of the friends list: call them into a conference room (X2, X4).

The caller is put into a private room of their own at once (the room's keys as after ``5``)
and the friend gets an invitation to it (:mod:`vollmond.service.community.room_call`): by
phone they hear it in the announcer and enter with ``8``, in the browser the page shows it.
A friend who is not there is said by name, with the way to leave a message instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vollmond.phone.session.community.common import community, spoken_name
from vollmond.phone.session.conference import enter_room, opening_refused
from vollmond.service.community import CommunityError, Named
from vollmond.service.community.room_call import call_friend
from vollmond.service.conference import ConferenceRoom, RoomError, conference_rooms
from vollmond.service.hub import Owner

if TYPE_CHECKING:
    from vollmond.phone.session.session import PhoneSession


async def call_into_room(session: PhoneSession, me: Owner, friend: Named) -> None:
    """Open a private room, enter it, invite `friend`; refusals are said with their reason
    (not a friend: the shared catalogue's sentence, raised to the friends menu)."""
    name = spoken_name(session, friend)

    async def enter(room: ConferenceRoom) -> bool:
        return await enter_room(session, room, listening=False)

    rooms = conference_rooms(session.hub)
    try:
        invitation = await call_friend(
            community(session).friends, rooms, me, friend.owner, session.person, enter
        )
    except CommunityError as exc:
        if exc.code != "friend_offline":
            raise
        session.refuse(session.t("phone.friends.offline", name=name))
        return
    except RoomError as exc:
        session.refuse(opening_refused(session, exc))
        return
    if invitation is not None:
        session.say(session.t("phone.friends.called", name=name), remember=False)
