"""O5 and P3: bans by area, always with reason and expiry; moderators limited, admins full;
warn, mute, kick and ban cost karma."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import delete, update
from sqlalchemy.exc import DBAPIError

from vollmond.moderation import (
    ALL,
    ALLOWED,
    CONFERENCE,
    FRIENDS,
    MAILBOX,
    PRIVATE,
    SPECTATE,
    WEB,
    Area,
    AreaReservedError,
    BanTooLongError,
    Denied,
    InvalidAreaError,
    InvalidSanctionError,
    Moderation,
    NotPermittedError,
    SanctionKind,
    Subject,
)
from vollmond.moderation.audit import audit_log
from vollmond.moderation.sanctions import list_sanctions
from vollmond.store import Sessions, karma_history
from vollmond.store.models import AuditEntryRow
from vollmond.store.owners import Owner

from .conftest import Clock, People, phone_identity

EVERY_AREA = (
    Area.in_world("werwolf"),
    Area.in_world("vampir"),
    PRIVATE,
    SPECTATE,
    CONFERENCE,
    MAILBOX,
    FRIENDS,
    WEB,
)


def test_areas_parse_and_print() -> None:
    for text in ("world:vampir", "private", "spectate", "conference", "mailbox", "friends"):
        assert str(Area.parse(text)) == text
    assert Area.parse(" WEB ") == WEB
    assert Area.parse("all") == ALL
    for bad in ("world", "world:", "world:Vam pir", "everything", "private:x"):
        with pytest.raises(InvalidAreaError):
            Area.parse(bad)


@pytest.mark.rule("O5")
async def test_a_ban_covers_its_area_only(
    moderation: Moderation, clock: Clock, people: People
) -> None:
    alice = Subject.account(people.alice)
    ban = await moderation.impose(
        by=people.moderator,
        subject=alice,
        kind=SanctionKind.BAN,
        area=Area.in_world("vampir"),
        reason="Beleidigungen im Vampir-Chat",
        duration=timedelta(hours=24),
    )
    expected = Denied(
        "Beleidigungen im Vampir-Chat",
        clock.now + timedelta(hours=24),
        ban.id,
        Area.in_world("vampir"),
    )
    assert await moderation.access(alice, Area.in_world("vampir")) == expected
    # Joining a private Vampir round asks both areas: still refused, same answer.
    assert await moderation.access(alice, Area.in_world("vampir"), PRIVATE) == expected
    for other in EVERY_AREA:
        if other != Area.in_world("vampir"):
            assert await moderation.access(alice, other) is ALLOWED
    assert await moderation.access(Subject.account(people.bob), Area.in_world("vampir")) is ALLOWED
    clock.advance(hours=24)
    assert await moderation.access(alice, Area.in_world("vampir")) is ALLOWED


@pytest.mark.rule("O5")
async def test_full_ban_by_admin_covers_everything_and_is_permanent(
    moderation: Moderation, clock: Clock, people: People
) -> None:
    bob = Subject.account(people.bob)
    ban = await moderation.impose(
        by=people.admin, subject=bob, kind=SanctionKind.BAN, area=ALL, reason="Betrug"
    )
    assert ban.expires_at is None
    for area in EVERY_AREA:
        assert await moderation.access(bob, area) == Denied("Betrug", None, ban.id, ALL)
    clock.advance(days=3650)
    assert not await moderation.access(bob, WEB)


@pytest.mark.rule("O5")
async def test_moderators_ban_only_for_a_limited_time(
    moderation: Moderation, people: People
) -> None:
    alice = Subject.account(people.alice)
    limit = timedelta(hours=moderation.settings.moderator_ban_max_hours)
    with pytest.raises(BanTooLongError):
        await moderation.impose(
            by=people.moderator, subject=alice, kind=SanctionKind.BAN, area=WEB, reason="x"
        )
    with pytest.raises(BanTooLongError):
        await moderation.impose(
            by=people.moderator,
            subject=alice,
            kind=SanctionKind.BAN,
            area=WEB,
            reason="x",
            duration=limit + timedelta(seconds=1),
        )
    with pytest.raises(AreaReservedError):
        await moderation.impose(
            by=people.moderator,
            subject=alice,
            kind=SanctionKind.BAN,
            area=ALL,
            reason="x",
            duration=timedelta(hours=1),
        )
    with pytest.raises(NotPermittedError):
        await moderation.impose(
            by=people.bob,
            subject=alice,
            kind=SanctionKind.BAN,
            area=WEB,
            reason="x",
            duration=timedelta(hours=1),
        )
    # Nothing of the refused attempts was stored or cost karma.
    assert await list_sanctions(moderation.sessions, now=moderation.clock()) == []
    assert await karma_history(moderation.sessions, people.alice) == []
    # Exactly the maximum is fine; an admin may go beyond it.
    await moderation.impose(
        by=people.moderator,
        subject=alice,
        kind=SanctionKind.BAN,
        area=WEB,
        reason="x",
        duration=limit,
    )
    await moderation.impose(
        by=people.admin,
        subject=alice,
        kind=SanctionKind.BAN,
        area=WEB,
        reason="y",
        duration=limit * 10,
    )
    denied = await moderation.access(alice, WEB)
    assert isinstance(denied, Denied)
    assert (denied.reason, denied.expires_at) == ("y", moderation.clock() + limit * 10)


@pytest.mark.rule("O5")
async def test_a_moderator_cannot_lift_an_admins_permanent_ban(
    moderation: Moderation, people: People
) -> None:
    alice = Subject.account(people.alice)
    ban = await moderation.impose(
        by=people.admin, subject=alice, kind=SanctionKind.BAN, area=ALL, reason="Betrug"
    )
    with pytest.raises(AreaReservedError):
        await moderation.lift(ban.id, by=people.moderator)
    lifted = await moderation.lift(ban.id, by=people.admin)
    assert (lifted.lifted_by, lifted.lifted_at) == (people.admin, moderation.clock())
    assert await moderation.access(alice, WEB) is ALLOWED


@pytest.mark.rule("O5")
async def test_bans_reach_linked_phone_identities_and_back(
    moderation: Moderation, sessions: Sessions, people: People
) -> None:
    linked = await phone_identity(sessions, number="+49301234", account_id=people.alice)
    stranger = await phone_identity(sessions, number="+49309999")
    await moderation.impose(
        by=people.moderator,
        subject=Subject.phone(linked),
        kind=SanctionKind.BAN,
        area=CONFERENCE,
        reason="Störung",
        duration=timedelta(hours=2),
    )
    # The person's web account is refused the same area, the stranger's phone is not.
    assert not await moderation.access(Subject.account(people.alice), CONFERENCE)
    assert await moderation.access(Subject.phone(stranger), CONFERENCE) is ALLOWED
    await moderation.impose(
        by=people.moderator,
        subject=Subject.account(people.bob),
        kind=SanctionKind.BAN,
        area=MAILBOX,
        reason="Spam",
        duration=timedelta(hours=2),
    )
    bobs_phone = await phone_identity(sessions, number="+49305555", account_id=people.bob)
    assert not await moderation.access(Subject.phone(bobs_phone), MAILBOX)


@pytest.mark.rule("O5")
async def test_unknown_subjects_are_allowed_and_areas_are_required(
    moderation: Moderation,
) -> None:
    assert await moderation.access(Subject.phone(424242), WEB) is ALLOWED
    with pytest.raises(ValueError, match="area"):
        await moderation.access(Subject.phone(1))


@pytest.mark.rule("P3")
async def test_warn_mute_kick_ban_cost_karma_and_are_audited(
    moderation: Moderation, clock: Clock, people: People, game_id: str
) -> None:
    alice = Subject.account(people.alice)
    settings = moderation.settings
    await moderation.impose(
        by=people.moderator, subject=alice, kind=SanctionKind.WARN, reason="Ton", game_id=game_id
    )
    mute = await moderation.impose(
        by=people.moderator,
        subject=alice,
        kind=SanctionKind.MUTE,
        reason="Schreien",
        duration=timedelta(minutes=10),
        game_id=game_id,
    )
    await moderation.impose(
        by=people.moderator,
        subject=alice,
        kind=SanctionKind.KICK,
        reason="Absprachen",
        game_id=game_id,
    )
    await moderation.impose(
        by=people.moderator,
        subject=alice,
        kind=SanctionKind.BAN,
        area=Area.in_world("werwolf"),
        reason="Absprachen",
        duration=timedelta(hours=1),
    )
    history = await karma_history(moderation.sessions, people.alice)
    assert sorted(-entry.amount for entry in history) == sorted(
        [settings.karma_warn, settings.karma_mute, settings.karma_kick, settings.karma_ban]
    )
    actions = [e.action for e in await audit_log(moderation.sessions, target_kind="account")]
    assert actions == ["sanction.ban", "sanction.kick", "sanction.mute", "sanction.warn"]
    assert await moderation.muted(alice) == mute
    clock.advance(minutes=10)
    assert await moderation.muted(alice) is None


async def test_malformed_sanctions_are_refused(moderation: Moderation, people: People) -> None:
    alice = Subject.account(people.alice)
    cases = [
        {"kind": SanctionKind.MUTE, "reason": "x"},
        {"kind": SanctionKind.KICK, "reason": "x"},
        {"kind": SanctionKind.BAN, "reason": "x", "duration": timedelta(hours=1)},
        {"kind": SanctionKind.WARN, "reason": "  "},
        {"kind": SanctionKind.WARN, "reason": "x", "duration": timedelta(hours=1)},
        {"kind": SanctionKind.MUTE, "reason": "x", "duration": timedelta(0)},
    ]
    for case in cases:
        with pytest.raises(InvalidSanctionError):
            await moderation.impose(by=people.admin, subject=alice, **case)  # type: ignore[arg-type]


async def test_audit_log_is_append_only_in_the_database(
    moderation: Moderation, people: People
) -> None:
    await moderation.impose(
        by=people.moderator,
        subject=Subject.account(people.bob),
        kind=SanctionKind.WARN,
        reason="Ton",
    )
    for statement in (update(AuditEntryRow).values(action="nothing"), delete(AuditEntryRow)):
        with pytest.raises(DBAPIError, match="append-only"):
            async with moderation.sessions.begin() as session:
                await session.execute(statement)
    assert [e.action for e in await audit_log(moderation.sessions)] == ["sanction.warn"]


@pytest.mark.rule("P3")
async def test_a_sanction_costs_a_phone_only_identity_its_own_karma(
    moderation: Moderation, people: People, game_id: str
) -> None:
    """Issue 10: a caller known only by phone ID loses karma from their own ledger."""
    phone_id = await phone_identity(moderation.sessions, pin="2468")
    await moderation.impose(
        by=people.moderator,
        subject=Subject.phone(phone_id),
        kind=SanctionKind.WARN,
        reason="Ton",
        game_id=game_id,
    )
    history = await karma_history(moderation.sessions, Owner.phone(phone_id))
    assert [(e.amount, e.reason) for e in history] == [
        (-moderation.settings.karma_warn, "moderation: warning")
    ]
