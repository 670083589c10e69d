"""Friends by phone (X4, key ``7`` in the announcer).

The list is read out with numbers: each friend with where they are, then open requests.
``NN#`` picks a person; then ``1`` leaves them a voice message, ``2`` sits down at their
public table (when they sit at one), ``3`` accepts a request, ``4`` calls them into a private
conference room (:mod:`.room_call`), ``7`` removes, ``8`` blocks, ``0`` back. ``00#`` adds a
friend by phone ID (typed, then ``#``); ``0#`` back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vollmond.moderation import FRIENDS
from vollmond.phone.session.community.common import (
    admitted,
    back_to_announcer,
    community,
    error_line,
    spoken_name,
)
from vollmond.phone.session.community.mailbox import MailMenu
from vollmond.phone.session.community.room_call import call_into_room
from vollmond.phone.session.keys import Entry, Single, Token
from vollmond.service.community import (
    CommunityError,
    FriendState,
    FriendView,
    Place,
    find_person,
)
from vollmond.service.hub import Owner
from vollmond.worlds import get_world

if TYPE_CHECKING:
    from vollmond.phone.session.session import PhoneSession


class FriendsMenu:
    """A session mode: the caller's friends."""

    def __init__(self, session: PhoneSession, me: Owner) -> None:
        self.s = session
        self.me = me
        self.state = "list"
        self.people: list[FriendView] = []
        self.chosen: FriendView | None = None

    @property
    def friends(self):  # type: ignore[no-untyped-def]
        return community(self.s).friends

    async def enter(self) -> None:
        self.people = await community(self.s).friends.listing(self.me)
        self.state = "list"
        self.chosen = None
        self.s.set_mode(self)
        self.s.say(self._list_text(), self.s.t("phone.friends.list_keys"))

    def _where(self, view: FriendView) -> str:
        where = view.where
        if where.place in (Place.TABLE, Place.GAME) and where.world is not None:
            return self.s.t(f"phone.friends.where_{where.place.value}", get_world(where.world))
        return self.s.t(f"phone.friends.where_{where.place.value}")

    def _list_text(self) -> str:
        if not self.people:
            return self.s.t("phone.friends.none")
        items = []
        for n, view in enumerate(self.people, start=1):
            name = spoken_name(self.s, view.person)
            if view.state is FriendState.FRIEND:
                items.append(
                    self.s.t("phone.friends.item", n=n, name=name, where=self._where(view))
                )
            else:
                key = f"phone.friends.item_{view.state.value}"
                items.append(self.s.t(key, n=n, name=name))
        return self.s.t("phone.friends.list", list="; ".join(items))

    # -- Mode ------------------------------------------------------------------------------
    def immediate(self) -> frozenset[str]:
        return frozenset("0123456789") if self.state == "person" else frozenset()

    def hash_immediate(self) -> bool:
        return False

    def help(self) -> list[str]:
        key = {"list": "list_long", "person": "person_long", "add": "ask_add_long"}[self.state]
        return [self.s.t(f"phone.friends.{key}")]

    def reminder(self) -> list[str] | None:
        if self.state == "person":
            return [self._person_keys()]
        return [
            self.s.t("phone.friends.ask_add" if self.state == "add" else "phone.friends.list_keys")
        ]

    async def handle(self, token: Token) -> None:
        choice = token.key if isinstance(token, Single) else None
        if isinstance(token, Entry):
            choice = token.digits
        if choice is None:
            self.s.refuse(self.s.t("phone.keyerror.not_here"))
            return
        try:
            if self.state == "add":
                await self._add(choice)
            elif self.state == "person":
                await self._person(choice)
            else:
                await self._list(choice)
        except CommunityError as exc:
            self.s.refuse(error_line(self.s, exc))

    async def _list(self, choice: str) -> None:
        if choice == "0":
            back_to_announcer(self.s)
        elif choice == "00":
            self.state = "add"
            self.s.say(self.s.t("phone.friends.ask_add"))
        elif 1 <= int(choice) <= len(self.people):
            self.chosen = self.people[int(choice) - 1]
            self.state = "person"
            self.s.say(self._person_keys())
        else:
            self.s.refuse(self.s.t("phone.menu.no_choice", n=int(choice)))

    def _person_keys(self) -> str:
        assert self.chosen is not None
        view = self.chosen
        keys = [self.s.t("phone.friends.key_message")]
        if view.where.place is Place.TABLE:
            keys.append(self.s.t("phone.friends.key_join"))
        if view.state is FriendState.ASKING:
            keys.append(self.s.t("phone.friends.key_accept"))
        if view.state is FriendState.FRIEND and view.where.place is not Place.OFFLINE:
            keys.append(self.s.t("phone.friends.key_room"))
        keys += [self.s.t("phone.friends.key_remove"), self.s.t("phone.friends.key_block")]
        return self.s.t(
            "phone.friends.person", name=spoken_name(self.s, view.person), keys=", ".join(keys)
        )

    async def _person(self, choice: str) -> None:
        view = self.chosen
        assert view is not None
        other = view.person.owner
        friends = community(self.s).friends
        if choice == "1":
            await MailMenu(self.s, self.me).leave_message_for(other)
        elif choice == "2" and view.where.place is Place.TABLE and view.where.game_id:
            self.s.set_mode(self.s.announcer)
            await self.s.announcer._join(view.where.game_id)
        elif choice == "3" and view.state is FriendState.ASKING:
            await friends.accept(self.me, other)
            self.s.say(self.s.t("phone.friends.accepted"), remember=False)
            await self.enter()
        elif choice == "4":
            await call_into_room(self.s, self.me, view.person)
        elif choice == "7":
            await friends.remove(self.me, other)
            self.s.say(self.s.t("phone.friends.removed"), remember=False)
            await self.enter()
        elif choice == "8":
            await friends.block(self.me, other)
            self.s.say(self.s.t("phone.friends.blocked"), remember=False)
            await self.enter()
        elif choice == "0":
            await self.enter()
        else:
            self.s.refuse(self._person_keys())

    async def _add(self, choice: str) -> None:
        if choice == "0":
            await self.enter()
            return
        other = await find_person(self.s.hub.sessions, choice)
        state = await community(self.s).friends.ask(self.me, other)
        key = "phone.friends.now_friends" if state is FriendState.FRIEND else "phone.friends.asked"
        self.s.say(self.s.t(key), remember=False)
        await self.enter()


async def open_friends(session: PhoneSession) -> None:
    me = await admitted(session, FRIENDS)
    if me is not None:
        await FriendsMenu(session, me).enter()
