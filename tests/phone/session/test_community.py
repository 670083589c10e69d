"""The mailbox (X3) and friends (X4) by phone, on real sessions and a real store: key 6 and
7 in the announcer, messages read aloud, a voice message recorded from the caller's frames,
a friend's invitation accepted with 8, a friend called into a conference room with 4 (X2),
and every wrong key answered with a reason."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from tests.phone.session.support import call_in, heard, press, said, wait_until
from vollmond.engine.standard import GameOptions
from vollmond.i18n import text
from vollmond.phone import capture
from vollmond.phone.session import PhoneSession
from vollmond.phone.session.community.friends import FriendsMenu
from vollmond.phone.session.conference import RoomLine
from vollmond.service.community import Community, MailKind, attach
from vollmond.service.conference import RoomClosedError, RoomKind, conference_rooms
from vollmond.service.hub import Hub, Owner
from vollmond.store import create_account, create_phone_identity
from vollmond.worlds import get_world


def t(key: str, **params: str | int) -> str:
    return text(key, "de", get_world("werwolf"), **params)


@pytest.fixture
def box(hub: Hub, tmp_path: Path) -> Community:
    return attach(Community(hub, tmp_path / "data"))


async def signed_in(hub: Hub) -> tuple[PhoneSession, Owner]:
    identity = await create_phone_identity(hub.sessions, pin="4711")
    session = await call_in(hub)
    await press(session, "1")
    await press(session, f"{identity.id}#")
    await press(session, "4711#")
    assert session.identity_id == identity.id
    return session, Owner.phone(identity.id)


def play_out(session: PhoneSession) -> asyncio.Task[None]:
    """The media clock: pull the session's prompt frames as the line would."""

    async def pump() -> None:
        while True:
            session.next_frame()
            await asyncio.sleep(0)

    return asyncio.create_task(pump())


@pytest.mark.rule("X3")
async def test_a_caller_hears_the_notice_and_a_text_read_aloud_keeps_and_deletes(
    hub: Hub, box: Community
) -> None:
    anna = Owner.account((await create_account(hub.sessions, "Anna", "password-a")).id)
    identity = await create_phone_identity(hub.sessions, pin="4711")
    me = Owner.phone(identity.id)
    await box.mail.send_text(anna, me, "Treffen um acht am Marktplatz")
    session = await call_in(hub)
    await press(session, "1")
    await press(session, f"{identity.id}#")
    await press(session, "4711#")
    assert heard(session, t("phone.mail.notice", n=1))
    await press(session, "6")
    assert heard(session, t("phone.mail.summary", n=1, new=1))
    await press(session, "9")  # a wrong key: why, and where help is
    assert said(session)[-2:] == [t("phone.menu.no_choice", n=9), t("phone.help_hint")]
    await press(session, "1")
    assert heard(session, "Nachricht 1 von 1, von Anna.")
    assert heard(session, t("phone.mail.text", text="Treffen um acht am Marktplatz"))
    assert await box.mail.unread(me) == 0
    await press(session, "4")
    assert (await box.mail.inbox(me))[0].kept
    await press(session, "7")
    assert await box.mail.inbox(me) == []
    assert heard(session, t("phone.mail.summary", n=0, new=0))
    await press(session, "0")
    assert said(session)[-1] == t("phone.menu.choices")
    await session.close()


@pytest.mark.rule("X3", "X4")
async def test_a_voice_message_for_a_friend_from_the_list_is_recorded_after_the_tone(
    hub: Hub, box: Community
) -> None:
    session, me = await signed_in(hub)
    anna = Owner.account((await create_account(hub.sessions, "Anna", "password-a")).id)
    await box.friends.ask(anna, me)
    await press(session, "7")
    assert heard(session, t("phone.friends.item_asking", n=1, name="Anna"))
    await press(session, "1#")
    await press(session, "3")  # accept
    assert heard(session, t("phone.friends.accepted"))
    await press(session, "1#")
    pump = play_out(session)
    try:
        await press(session, "1")  # leave a message
        assert heard(session, t("phone.mail.record", max=60))
        await wait_until(lambda: "record_tone" not in session.prompts.queued_tones)
        await asyncio.sleep(0.05)
        voice = (4000 * np.sin(np.arange(160) * 2 * np.pi * 440 / 8000)).astype(np.int16)
        for _ in range(100):  # two seconds of the caller's voice
            capture.feed(session, voice)
        await press(session, "#")
        assert heard(session, t("phone.mail.review", n=2))
        await press(session, "3")
        assert heard(session, t("phone.mail.sent"))
    finally:
        pump.cancel()
    (mail,) = await box.mail.inbox(anna)
    assert mail.kind is MailKind.VOICE and mail.sender == me and mail.duration_ms == 2000
    pcm = np.frombuffer(await box.mail.audio(anna, mail.id), dtype="<i2")
    assert np.array_equal(pcm[:160], voice)
    await session.close()


@pytest.mark.rule("X4")
async def test_a_friends_invitation_is_told_and_8_seats_the_caller(
    hub: Hub, box: Community
) -> None:
    session, me = await signed_in(hub)
    await press(session, "8")  # nothing to accept yet
    assert said(session)[-2] == t("phone.friends.no_invitation")
    anna = Owner.account((await create_account(hub.sessions, "Anna", "password-a")).id)
    await box.friends.ask(anna, me)
    await box.friends.accept(me, anna)
    table = await hub.found(
        GameOptions(players=5), private=True, host_account_id=anna.account_id, host_name="Anna"
    )
    await box.friends.invite(anna, me, table.game.id)
    assert heard(session, t("phone.friends.invited_private", name="Anna"))
    await press(session, "8")
    assert session.announcer.state == "lobby"
    seats = (await hub.table(table.game.id)).seats
    assert [s.phone_identity_id for s in seats if s.channel == "phone"] == [me.phone_id]
    await session.close()


@pytest.mark.rule("X4")
async def test_an_invitation_to_a_table_that_is_full_is_kept_when_8_is_refused(
    hub: Hub, box: Community
) -> None:
    """The join is refused (the table filled up after the invitation): the caller hears why,
    and the invitation is still theirs (before, 8 used it up before the join was tried, as the
    browser never did)."""
    session, me = await signed_in(hub)
    anna = Owner.account((await create_account(hub.sessions, "Anna", "password-a")).id)
    await box.friends.ask(anna, me)
    await box.friends.accept(me, anna)
    table = await hub.found(
        GameOptions(players=5), private=True, host_account_id=anna.account_id, host_name="Anna"
    )
    invitation = await box.friends.invite(anna, me, table.game.id)
    for name in ("B", "C", "D", "E"):  # the last seat is taken: the game starts
        await hub.join(table.game.id, account_id=None, name=name)
    await press(session, "8")
    assert session.announcer.lobby_game != table.game.id
    assert box.friends.invitations(me) == [invitation]  # kept, not used up by the refusal
    await session.close()


@pytest.mark.rule("X3", "X4")
async def test_bad_input_gets_a_clear_reason(hub: Hub, box: Community) -> None:
    guest = await call_in(hub)
    await press(guest, "2")  # a guest
    await press(guest, "6")
    assert heard(guest, t("phone.community.guest"))
    await guest.close()
    session, me = await signed_in(hub)
    await press(session, "7")
    assert heard(session, t("phone.friends.none"))
    await press(session, "00#")
    await press(session, "9999#")
    assert heard(session, t("web.errors.unknown_person"))
    await press(session, f"{me.phone_id}#")
    assert heard(session, t("web.errors.friend_self"))
    await press(session, "0#")
    await press(session, "5#")  # no friend number 5
    assert heard(session, t("phone.menu.no_choice", n=5))
    await press(session, "0#")
    anna = Owner.account((await create_account(hub.sessions, "Anna", "password-a")).id)
    await box.friends.block(anna, me)
    assert anna.account_id is not None
    await press(session, "6")
    await press(session, "2")
    other = await create_phone_identity(hub.sessions, pin="1111")
    await box.friends.block(Owner.phone(other.id), me)
    await press(session, f"{other.id}#")
    pump = play_out(session)
    try:
        await wait_until(lambda: "record_tone" not in session.prompts.queued_tones)
        await asyncio.sleep(0.05)
        capture.feed(session, np.full(800, 1000, dtype=np.int16))
        await press(session, "#")
        await press(session, "3")
        assert heard(session, t("web.errors.mail_blocked"))
    finally:
        pump.cancel()
    assert await box.mail.inbox(Owner.phone(other.id)) == []
    await session.close()


@pytest.mark.rule("X3", "X4")
async def test_a_caller_is_online_while_calling_and_hears_a_voice_message_played(
    hub: Hub, box: Community
) -> None:
    anna = Owner.account((await create_account(hub.sessions, "Anna", "password-a")).id)
    identity = await create_phone_identity(hub.sessions, pin="4711")
    me = Owner.phone(identity.id)
    await box.friends.ask(anna, me)
    await box.friends.accept(me, anna)
    voice = np.full(8000, 1234, dtype=np.int16)  # one second
    await box.mail.send_voice(anna, me, voice.astype("<i2").tobytes())
    assert box.online.is_online(me) is False
    session = await call_in(hub)
    await press(session, "1")
    await press(session, f"{identity.id}#")
    await press(session, "4711#")
    (view,) = await box.friends.listing(anna)
    assert view.where.place.value == "online"
    await press(session, "6")
    await press(session, "1")
    assert heard(session, "Nachricht 1 von 1, von Anna. Neu.")
    played = [u for u in session.prompts.queued if u.tone == "mail_message"]
    assert len(played) == 1 and played[0].audio is not None
    assert np.array_equal(played[0].audio, voice)
    assert await box.mail.unread(me) == 0
    await session.close()
    (view,) = await box.friends.listing(anna)
    assert view.where.place.value == "offline"


@pytest.mark.rule("X4")
async def test_key_2_sits_a_caller_down_at_a_friends_public_table(hub: Hub, box: Community) -> None:
    session, me = await signed_in(hub)
    anna = Owner.account((await create_account(hub.sessions, "Anna", "password-a")).id)
    await box.friends.ask(anna, me)
    await box.friends.accept(me, anna)
    ended = box.online.call_started(anna)
    table = await hub.found(
        GameOptions(players=5), private=False, host_account_id=anna.account_id, host_name="Anna"
    )
    await press(session, "7")
    assert heard(session, t("phone.friends.where_table"))  # "an einem offenen Tisch in Werwolf"
    await press(session, "1#")
    await press(session, "2")
    assert session.announcer.state == "lobby"
    assert session.announcer.lobby_game == table.game.id
    ended()
    await session.close()


def phone_name(owner: Owner) -> str:
    """How a phone-only person is spoken ("Telefon 1 2")."""
    return t("phone.community.phone_person", n=" ".join(str(owner.phone_id)))


async def friends_by_phone(
    hub: Hub, box: Community
) -> tuple[PhoneSession, Owner, PhoneSession, Owner]:
    """Two callers signed in with their phone IDs, friends already."""
    anna_call, anna = await signed_in(hub)
    bert_call, bert = await signed_in(hub)
    await box.friends.ask(anna, bert)
    await box.friends.accept(bert, anna)
    return anna_call, anna, bert_call, bert


@pytest.mark.rule("X2", "X4")
async def test_key_4_calls_a_friend_into_a_room_and_8_brings_them_in(
    hub: Hub, box: Community
) -> None:
    anna_call, anna, bert_call, bert = await friends_by_phone(hub, box)
    await press(anna_call, "7")
    await press(anna_call, "1#")  # Bert, "beim Ausrufer oder in der Lobby"
    assert heard(anna_call, t("phone.friends.key_room"))  # read among his keys
    await press(anna_call, "4")
    line = anna_call.mode
    assert isinstance(line, RoomLine) and line.room.kind is RoomKind.PRIVATE
    assert heard(anna_call, t("rooms.phone.alone"))
    assert heard(anna_call, t("phone.friends.called", name=phone_name(bert)))
    # Bert, in the announcer, is told at once who calls him and where to.
    assert heard(bert_call, t("phone.friends.invited_room", name=phone_name(anna)))
    await press(bert_call, "8")
    assert isinstance(bert_call.mode, RoomLine) and bert_call.mode.room is line.room
    assert [m.name for m in line.room] == [anna_call.name, bert_call.name]
    assert heard(anna_call, t("rooms.phone.joined", name=bert_call.name, n=2))
    seats = (anna_call.conference_seat, bert_call.conference_seat)
    assert seats[0] is not None and seats[1] is not None
    assert seats[0].voice is seats[1].voice  # one mixer: they hear each other
    assert box.friends.invitations(bert) == []  # used
    await anna_call.close()
    await bert_call.close()
    # The last one out closes the room: its id finds nothing any more.
    assert not line.room.members
    with pytest.raises(RoomClosedError):
        await conference_rooms(hub).invited(line.room.id)


@pytest.mark.rule("X2", "X4")
async def test_calling_into_a_room_is_refused_with_a_reason(hub: Hub, box: Community) -> None:
    anna_call, anna, bert_call, bert = await friends_by_phone(hub, box)
    await bert_call.close()  # Bert hangs up: away
    cora = Owner.account((await create_account(hub.sessions, "Cora", "password-c")).id)
    await box.friends.ask(cora, anna)  # Cora only asked: no friend yet
    box.online.seen(cora)
    await press(anna_call, "7")
    await press(anna_call, "1#")  # Bert, away: no key 4 read for him
    assert said(anna_call)[-1] == t(
        "phone.friends.person",
        name=phone_name(bert),
        keys=", ".join(t(f"phone.friends.key_{k}") for k in ("message", "remove", "block")),
    )
    await press(anna_call, "4")
    assert said(anna_call)[-2:] == [
        t("phone.friends.offline", name=phone_name(bert)),
        t("phone.help_hint"),
    ]
    assert isinstance(anna_call.mode, FriendsMenu)  # still at Bert's keys
    await press(anna_call, "5")  # a key a person does not have: their keys again
    assert said(anna_call)[-2].startswith(phone_name(bert))
    await press(anna_call, "0")
    await press(anna_call, "2#")  # Cora's request
    await press(anna_call, "4")
    assert said(anna_call)[-2] == t("web.errors.not_friends")
    assert isinstance(anna_call.mode, FriendsMenu)
    assert box.friends.invitations(cora) == [] and box.friends.invitations(bert) == []
    await anna_call.close()


@pytest.mark.rule("X2", "X4")
async def test_an_invitation_into_a_room_ends_when_the_room_closes(
    hub: Hub, box: Community
) -> None:
    anna_call, anna, bert_call, bert = await friends_by_phone(hub, box)
    await press(bert_call, "5")  # Bert is in the rooms list: not told yet
    await press(anna_call, "7")
    await press(anna_call, "1#")
    await press(anna_call, "4")
    assert not heard(bert_call, t("phone.friends.invited_room", name=phone_name(anna)))
    await press(bert_call, "0#")  # back in the announcer: now he hears it
    assert heard(bert_call, t("phone.friends.invited_room", name=phone_name(anna)))
    await press(anna_call, "#9")  # Anna leaves: the room is closed, the invitation ends
    assert box.friends.invitations(bert) == []
    await press(bert_call, "8")
    assert said(bert_call)[-2] == t("phone.friends.no_invitation")
    assert bert_call.mode is bert_call.announcer
    await anna_call.close()
    await bert_call.close()
