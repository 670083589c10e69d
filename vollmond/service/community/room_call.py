"""Calling a friend into a conference room (X2, X4), the same steps by phone and in the browser.

The caller gets a private room of their own, enters it, and the friend an invitation to it
(:class:`~vollmond.service.community.friends.ToRoom`): a caller in the announcer hears it and
enters with ``8``, a page shows it with a way into the room. Each channel brings only how its
member enters a room (a phone line, a browser's membership), as `enter`.

The order is chosen so that a refusal leaves nothing behind: who may be called (a friend,
not blocking the caller, online) is asked before any room is opened; a room whose entry was
refused (a ban, O5) is dropped again; the invitation is sent only once the caller is in. The
invitation ends with the room: when its last member leaves, nobody can still be called into it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from vollmond.service.community.friends import Friends, Invitation, ToRoom
from vollmond.service.conference import ConferenceRoom, ConferenceRooms, EventKind, RoomEvent
from vollmond.service.enforce import Person
from vollmond.store.owners import Owner

Enter = Callable[[ConferenceRoom], Awaitable[bool]]
"""A channel's way into a room: True once its member is in, False when refused (the channel
has told its member why)."""


async def call_friend(
    friends: Friends,
    rooms: ConferenceRooms,
    me: Owner,
    friend: Owner,
    opener: Person,
    enter: Enter,
) -> Invitation | None:
    """Open a private room for `me`, enter it with `enter`, and invite `friend` into it.

    None when `enter` was refused (the room is gone again). Raises CommunityError
    (``not_friends``, ``friend_offline``) before a room is opened, and RoomError
    (``too_many_private``) when `opener` may not open another room.
    """
    friend = await friends.reachable(me, friend)
    room = await rooms.open_private(opener)
    if not await enter(room):
        rooms.drop_if_empty(room)
        return None
    invitation = await friends.invite_to_room(me, friend, room.id)
    room.observers.add(_withdrawn_when_empty(friends, room))
    return invitation


def _withdrawn_when_empty(friends: Friends, room: ConferenceRoom) -> Callable[[RoomEvent], None]:
    """An observer of `room`: when its last member left, its invitations end (the room is
    closed, its id finds nothing any more)."""

    def observe(event: RoomEvent) -> None:
        if event.kind is EventKind.LEFT and not room.members:
            friends.withdraw(ToRoom(room.id))

    return observe
