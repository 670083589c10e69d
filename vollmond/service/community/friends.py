"""Friends (X4): asking, accepting, removing and blocking; where friends are; invitations.

Where a friend is shows only what anyone may see anyway (X6, never a secret): at a table of a
public game (its world and id, so one can join it or watch), "in a private round" with nothing
more, or just online (the announcer, the lobby). An invitation to one's own table (a table
that has not started, where the inviter sits) is held here for `invitation_ttl_s` (where
processes share the service, every process holds every invitation:
`service/shards/community.py`); the invited friend's channel is told at once (a watcher per
person: the caller in the announcer hears it, the page asks every few seconds) and accepting
takes a seat through the hub like any join — a private round needs no code then: the
invitation is it.

An invitation names where it leads (:data:`Destination`): a table (:class:`ToTable`) or a
private conference room the inviter opened for the two of them (:class:`ToRoom`, made by
:mod:`.room_call`). The channels tell and accept each kind in one place each; everything
else (who may invite whom, how long it lives, blocks) is the same for both.
"""

from __future__ import annotations

import enum
import itertools
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from sqlalchemy import ColumnElement, or_, select

from vollmond.service.community.errors import CommunityError
from vollmond.service.community.online import Online
from vollmond.service.community.people import Named, as_person, names
from vollmond.settings.community import FriendsSettings
from vollmond.store.community import (
    Friend,
    FriendshipConflictError,
    FriendState,
    accept_friend,
    addresses_of,
    are_friends,
    block,
    is_blocked,
    list_blocked,
    list_friends,
    remove_friend,
    request_friend,
    unblock,
)
from vollmond.store.db import Sessions
from vollmond.store.models import GameRow, GameStatus, SeatRow
from vollmond.store.owners import Owner


class Place(enum.StrEnum):
    OFFLINE = "offline"
    ONLINE = "online"  # the announcer, the lobby
    TABLE = "table"  # a public table that has not started: one may join
    GAME = "game"  # a running public game: one may watch
    PRIVATE = "private"  # a private round: nothing more is said


@dataclass(frozen=True, slots=True)
class Whereabouts:
    place: Place
    world: str | None = None
    game_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"place": self.place.value, "world": self.world, "game": self.game_id}


@dataclass(frozen=True, slots=True)
class FriendView:
    person: Named
    state: FriendState
    where: Whereabouts

    def to_json(self) -> dict[str, Any]:
        return {**self.person.to_json(), "state": self.state.value, "where": self.where.to_json()}


class Bound(enum.StrEnum):
    """What kind of place an invitation leads to: the channels' catalogue words end in it
    (``phone.friends.invited_<kind>``, the page's ``invitation_<kind>``)."""

    TABLE = "table"  # a public table that has not started
    PRIVATE = "private"  # a private round that has not started
    ROOM = "room"  # a private conference room (X2)


@dataclass(frozen=True, slots=True)
class ToTable:
    """The inviter's table, not started yet: accepting seats the friend there."""

    game_id: str
    world: str
    private: bool

    @property
    def kind(self) -> Bound:
        return Bound.PRIVATE if self.private else Bound.TABLE

    def to_json(self) -> dict[str, Any]:
        return {"game": self.game_id, "world": self.world, "private": self.private}


@dataclass(frozen=True, slots=True)
class ToRoom:
    """A private conference room the inviter is in: accepting enters it without its code
    (the invitation is the key, as with a private round). It has no world."""

    room_id: str
    kind: ClassVar[Bound] = Bound.ROOM
    world: ClassVar[str | None] = None

    def to_json(self) -> dict[str, Any]:
        return {"room": self.room_id}


Destination = ToTable | ToRoom
"""Where an invitation leads."""


@dataclass(frozen=True, slots=True)
class Invitation:
    id: int
    inviter: Named
    invitee: Owner
    to: Destination
    expires: float

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "from": self.inviter.to_json(),
            "kind": self.to.kind.value,
            **self.to.to_json(),
        }


Watcher = Callable[[Invitation], None]


class Friends:
    def __init__(
        self,
        sessions: Sessions,
        settings: FriendsSettings,
        online: Online,
        clock: Callable[[], float] = time.monotonic,
        ids: Iterator[int] | None = None,
    ) -> None:
        """`ids`: the invitations' numbers (shared by processes: each its own series)."""
        self.sessions = sessions
        self.settings = settings
        self.online = online
        self.clock = clock
        self._invitations: dict[int, Invitation] = {}
        self._ids = ids if ids is not None else itertools.count(1)
        self._watchers: dict[Owner, list[Watcher]] = {}

    # -- the list --------------------------------------------------------------------------
    async def ask(self, me: Owner, other: Owner) -> FriendState:
        """Ask `other` (or accept, if they asked first)."""
        me, other = await as_person(self.sessions, me), await as_person(self.sessions, other)
        if len(await list_friends(self.sessions, me)) >= self.settings.max_friends:
            raise CommunityError("friends_full", max=self.settings.max_friends)
        state: FriendState = await self._store(request_friend(self.sessions, me, other))
        return state

    async def accept(self, me: Owner, other: Owner) -> None:
        me, other = await as_person(self.sessions, me), await as_person(self.sessions, other)
        await self._store(accept_friend(self.sessions, me, other))

    async def remove(self, me: Owner, other: Owner) -> None:
        me, other = await as_person(self.sessions, me), await as_person(self.sessions, other)
        if not await remove_friend(self.sessions, me, other):
            raise CommunityError("not_friends")

    async def block(self, me: Owner, other: Owner) -> None:
        me, other = await as_person(self.sessions, me), await as_person(self.sessions, other)
        await self._store(block(self.sessions, me, other))
        self._drop_invitations(inviter=other, invitee=me)

    async def unblock(self, me: Owner, other: Owner) -> None:
        me, other = await as_person(self.sessions, me), await as_person(self.sessions, other)
        await unblock(self.sessions, me, other)

    async def blocked(self, me: Owner) -> list[Named]:
        owners = await list_blocked(self.sessions, me)
        named = await names(self.sessions, owners)
        return [named[o] for o in owners]

    @staticmethod
    async def _store(step: Any) -> Any:
        try:
            return await step
        except FriendshipConflictError as exc:
            raise CommunityError(exc.code) from None

    async def listing(self, me: Owner) -> list[FriendView]:
        """Friends (where they are) and open requests both ways."""
        friends: list[Friend] = await list_friends(self.sessions, me)
        named = await names(self.sessions, [f.other for f in friends])
        online = await self.online.online_of(
            f.other for f in friends if f.state is FriendState.FRIEND
        )
        out = []
        for friend in friends:
            where = Whereabouts(Place.OFFLINE)
            if friend.other in online:
                where = await self._where_online(friend.other)
            out.append(FriendView(named[friend.other], friend.state, where))
        return out

    async def where(self, person: Owner) -> Whereabouts:
        """Where `person` is, as far as a friend may know (offline: nothing)."""
        if not await self.online.online_of([person]):
            return Whereabouts(Place.OFFLINE)
        return await self._where_online(person)

    async def _where_online(self, person: Owner) -> Whereabouts:
        async with self.sessions() as session:
            mine = await addresses_of(session, person)
            seat_of: list[ColumnElement[bool]] = []
            if mine.phones:
                seat_of.append(SeatRow.phone_identity_id.in_(mine.phones))
            if person.account_id is not None:
                seat_of.append(SeatRow.account_id == person.account_id)
            else:
                seat_of.append(SeatRow.phone_identity_id == person.phone_id)
            row = (
                await session.execute(
                    select(GameRow.id, GameRow.world, GameRow.invitation_hash, GameRow.status)
                    .join(SeatRow, SeatRow.game_id == GameRow.id)
                    .where(
                        or_(*seat_of),
                        GameRow.status.in_((GameStatus.LOBBY, GameStatus.RUNNING)),
                    )
                    .order_by(SeatRow.joined_at.desc())
                    .limit(1)
                )
            ).first()
        if row is None:
            return Whereabouts(Place.ONLINE)
        game_id, world, invitation_hash, status = row
        if invitation_hash is not None:  # a private round
            return Whereabouts(Place.PRIVATE)
        place = Place.TABLE if GameStatus(status) is GameStatus.LOBBY else Place.GAME
        return Whereabouts(place, str(world), str(game_id))

    # -- invitations -----------------------------------------------------------------------
    async def invite(self, me: Owner, friend: Owner, game_id: str) -> Invitation:
        """Invite `friend` to my table `game_id` (it has not started and I sit there)."""
        me, friend = await self._friend_of(me, friend)
        game = await self._my_table(me, game_id)
        to = ToTable(game_id, str(game.world), game.invitation_hash is not None)
        return await self._send(me, friend, to)

    async def reachable(self, me: Owner, friend: Owner) -> Owner:
        """`friend` as a person, if `me` may call them into a room now: a friend (who has not
        blocked me) who is online. Asked before a room is opened, so nobody sits alone in a
        room waiting for someone who is not there (docs/decisions.md)."""
        me, friend = await self._friend_of(me, friend)
        if not await self.online.online_of([friend]):
            raise CommunityError("friend_offline")
        return friend

    async def invite_to_room(self, me: Owner, friend: Owner, room_id: str) -> Invitation:
        """Invite `friend` into the conference room `room_id` (see :mod:`.room_call`)."""
        me, friend = await self._friend_of(me, friend)
        return await self._send(me, friend, ToRoom(room_id))

    async def _friend_of(self, me: Owner, friend: Owner) -> tuple[Owner, Owner]:
        """Both as persons; CommunityError("not_friends") unless they are friends and
        `friend` has not blocked `me`."""
        me, friend = await as_person(self.sessions, me), await as_person(self.sessions, friend)
        if not await are_friends(self.sessions, me, friend):
            raise CommunityError("not_friends")
        if await is_blocked(self.sessions, friend, me):
            raise CommunityError("not_friends")  # a block is never told as such
        return me, friend

    async def _send(self, me: Owner, friend: Owner, to: Destination) -> Invitation:
        inviter = (await names(self.sessions, [me]))[me]
        expires = self.clock() + self.settings.invitation_ttl_s
        invitation = Invitation(next(self._ids), inviter, friend, to, expires)
        self._add(invitation)
        return invitation

    def _add(self, invitation: Invitation) -> None:
        """Hold `invitation` and tell the invitee's watchers here."""
        self._invitations[invitation.id] = invitation
        for watcher in list(self._watchers.get(invitation.invitee, ())):
            watcher(invitation)

    async def _my_table(self, me: Owner, game_id: str) -> GameRow:
        async with self.sessions() as session:
            game = await session.get(GameRow, game_id)
            mine = await addresses_of(session, me)
            seated = await session.scalar(
                select(SeatRow.id).where(
                    SeatRow.game_id == game_id,
                    or_(
                        SeatRow.account_id == me.account_id
                        if me.account_id is not None
                        else SeatRow.phone_identity_id == me.phone_id,
                        SeatRow.phone_identity_id.in_(mine.phones),
                    ),
                )
            )
        if game is None or seated is None or GameStatus(game.status) is not GameStatus.LOBBY:
            raise CommunityError("no_table")
        return game

    def invitations(self, me: Owner) -> list[Invitation]:
        """The live invitations to `me` (a person), newest first."""
        now = self.clock()
        for key, inv in list(self._invitations.items()):
            if inv.expires <= now:
                del self._invitations[key]
        return sorted(
            (i for i in self._invitations.values() if i.invitee == me),
            key=lambda i: -i.id,
        )

    def invitation(self, me: Owner, invitation_id: int) -> Invitation:
        """One of my live invitations; CommunityError("invitation_not_found") else."""
        invitation = next((i for i in self.invitations(me) if i.id == invitation_id), None)
        if invitation is None:
            raise CommunityError("invitation_not_found")
        return invitation

    def take(self, me: Owner, invitation_id: int) -> Invitation:
        """Use one of my invitations (the channel seats me); it is gone afterwards."""
        invitation = self.invitation(me, invitation_id)
        self._invitations.pop(invitation_id, None)
        return invitation

    def withdraw(self, to: Destination) -> None:
        """Every invitation to `to` ends (a conference room closed: nobody is left in it)."""
        for key, inv in list(self._invitations.items()):
            if inv.to == to:
                del self._invitations[key]

    def _drop_invitations(self, *, inviter: Owner, invitee: Owner) -> None:
        for key, inv in list(self._invitations.items()):
            if inv.inviter.owner == inviter and inv.invitee == invitee:
                del self._invitations[key]

    def watch(self, person: Owner, watcher: Watcher) -> Callable[[], None]:
        """Tell `watcher` of every new invitation to `person` until the returned function
        is called (a caller's announcer while the call lasts)."""
        self._watchers.setdefault(person, []).append(watcher)

        def unwatch() -> None:
            watchers = self._watchers.get(person, [])
            if watcher in watchers:
                watchers.remove(watcher)
            if not watchers:
                self._watchers.pop(person, None)

        return unwatch

    async def close(self) -> None:
        """The service stops (shared: no more news from the other processes)."""
