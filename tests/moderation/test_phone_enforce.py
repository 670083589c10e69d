"""Moderation on the telephone (issue 9, O1, O5): real phone sessions on a real hub and store
(SQLite and PostgreSQL), keys in, spoken text out, the service's Enforcer in between.

A banned caller hears reason and expiry and gets no further; `*9105#` in a game is a persisted
alarm about house 5 with reason 1; a kicked caller leaves with the role revealed.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest

from tests.moderation.conftest import People, phone_identity
from tests.phone.session.support import call_in, heard, press, said, wait_until
from vollmond.engine.core import Viewer
from vollmond.engine.standard import GameOptions
from vollmond.moderation import ALL, FRIENDS, MAILBOX, Area, Moderation, SanctionKind, Subject
from vollmond.moderation.alarms import list_alarms
from vollmond.phone.session import PhoneSession
from vollmond.phone.session.prompts import Priority
from vollmond.phone.session.prompts.queue import Spoken
from vollmond.service.enforce import Enforcer
from vollmond.service.hub import Hub
from vollmond.service.policy import Policy
from vollmond.settings.moderation import ModerationSettings
from vollmond.store import Sessions

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
    """The service's enforcer, on the real clock (alarms and bans are stamped now)."""
    return Enforcer(Moderation(sessions, ModerationSettings(), tmp_path / "data"), hub)


async def caller(hub: Hub, enforcer: Enforcer, phone_id: int) -> PhoneSession:
    """A caller signed in with phone ID and PIN (key 1 in the identification menu)."""
    session = await call_in(hub, "anonymous", enforcer=enforcer)
    await press(session, "1")
    await press(session, f"{phone_id}#")
    await press(session, PIN + "#")
    return session


async def identity(sessions: Sessions, number: str) -> int:
    return await phone_identity(sessions, number=number, pin=PIN)


@pytest.mark.rule("O5")
async def test_a_banned_phone_identity_hears_reason_and_expiry_and_is_hung_up(
    sessions: Sessions, hub: Hub, enforcer: Enforcer, people: People
) -> None:
    banned = await identity(sessions, "+4930555001")
    await enforcer.moderation.impose(
        by=people.admin,
        subject=Subject.phone(banned),
        kind=SanctionKind.BAN,
        area=ALL,
        reason="Telefonterror",
        duration=timedelta(days=3),
    )
    session = await caller(hub, enforcer, banned)
    refusal = [line for line in said(session) if "Telefonterror" in line]
    assert refusal, said(session)
    assert "Du bist gesperrt für alles" in refusal[0]
    assert GERMAN_UNTIL.search(refusal[0]), refusal[0]
    assert session.hangup_requested.is_set()
    assert not heard(session, "Hier ist der Ausrufer")  # no announcer menu
    await session.close()


@pytest.mark.rule("O5")
async def test_a_world_ban_keeps_the_caller_from_joining_that_worlds_table(
    sessions: Sessions, hub: Hub, enforcer: Enforcer, people: People
) -> None:
    banned = await identity(sessions, "+4930555002")
    await enforcer.moderation.impose(
        by=people.moderator,
        subject=Subject.phone(banned),
        kind=SanctionKind.BAN,
        area=Area.in_world("werwolf"),
        reason="Absprachen",
        duration=timedelta(hours=5),
    )
    founded = await hub.found(
        GameOptions(players=4, world="werwolf"), private=False, host_account_id=None
    )
    session = await caller(hub, enforcer, banned)
    since = len(said(session))
    await press(session, "1")  # play
    await press(session, "1#")  # werwolf
    await press(session, "1#")  # the first table
    refusal = [line for line in said(session, since) if "Absprachen" in line]
    assert refusal and "Du bist gesperrt für die Welt" in refusal[0], said(session, since)
    assert GERMAN_UNTIL.search(refusal[0])
    assert session.game_id is None and session.seat is None
    assert not (await hub.table(founded.game.id)).seats
    await session.close()


async def _in_game(
    sessions: Sessions, hub: Hub, enforcer: Enforcer, number: str
) -> tuple[str, PhoneSession, int]:
    """A signed-in caller joins a public five-seat round; four web players fill it."""
    phone_id = await identity(sessions, number)
    founded = await hub.found(
        GameOptions(players=5, world="werwolf"), private=False, host_account_id=None
    )
    game_id = founded.game.id
    session = await caller(hub, enforcer, phone_id)
    await press(session, "1")  # play
    await press(session, "1#")  # werwolf
    await press(session, "1#")  # the first table
    assert session.game_id == game_id, said(session)
    for i in range(4):
        await hub.join(game_id, account_id=None, name=f"Web {i}", channel="web")
    await wait_until(lambda: session.seat is not None)
    return game_id, session, phone_id


@pytest.mark.rule("O1")
async def test_star_9105_from_a_phone_raises_an_alarm_with_reason_1_about_house_5(
    sessions: Sessions, hub: Hub, enforcer: Enforcer
) -> None:
    game_id, session, phone_id = await _in_game(sessions, hub, enforcer, "+4930555003")
    since = len(said(session))
    await press(session, "*9105#")
    queue = await list_alarms(sessions, game_id=game_id)
    assert len(queue) == 1
    alarm = queue[0]
    assert (alarm.reason, alarm.accused_house) == (1, 5)
    assert alarm.caller.phone_identity_id == phone_id and alarm.caller.house == session.seat
    assert alarm.phase == "night" and alarm.round == 1
    assert heard(session, "Die Moderation ist gerufen: Grund 1, wegen Haus 5", since)
    # The misuse limit (3 per caller and window) is spoken with the time a call is possible.
    for _ in range(2):
        await press(session, "*9#")
    since = len(said(session))
    await press(session, "*9#")
    limited = [line for line in said(session, since) if "zu oft" in line]
    assert limited and GERMAN_UNTIL.search(limited[0]), said(session, since)
    assert len(await list_alarms(sessions, game_id=game_id)) == 3
    await session.close()


@pytest.mark.rule("O5")
async def test_a_kicked_caller_hears_why_and_leaves_with_the_role_revealed(
    sessions: Sessions, hub: Hub, enforcer: Enforcer, people: People
) -> None:
    game_id, session, phone_id = await _in_game(sessions, hub, enforcer, "+4930555004")
    await enforcer.poll()  # the loop's first look: nothing new yet
    seat = session.seat
    assert seat is not None
    await enforcer.moderation.impose(
        by=people.moderator,
        subject=Subject.phone(phone_id),
        kind=SanctionKind.KICK,
        reason="Beleidigungen",
        game_id=game_id,
    )
    since = len(said(session))
    await enforcer.poll()
    await wait_until(lambda: session.game_id is None)
    assert heard(session, "Die Moderation hat dich aus dem Spiel genommen", since)
    state = hub.actors[game_id].state
    assert state is not None and not state.player(seat).alive
    role = state.player(seat).role.value
    public = await hub.actors[game_id].history_for(Viewer.spectator(), 0)
    left = [e for _, e in public if e.code == "player_left"]
    assert left and role in str(left[-1].params["dead"])  # told to everyone, role included
    await session.close()


def duty_notices(session: PhoneSession, since: int) -> list[Spoken]:
    spoken = session.transcript[since:]
    return [s for s in spoken if s.text and s.text.startswith("Für die Moderation:")]


@pytest.mark.rule("O1")
async def test_a_moderator_on_the_phone_hears_a_new_alarm_a_player_does_not(
    sessions: Sessions, hub: Hub, enforcer: Enforcer, people: People
) -> None:
    staff = await phone_identity(
        sessions, number="+4930555010", pin=PIN, account_id=people.moderator
    )
    plain = await phone_identity(sessions, number="+4930555011", pin=PIN, account_id=people.alice)
    moderator = await caller(hub, enforcer, staff)  # waits in the announcer menu
    player = await caller(hub, enforcer, plain)
    await wait_until(lambda: moderator.on_duty)
    assert not player.on_duty
    game_id, reporter, _ = await _in_game(sessions, hub, enforcer, "+4930555012")
    since = {s: len(s.transcript) for s in (moderator, player)}

    await press(reporter, "*9105#")
    await wait_until(lambda: bool(duty_notices(moderator, since[moderator])))
    (notice,) = duty_notices(moderator, since[moderator])
    assert notice.text is not None and "Grund 1, wegen Haus 5" in notice.text
    assert notice.priority is Priority.URGENT  # ahead of any backlog, not skipped by a key

    # Taking it is the console's business, not announced; the next new alarm is.
    (alarm,) = await list_alarms(sessions, game_id=game_id)
    await enforcer.moderation.take(alarm.id, by=people.moderator)
    await press(reporter, "*9#")
    await wait_until(lambda: len(duty_notices(moderator, since[moderator])) == 2)
    assert duty_notices(moderator, since[moderator])[1].text == (
        "Für die Moderation: ein neuer Ruf wartet in der Konsole."
    )
    assert not duty_notices(player, since[player])
    for session in (moderator, player, reporter):
        await session.close()
    assert enforcer.moderation.feed.subscribers == 0  # the call's end ends the duty


@pytest.mark.rule("O5", "X3", "X4")
async def test_bans_of_the_mailbox_and_friends_are_told_at_keys_6_and_7(
    sessions: Sessions, hub: Hub, enforcer: Enforcer, people: People
) -> None:
    banned = await identity(sessions, "+4930555009")
    for area, reason in ((MAILBOX, "Spam im Postfach"), (FRIENDS, "Belästigung")):
        await enforcer.moderation.impose(
            by=people.moderator,
            subject=Subject.phone(banned),
            kind=SanctionKind.BAN,
            area=area,
            reason=reason,
            duration=timedelta(hours=2),
        )
    session = await caller(hub, enforcer, banned)
    since = len(said(session))
    await press(session, "6")
    refusal = [line for line in said(session, since) if "Spam im Postfach" in line]
    assert refusal and "Du bist gesperrt für die Mailbox" in refusal[0], said(session, since)
    assert GERMAN_UNTIL.search(refusal[0])
    since = len(said(session))
    await press(session, "7")
    refusal = [line for line in said(session, since) if "Belästigung" in line]
    assert refusal and GERMAN_UNTIL.search(refusal[0]), said(session, since)
    assert session.mode is session.announcer  # neither menu opened
    await session.close()
