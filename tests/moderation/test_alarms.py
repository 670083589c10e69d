"""O1: an operator call is a persisted alarm in a queue moderators take and resolve."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from sqlalchemy import select

from vollmond.moderation import (
    Alarm,
    AlarmRateLimitedError,
    AlarmStateError,
    AlarmStatus,
    Caller,
    Moderation,
    NotPermittedError,
    Outcome,
)
from vollmond.moderation.alarms import list_alarms
from vollmond.moderation.audit import audit_log
from vollmond.store import (
    GameNotFoundError,
    Sessions,
    karma_history,
    karma_total,
)
from vollmond.store.models import AlarmRow
from vollmond.store.owners import Owner

from .conftest import START, Clock, People, phone_identity


@pytest.mark.rule("O1")
async def test_alarm_records_game_round_phase_caller_reason_accused_and_time(
    moderation: Moderation, sessions: Sessions, people: People, game_id: str
) -> None:
    # *9105#: reason 1, house 05, pressed by Alice sitting in house 3.
    alarm = await moderation.raise_alarm(
        game_id=game_id,
        round=2,
        phase="day",
        caller=Caller(account_id=people.alice, house=3),
        reason=1,
        accused_house=5,
    )
    async with sessions() as session:
        row = await session.scalar(select(AlarmRow).where(AlarmRow.id == alarm.id))
    assert row is not None
    assert (row.game_id, row.round, row.phase) == (game_id, 2, "day")
    assert (row.caller_account_id, row.caller_house) == (people.alice, 3)
    assert (row.reason, row.accused_house, row.created_at) == (1, 5, START)
    assert row.status == "open"
    assert [a.id for a in await moderation_queue(moderation)] == [alarm.id]


async def moderation_queue(moderation: Moderation) -> list[Alarm]:
    return await list_alarms(moderation.sessions)


@pytest.mark.rule("O1")
async def test_bare_star_nine_and_phone_only_caller(
    moderation: Moderation, sessions: Sessions, game_id: str
) -> None:
    identity = await phone_identity(sessions, number="+4930123456")
    alarm = await moderation.raise_alarm(
        game_id=game_id, round=1, phase="night", caller=Caller(phone_identity_id=identity)
    )
    assert (alarm.reason, alarm.accused_house) == (None, None)
    assert alarm.caller.phone_identity_id == identity


@pytest.mark.rule("O1")
async def test_moderators_on_duty_are_notified_at_once(
    moderation: Moderation, people: People, game_id: str
) -> None:
    async with moderation.feed.subscribe() as queue:
        raised = await moderation.raise_alarm(
            game_id=game_id, round=1, phase="day", caller=Caller(house=4)
        )
        notified = await asyncio.wait_for(queue.get(), 1)
        assert notified == raised
        await moderation.take(raised.id, by=people.moderator)
        taken = await asyncio.wait_for(queue.get(), 1)
        assert (taken.status, taken.taken_by) == (AlarmStatus.TAKEN, people.moderator)


@pytest.mark.rule("O1")
async def test_take_and_resolve_are_recorded_with_moderator_and_note(
    moderation: Moderation, clock: Clock, people: People, game_id: str
) -> None:
    alarm = await moderation.raise_alarm(
        game_id=game_id, round=1, phase="day", caller=Caller(account_id=people.alice)
    )
    with pytest.raises(NotPermittedError):
        await moderation.take(alarm.id, by=people.bob)
    clock.advance(seconds=30)
    taken = await moderation.take(alarm.id, by=people.moderator)
    assert (taken.status, taken.taken_by, taken.taken_at) == (
        AlarmStatus.TAKEN,
        people.moderator,
        clock.now,
    )
    assert (await moderation.take(alarm.id, by=people.moderator)).taken_by == people.moderator
    with pytest.raises(AlarmStateError):
        await moderation.take(alarm.id, by=people.admin)
    clock.advance(minutes=2)
    resolved = await moderation.resolve(
        alarm.id, by=people.moderator, outcome=Outcome.WARNED, note="insults in the day chat"
    )
    assert resolved.status is AlarmStatus.RESOLVED
    assert (resolved.outcome, resolved.note) == (Outcome.WARNED, "insults in the day chat")
    assert (resolved.resolved_by, resolved.resolved_at) == (people.moderator, clock.now)
    with pytest.raises(AlarmStateError):
        await moderation.resolve(alarm.id, by=people.moderator, outcome=Outcome.DISMISSED)
    assert await moderation_queue(moderation) == []
    actions = [e.action for e in await audit_log(moderation.sessions, target_kind="alarm")]
    assert actions == ["alarm.resolve", "alarm.take"]
    # Only a false alarm costs the caller karma.
    assert await karma_total(moderation.sessions, people.alice) == 0


@pytest.mark.rule("O1", "P3")
async def test_false_alarm_costs_the_caller_karma(
    moderation: Moderation, sessions: Sessions, people: People, game_id: str
) -> None:
    identity = await phone_identity(sessions, number="0301111", account_id=people.bob)
    alarm = await moderation.raise_alarm(
        game_id=game_id, round=1, phase="day", caller=Caller(phone_identity_id=identity)
    )
    await moderation.resolve(alarm.id, by=people.moderator, outcome=Outcome.FALSE_ALARM)
    history = await karma_history(sessions, people.bob)
    assert [(e.amount, e.game_id) for e in history] == [
        (-moderation.settings.karma_false_alarm, game_id)
    ]


@pytest.mark.rule("O1", "P3")
async def test_a_phone_only_callers_false_alarm_costs_their_own_ledger(
    moderation: Moderation, sessions: Sessions, people: People, game_id: str
) -> None:
    identity = await phone_identity(sessions, number="+4930999888")
    alarm = await moderation.raise_alarm(
        game_id=game_id, round=1, phase="night", caller=Caller(phone_identity_id=identity)
    )
    await moderation.resolve(alarm.id, by=people.moderator, outcome=Outcome.FALSE_ALARM)
    history = await karma_history(sessions, Owner.phone(identity))
    assert [(e.amount, e.game_id) for e in history] == [
        (-moderation.settings.karma_false_alarm, game_id)
    ]
    # A caller nobody knows (a guest's house only) has no ledger; resolving still works.
    anonymous = await moderation.raise_alarm(
        game_id=game_id, round=1, phase="night", caller=Caller(house=6)
    )
    resolved = await moderation.resolve(
        anonymous.id, by=people.moderator, outcome=Outcome.FALSE_ALARM
    )
    assert resolved.outcome is Outcome.FALSE_ALARM


@pytest.mark.rule("O1")
async def test_misuse_is_rate_limited_per_caller(
    moderation: Moderation, clock: Clock, people: People, game_id: str
) -> None:
    limit = moderation.settings.alarm_limit
    alice = Caller(account_id=people.alice, house=1)
    for _ in range(limit):
        await moderation.raise_alarm(game_id=game_id, round=1, phase="day", caller=alice)
        clock.advance(seconds=10)
    with pytest.raises(AlarmRateLimitedError) as refused:
        await moderation.raise_alarm(game_id=game_id, round=1, phase="day", caller=alice)
    assert refused.value.retry_at == START + timedelta(seconds=moderation.settings.alarm_window_s)
    # Someone else at the same table is not affected.
    await moderation.raise_alarm(
        game_id=game_id, round=1, phase="day", caller=Caller(account_id=people.bob)
    )
    clock.now = refused.value.retry_at
    await moderation.raise_alarm(game_id=game_id, round=1, phase="day", caller=alice)


async def test_concurrent_presses_do_not_slip_past_the_limit(
    moderation: Moderation, people: People, game_id: str
) -> None:
    alice = Caller(account_id=people.alice)
    results = await asyncio.gather(
        *(
            moderation.raise_alarm(game_id=game_id, round=1, phase="day", caller=alice)
            for _ in range(moderation.settings.alarm_limit + 3)
        ),
        return_exceptions=True,
    )
    accepted = [r for r in results if not isinstance(r, BaseException)]
    refused = [r for r in results if isinstance(r, AlarmRateLimitedError)]
    assert len(accepted) == moderation.settings.alarm_limit
    assert len(refused) == 3


async def test_bad_alarms_are_refused_clearly(moderation: Moderation, game_id: str) -> None:
    with pytest.raises(GameNotFoundError):
        await moderation.raise_alarm(game_id="nope", round=1, phase="day", caller=Caller(house=1))
    with pytest.raises(ValueError, match="reason"):
        await moderation.raise_alarm(
            game_id=game_id, round=1, phase="day", caller=Caller(house=1), reason=5
        )
    with pytest.raises(ValueError, match="caller"):
        Caller()
