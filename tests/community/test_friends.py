"""Friends (X4) on SQLite and PostgreSQL: asking and accepting by account name or phone ID,
removing, blocking, where friends are (never a secret), invitations to one's table and calls
into a private conference room (X2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vollmond.engine.standard import GameOptions
from vollmond.service.community import (
    Bound,
    Community,
    CommunityError,
    Invitation,
    Place,
    ToRoom,
    ToTable,
    find_person,
)
from vollmond.service.community.room_call import call_friend
from vollmond.service.conference import ConferenceRoom, ConferenceRooms, RoomClosedError
from vollmond.service.enforce import Person
from vollmond.service.hub import Hub
from vollmond.store import Sessions, create_account, create_phone_identity
from vollmond.store.community import FriendState
from vollmond.store.owners import Owner

pytestmark = pytest.mark.rule("X4")


async def setup(sessions: Sessions, tmp_path: Path) -> tuple[Community, Owner, Owner, Owner]:
    anna = await create_account(sessions, "Anna", "password-anna")
    bert = await create_account(sessions, "Bert", "password-bert")
    phone = await create_phone_identity(sessions, pin="1234")
    hub = Hub(sessions)
    return (
        Community(hub, tmp_path / "data"),
        Owner.account(anna.id),
        Owner.account(bert.id),
        Owner.phone(phone.id),
    )


def states(listing: list) -> dict[str, str]:  # type: ignore[type-arg]
    return {f.person.key: f.state.value for f in listing}


async def test_add_by_name_or_phone_id_and_the_other_side_accepts(
    sessions: Sessions, tmp_path: Path
) -> None:
    box, anna, bert, phone = await setup(sessions, tmp_path)
    friends = box.friends
    assert await find_person(sessions, " bert ") == bert  # names ignore case and spaces
    assert await friends.ask(anna, await find_person(sessions, "BERT")) is FriendState.ASKED
    assert phone.phone_id is not None
    assert await friends.ask(anna, await find_person(sessions, str(phone.phone_id))) is (
        FriendState.ASKED
    )
    assert states(await friends.listing(anna)) == {
        f"a:{bert.account_id}": "asked",
        f"p:{phone.phone_id}": "asked",
    }
    assert states(await friends.listing(bert)) == {f"a:{anna.account_id}": "asking"}
    await friends.accept(bert, anna)
    assert states(await friends.listing(bert)) == {f"a:{anna.account_id}": "friend"}
    # The phone side accepts by asking back.
    assert await friends.ask(phone, anna) is FriendState.FRIEND
    assert {f.state for f in await friends.listing(anna)} == {FriendState.FRIEND}
    await friends.remove(anna, bert)
    assert states(await friends.listing(bert)) == {}


async def test_bad_requests_get_clear_codes(sessions: Sessions, tmp_path: Path) -> None:
    box, anna, bert, _ = await setup(sessions, tmp_path)
    friends = box.friends
    with pytest.raises(CommunityError) as unknown:
        await find_person(sessions, "9999999")
    assert unknown.value.code == "unknown_person"
    await friends.ask(anna, bert)
    attempts = [
        (friends.ask(anna, anna), "friend_self"),
        (friends.ask(anna, bert), "friend_already_asked"),
        (friends.accept(anna, bert), "friend_no_request"),  # only the asked side accepts
    ]
    for attempt, code in attempts:
        with pytest.raises(CommunityError) as refused:
            await attempt
        assert refused.value.code == code
    await friends.accept(bert, anna)
    with pytest.raises(CommunityError) as again:
        await friends.ask(bert, anna)
    assert again.value.code == "friend_already"


async def test_a_block_ends_the_friendship_and_refuses_new_requests(
    sessions: Sessions, tmp_path: Path
) -> None:
    box, anna, bert, _ = await setup(sessions, tmp_path)
    friends = box.friends
    await friends.ask(anna, bert)
    await friends.accept(bert, anna)
    await friends.block(bert, anna)
    assert await friends.listing(anna) == []
    assert [n.owner for n in await friends.blocked(bert)] == [anna]
    for who, whom in ((anna, bert), (bert, anna)):
        with pytest.raises(CommunityError) as refused:
            await friends.ask(who, whom)
        assert refused.value.code == "friend_unavailable"


async def test_friends_see_where_a_friend_is_but_nothing_secret(
    sessions: Sessions, tmp_path: Path
) -> None:
    box, anna, bert, _ = await setup(sessions, tmp_path)
    hub, friends = box.hub, box.friends
    await friends.ask(anna, bert)
    await friends.accept(bert, anna)

    async def where_bert() -> tuple[Place, str | None, str | None]:
        (view,) = await friends.listing(anna)
        return view.where.place, view.where.world, view.where.game_id

    assert await where_bert() == (Place.OFFLINE, None, None)
    ended = box.online.call_started(bert)
    assert await where_bert() == (Place.ONLINE, None, None)
    public = await hub.found(
        GameOptions(players=5), private=False, host_account_id=bert.account_id, host_name="Bert"
    )
    assert await where_bert() == (Place.TABLE, "werwolf", public.game.id)
    assert public.token is not None
    await hub.leave_lobby(public.game.id, public.token)
    await hub.found(
        GameOptions(players=5), private=True, host_account_id=bert.account_id, host_name="Bert"
    )
    assert await where_bert() == (Place.PRIVATE, None, None)  # not even the world
    ended()
    assert await where_bert() == (Place.OFFLINE, None, None)


async def test_an_invitation_reaches_the_friend_and_seats_them_in_a_private_round(
    sessions: Sessions, tmp_path: Path
) -> None:
    box, anna, bert, phone = await setup(sessions, tmp_path)
    hub, friends = box.hub, box.friends
    await friends.ask(anna, phone)
    await friends.ask(phone, anna)
    table = await hub.found(
        GameOptions(players=5), private=True, host_account_id=anna.account_id, host_name="Anna"
    )
    heard: list[int] = []
    unwatch = friends.watch(phone, lambda inv: heard.append(inv.id))
    invitation = await friends.invite(anna, phone, table.game.id)
    unwatch()
    assert heard == [invitation.id]
    assert invitation.to == ToTable(table.game.id, "werwolf", private=True)
    assert invitation.to.kind is Bound.PRIVATE and invitation.inviter.name == "Anna"
    assert [i.id for i in friends.invitations(phone)] == [invitation.id]
    with pytest.raises(CommunityError) as not_friend:
        await friends.invite(anna, bert, table.game.id)
    assert not_friend.value.code == "not_friends"
    taken = friends.take(phone, invitation.id)
    assert taken.to == invitation.to
    with pytest.raises(CommunityError) as used:
        friends.take(phone, invitation.id)
    assert used.value.code == "invitation_not_found"
    # Only one's own table that has not started.
    await friends.ask(anna, bert)
    await friends.accept(bert, anna)
    other = await hub.found(
        GameOptions(players=5), private=False, host_account_id=bert.account_id, host_name="Bert"
    )
    with pytest.raises(CommunityError) as not_mine:
        await friends.invite(anna, bert, other.game.id)
    assert not_mine.value.code == "no_table"


@pytest.mark.rule("X2", "X4")
async def test_a_friend_is_called_into_a_private_room_and_the_invitation_ends_with_it(
    sessions: Sessions, tmp_path: Path
) -> None:
    box, anna, bert, phone = await setup(sessions, tmp_path)
    friends, rooms = box.friends, ConferenceRooms()
    await friends.ask(anna, bert)
    await friends.accept(bert, anna)
    opened: list[ConferenceRoom] = []

    async def anna_enters(room: ConferenceRoom) -> bool:
        opened.append(room)
        await rooms.enter(room, "Anna", Person(anna.account_id), "web", enforcer=None)
        return True

    async def call(whom: Owner) -> Invitation | None:
        return await call_friend(friends, rooms, anna, whom, Person(anna.account_id), anna_enters)

    # Refused before any room is opened: a friend who is away, someone who is no friend.
    for whom, code in ((bert, "friend_offline"), (phone, "not_friends")):
        with pytest.raises(CommunityError) as refused:
            await call(whom)
        assert refused.value.code == code
    assert opened == []
    ended = box.online.call_started(bert)
    heard: list[int] = []
    unwatch = friends.watch(bert, lambda inv: heard.append(inv.id))
    invitation = await call(bert)
    unwatch()
    (room,) = opened
    assert [m.name for m in room] == ["Anna"] and room.code is not None  # a private room
    assert invitation is not None and invitation.to == ToRoom(room.id)
    assert invitation.to.kind is Bound.ROOM and invitation.inviter.name == "Anna"
    assert invitation.to_json()["kind"] == "room" and invitation.to_json()["room"] == room.id
    assert heard == [invitation.id] and friends.invitations(bert) == [invitation]
    assert await rooms.invited(room.id) is room
    # Anna leaves before Bert comes: the room closes and the invitation with it.
    (anna_in,) = room
    rooms.leave(room, anna_in)
    assert friends.invitations(bert) == []
    with pytest.raises(RoomClosedError):
        await rooms.invited(room.id)

    # A refused entry (a ban) leaves no room behind and invites nobody.
    async def banned(room: ConferenceRoom) -> bool:
        opened.append(room)
        return False

    assert await call_friend(friends, rooms, anna, bert, Person(anna.account_id), banned) is None
    with pytest.raises(RoomClosedError):
        await rooms.invited(opened[-1].id)
    assert friends.invitations(bert) == []
    # Blocked: the same words as for a stranger (a block is never told as such).
    await friends.block(bert, anna)
    with pytest.raises(CommunityError) as blocked:
        await call(bert)
    assert blocked.value.code == "not_friends"
    ended()
