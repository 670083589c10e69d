"""Conference rooms by phone (X2, O1, O2, O5): real phone sessions on a real hub, the service's
Enforcer and the store (SQLite and PostgreSQL), keys in, spoken text out.

Two callers meet in a world's public room and a private room opened with a code; the room's
size limit, bans of the area "conference" (and of one world, and of listening), wrong keys and
unknown codes are answered in words; ``*9105#`` in a room is an alarm that names the room and
starts a recording of exactly the configured length after the spoken warning.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from tests.moderation.conftest import People, people, phone_identity
from tests.phone.session.support import call_in, heard, press, said, wait_until
from tests.store.conftest import engine, sessions, target
from vollmond.moderation import CONFERENCE, SPECTATE, Area, Moderation, SanctionKind, Subject
from vollmond.moderation.alarms import list_alarms
from vollmond.phone.session import PhoneSession
from vollmond.phone.session.codes import phone_code
from vollmond.phone.session.conference import RoomLine, RoomsMenu
from vollmond.service.conference import (
    ConferenceRoom,
    ConferenceRooms,
    conference_rooms,
    install_conference_rooms,
)
from vollmond.service.conference_recorder import ConferenceRecorder
from vollmond.service.enforce import Enforcer
from vollmond.service.hub import Hub
from vollmond.service.policy import Policy
from vollmond.settings.moderation import ModerationSettings
from vollmond.settings.phone import PhoneSettings
from vollmond.settings.rooms import RoomSettings
from vollmond.store import Sessions
from vollmond.store.models import RecordingRow

__all__ = ["engine", "people", "sessions", "target"]

PIN = "8642"
GERMAN_UNTIL = re.compile(r"bis \d\d\.\d\d\.\d{4} um \d\d:\d\d Uhr \(UTC\)")


@pytest.fixture
async def hub(sessions: Sessions) -> AsyncIterator[Hub]:
    running = Hub(sessions, Policy())
    try:
        yield running
    finally:
        await running.close()


@pytest.fixture
def enforcer(sessions: Sessions, hub: Hub, tmp_path: Path) -> Enforcer:
    settings = ModerationSettings(conference_recording_s=1, recording_notice_wait_s=10.0)
    return Enforcer(Moderation(sessions, settings, tmp_path / "data"), hub)


async def guest(hub: Hub, enforcer: Enforcer) -> PhoneSession:
    session = await call_in(hub, "anonymous", enforcer=enforcer)
    await press(session, "2")
    return session


async def signed_in(hub: Hub, enforcer: Enforcer, sessions: Sessions, number: str) -> PhoneSession:
    phone_id = await phone_identity(sessions, number=number, pin=PIN)
    session = await call_in(hub, "anonymous", enforcer=enforcer)
    await press(session, "1")
    await press(session, f"{phone_id}#")
    await press(session, PIN + "#")
    assert session.identity_id == phone_id, said(session)
    return session


def room_of(session: PhoneSession) -> ConferenceRoom:
    assert isinstance(session.mode, RoomLine), said(session)[-5:]
    return session.mode.room


def in_room(session: PhoneSession) -> bool:
    return session.conference_seat is not None


@pytest.mark.rule("X2", "X1")
async def test_two_callers_meet_in_a_worlds_public_room_and_hear_of_each_other(
    hub: Hub, enforcer: Enforcer
) -> None:
    anna, bert = await guest(hub, enforcer), await guest(hub, enforcer)
    await press(anna, "5")
    assert heard(anna, "Konferenzräume: 1 Werwolf, leer"), said(anna)[-3:]
    await press(anna, "1#")
    room = room_of(anna)
    assert room.world == "werwolf"
    assert heard(anna, "Du bist im Raum Werwolf, als Nummer 1")
    assert heard(anna, "Noch ist niemand sonst hier")

    await press(bert, "5")
    assert heard(bert, "1 Werwolf, eine Person"), said(bert)[-3:]
    since = len(said(anna))
    await press(bert, "1#")
    assert room_of(bert) is room
    assert heard(bert, f"Hier sind: 1 {anna.name}")
    assert heard(anna, f"{bert.name} ist da, Nummer 2", since)

    # Both talk: each hears the other, nobody hears themselves (the room's routing).
    table = room.voice.routing()
    assert [r.source for r in table[1]] == [2] and [r.source for r in table[2]] == [1]
    assert anna.conference_seat is not None and anna.conference_seat.slot == 1

    await press(anna, "#4")
    assert heard(anna, f"Hier sind: 1 {anna.name}; 2 {bert.name}")
    since = len(said(bert))
    await press(anna, "#9")
    assert heard(anna, "Du hast den Raum verlassen")
    assert anna.mode is anna.announcer and not in_room(anna)
    assert heard(bert, f"{anna.name} ist gegangen", since)
    assert list(room.members) == [2]
    await bert.close()  # hanging up leaves the room too
    assert not room.members
    await anna.close()


@pytest.mark.rule("X2")
async def test_mute_and_listen_only_take_the_caller_out_of_what_the_room_hears(
    hub: Hub, enforcer: Enforcer
) -> None:
    anna, bert = await guest(hub, enforcer), await guest(hub, enforcer)
    for session in (anna, bert):
        await press(session, "5")
        await press(session, "1#")
    room = room_of(anna)
    await press(anna, "1")  # mute herself
    assert heard(anna, "Du bist stumm. 1 schaltet dich wieder ein")
    assert [r.source for r in room.voice.routing()[2]] == []  # Bert hears nobody
    await press(bert, "#4")
    assert heard(bert, f"1 {anna.name}, stumm")
    await press(anna, "1")
    assert heard(anna, "Man hört dich wieder")
    assert [r.source for r in room.voice.routing()[2]] == [1]

    await press(bert, "2")  # listen only
    assert heard(bert, "Du hörst nur noch zu")
    assert [r.source for r in room.voice.routing()[1]] == []  # Anna hears nobody now
    assert [r.source for r in room.voice.routing()[2]] == [1]  # Bert still hears Anna
    await press(bert, "1")
    assert heard(bert, "Du hörst nur zu, dich hört ohnehin niemand")
    await press(bert, "#3")
    assert heard(bert, "Raum Werwolf, 2 hier, du bist Nummer 2. Du hörst nur zu.")

    # Entering to listen only: *NN# (**NN# for 7 and 9, *9# is the operator's key).
    cora = await guest(hub, enforcer)
    await press(cora, "5")
    await press(cora, "*9#")
    assert heard(cora, "Zum Zuhören in Raum 9: Stern Stern 9 Raute")
    await press(cora, "**1#")
    assert room_of(cora) is room
    assert heard(cora, "Du hörst im Raum Werwolf zu, als Nummer 3")
    assert all(r.source != 3 for routes in room.voice.routing().values() for r in routes)
    for session in (anna, bert, cora):
        await session.close()


@pytest.mark.rule("X2")
async def test_a_private_room_is_opened_with_a_code_and_entered_with_it(
    hub: Hub, enforcer: Enforcer
) -> None:
    anna, bert = await guest(hub, enforcer), await guest(hub, enforcer)
    await press(anna, "5")
    await press(anna, "00#")
    room = room_of(anna)
    assert room.code is not None and room.world is None
    digits = phone_code(room.code)
    spoken = " ".join(digits[:4])
    assert heard(anna, f"Dein privater Raum ist offen. Sein Code: {spoken}")
    assert heard(anna, "Du bist im Raum privater Raum")

    await press(bert, "5")
    await press(bert, "1234567890123456#")  # nobody opened this one
    assert heard(bert, "Zu diesem Code ist kein Raum offen")
    assert isinstance(bert.mode, RoomsMenu)
    await press(bert, "12345#")
    assert heard(bert, "Ein Raumcode hat 16 Ziffern")
    await press(bert, f"{digits}#")
    assert room_of(bert) is room
    assert sorted(room.members) == [1, 2]
    # The public rooms are elsewhere: nobody in the Werwolf room.
    assert conference_rooms(hub).headcount("werwolf") == 0

    await anna.close()
    await bert.close()
    # The last one out: the room and its code are gone.
    cora = await guest(hub, enforcer)
    await press(cora, "5")
    await press(cora, f"{digits}#")
    assert heard(cora, "Zu diesem Code ist kein Raum offen")
    await cora.close()


@pytest.mark.rule("X2")
async def test_a_full_room_is_refused_with_its_size(hub: Hub, enforcer: Enforcer) -> None:
    install_conference_rooms(hub, ConferenceRooms(RoomSettings(max_members=2)))
    callers = [await guest(hub, enforcer) for _ in range(3)]
    for session in callers:
        await press(session, "5")
        await press(session, "2#")  # Vampir
    third = callers[2]
    assert heard(third, "Dieser Raum ist voll: 2 Personen sind drin")
    assert isinstance(third.mode, RoomsMenu)  # still choosing, not in a room
    assert sorted(conference_rooms(hub).public("vampir").members) == [1, 2]
    await press(third, "1#")  # another room has space
    assert room_of(third).world == "werwolf"
    for session in callers:
        await session.close()


@pytest.mark.rule("X2", "O5")
async def test_bans_of_conference_world_and_listening_are_told_with_reason_and_expiry(
    sessions: Sessions, hub: Hub, enforcer: Enforcer, people: People
) -> None:
    banned = await signed_in(hub, enforcer, sessions, "+4930555101")
    ban = enforcer.moderation.impose
    subject = Subject.phone(banned.identity_id or 0)
    await ban(
        by=people.moderator,
        subject=subject,
        kind=SanctionKind.BAN,
        area=Area.in_world("vampir"),
        reason="Beleidigungen",
        duration=timedelta(hours=5),
    )
    await press(banned, "5")
    since = len(said(banned))
    await press(banned, "2#")  # the Vampir room: refused
    refusal = [line for line in said(banned, since) if "Beleidigungen" in line]
    assert refusal and "Du bist gesperrt für die Welt Vampir" in refusal[0], said(banned, since)
    assert GERMAN_UNTIL.search(refusal[0])
    assert isinstance(banned.mode, RoomsMenu)
    assert conference_rooms(hub).headcount("vampir") == 0

    await ban(
        by=people.moderator,
        subject=subject,
        kind=SanctionKind.BAN,
        area=SPECTATE,
        reason="Lauschen",
        duration=timedelta(hours=1),
    )
    await press(banned, "*1#")  # listen only in the Werwolf room: refused
    assert heard(banned, "Du bist gesperrt für das Zuhören. Grund: Lauschen")
    await press(banned, "1#")  # talking in it is allowed
    assert room_of(banned).world == "werwolf"
    await press(banned, "2")  # ...but switching to listening is not
    assert room_of(banned).members[1].listening is False
    await press(banned, "#9")

    await ban(
        by=people.moderator,
        subject=subject,
        kind=SanctionKind.BAN,
        area=CONFERENCE,
        reason="Telefonterror",
        duration=timedelta(days=2),
    )
    await press(banned, "5")
    since = len(said(banned))
    await press(banned, "1#")
    refusal = [line for line in said(banned, since) if "Telefonterror" in line]
    assert refusal and "Du bist gesperrt für Konferenzräume" in refusal[0], said(banned, since)
    assert GERMAN_UNTIL.search(refusal[0])
    assert conference_rooms(hub).headcount("werwolf") == 0
    await banned.close()


@pytest.mark.rule("X2")
async def test_wrong_keys_in_the_list_and_in_a_room_are_answered(
    hub: Hub, enforcer: Enforcer
) -> None:
    anna = await guest(hub, enforcer)
    await press(anna, "5")
    await press(anna, "13#")
    assert heard(anna, "Die Auswahl 13 gibt es hier nicht")
    await press(anna, "#1")
    assert heard(anna, "Konferenzräume, einer je Welt")
    await press(anna, "99#")
    assert heard(anna, "5 Neo-Kowloon 2089, leer")
    await press(anna, "0#")
    assert anna.mode is anna.announcer
    await press(anna, "5")
    await press(anna, "1#")
    await press(anna, "7#")
    assert heard(anna, "Diese Taste gilt im Raum nicht")
    await press(anna, "#1")
    assert heard(anna, "Im Konferenzraum: 1 schaltet dich stumm")
    await press(anna, "*95#")
    assert heard(anna, "Als Grund gibt es die Ziffern 1 bis 4")
    await anna.close()


@pytest.mark.rule("X2", "O1", "O2", "O4")
async def test_star_9105_in_a_room_is_an_alarm_about_number_5_then_exactly_the_length_is_recorded(
    sessions: Sessions, hub: Hub, enforcer: Enforcer
) -> None:
    recorder = ConferenceRecorder(hub, enforcer.moderation, notice_wait_s=10.0)
    await recorder.start()
    try:
        anna = await signed_in(hub, enforcer, sessions, "+4930555102")
        bert = await guest(hub, enforcer)
        for session in (anna, bert):
            await press(session, "5")
            await press(session, "3#")  # Mafia
        room = room_of(anna)
        await press(anna, "*9102#")  # reason 1, about number 2 (Bert)
        assert heard(anna, "Die Moderation ist gerufen: Grund 1, wegen Nummer 2 in diesem Raum")
        [alarm] = await list_alarms(sessions)
        assert alarm.game_id is None and alarm.conference == room.id == "public-mafia"
        assert alarm.reason == 1 and alarm.accused_house == 2
        assert alarm.caller.phone_identity_id == anna.identity_id

        # Everyone in the room hears the warning first (O2); the recording waits for the
        # lines to have played it (here the test plays their prompts, as the media clock).
        warning = "in diesem Raum nach dem Ton aufgezeichnet, genau 1 Sekunden"
        await wait_until(lambda: heard(anna, warning) and heard(bert, warning))
        assert room.id not in recorder.sinks
        for session in (anna, bert):
            await session.prompts.drain()
        await wait_until(lambda: room.id in recorder.sinks)
        cora = await guest(hub, enforcer)  # a late-comer is told too (O4)
        await press(cora, "5")
        await press(cora, "3#")
        assert heard(cora, "wird gerade aufgezeichnet")
        await press(anna, "#9")  # people leave: the recording still runs its length
        await bert.close()
        await cora.close()
        await wait_until(lambda: not recorder.recordings, 15)
        async with sessions() as db:
            [row] = (await db.scalars(select(RecordingRow))).all()
        assert row.room == "conference:public-mafia" and row.alarm_id == alarm.id
        assert row.game_id is None and row.ended_at is not None
        assert row.ended_at - row.started_at >= timedelta(seconds=1)
        await anna.close()
    finally:
        await recorder.close()


@pytest.mark.rule("X2", "O5")
async def test_a_mute_from_the_moderators_is_told_in_the_room(
    sessions: Sessions, hub: Hub, enforcer: Enforcer, people: People
) -> None:
    anna = await signed_in(hub, enforcer, sessions, "+4930555103")
    await press(anna, "5")
    await press(anna, "1#")
    await enforcer.moderation.impose(
        by=people.moderator,
        subject=Subject.phone(anna.identity_id or 0),
        kind=SanctionKind.MUTE,
        reason="Dauerreden",
        duration=timedelta(minutes=10),
    )
    await enforcer.poll()
    await wait_until(
        lambda: heard(anna, "Die Moderation hat dich stummgeschaltet. Grund: Dauerreden")
    )
    assert enforcer.muted_now(anna.person)  # the phone service keeps the voice out
    await anna.close()


@pytest.mark.rule("X2")
async def test_room_codes_are_tried_no_faster_than_private_rounds_codes(
    hub: Hub, enforcer: Enforcer
) -> None:
    caller = await guest(hub, enforcer)
    await press(caller, "5")
    for _ in range(hub.policy.invitation_attempts_per_minute):
        await press(caller, "1234567890123456#")
    assert not heard(caller, "zu viele Versuche")
    await press(caller, "0#")  # out to the announcer and in again: the count stays
    await press(caller, "5")
    await press(caller, "1234567890123456#")
    assert heard(caller, "Das waren zu viele Versuche")
    await caller.close()


@pytest.mark.rule("X2")
async def test_silence_in_the_rooms_list_ends_like_the_announcer_but_never_in_a_room(
    hub: Hub, enforcer: Enforcer
) -> None:
    listing = await call_in(hub, enforcer=enforcer, phone=PhoneSettings(silence_s=0.05))
    await press(listing, "2")
    await press(listing, "5")
    for n in range(1, 4):
        await listen(listing)
        await wait_until(lambda n=n: listing.reminded == n, 2.0)  # type: ignore[misc]
    assert heard(listing, "Konferenzräume: 1 Werwolf")
    await listen(listing)
    await asyncio.wait_for(listing.hangup_requested.wait(), 2.0)
    await listing.close()

    talking = await call_in(hub, enforcer=enforcer, phone=PhoneSettings(silence_s=0.05))
    await press(talking, "2")
    await press(talking, "5")
    await press(talking, "1#")
    for _ in range(3):
        await listen(talking)
        await asyncio.sleep(0.2)
    assert talking.reminded == 0 and not talking.hangup_requested.is_set()
    await talking.close()


async def listen(session: PhoneSession) -> None:
    """Play what is queued (the media clock), so the line falls quiet."""
    await session.prompts.rendered()
    while session.next_frame() is not None:
        pass
