"""A muted caller's voice leaves the market place (O5), on real audio: baresip phones in a
running game by day, the moderation core's mute, the service's enforcer in the mixer path."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from tests.phone.e2e.conftest import PhoneRig, SeatSession
from tests.phone.e2e.support import level_at, phones, stop_all, wait_until
from tests.phone.e2e.support import tone as make_tone
from vollmond.engine.core import Rejection
from vollmond.engine.standard import GameOptions
from vollmond.engine.standard.commands import PhaseTimeout
from vollmond.engine.standard.types import Phase
from vollmond.moderation import SanctionKind, Subject
from vollmond.phone.media import Int16Array
from vollmond.service.enforce import Person
from vollmond.store.models import AccountRow, PhoneIdentityRow, Role
from vollmond.store.types import utcnow

HEARD = 1500.0
SILENT = 60.0


@pytest.mark.rule("O5")
async def test_a_muted_callers_voice_is_absent_from_the_market_place(rig: PhoneRig) -> None:
    enforcer = rig.service.enforcer
    assert enforcer is not None
    game = await rig.table(GameOptions(players=5))
    actor = rig.hub.actors[game]
    while actor.state is not None and actor.state.phase is not Phase.DAY:
        outcome = await rig.hub.submit(game, PhaseTimeout(actor.state.phase_seq))
        assert not isinstance(outcome, Rejection), outcome
    assert actor.state is not None and len(list(actor.state.living())) == 5

    muted = PhoneIdentityRow(number=None, pin_hash=None, account_id=None, created_at=utcnow())
    mo = AccountRow(name="Mo", name_key="mo", password_hash="-", role=Role.MODERATOR)
    async with rig.hub.sessions.begin() as session:
        session.add_all([muted, mo])
    await enforcer.moderation.impose(
        by=mo.id,
        subject=Subject.phone(muted.id),
        kind=SanctionKind.MUTE,
        reason="Lärm",
        duration=timedelta(minutes=10),
    )
    rig.board.prepared["muted"] = SeatSession(game, 1, person=Person(phone_identity_id=muted.id))
    rig.board.prepared["talker"] = SeatSession(game, 2)
    rig.board.prepared["listener"] = SeatSession(game, 3)
    sources: dict[str, Int16Array | None] = {
        "muted": make_tone(700.0, 60),
        "talker": make_tone(1000.0, 60),
        "listener": None,
    }
    async with phones(rig.root / "phones", sources) as lines:
        for phone in lines.values():
            await phone.dial(rig.sip_port)
        await wait_until(lambda: len(rig.phone.lines) == len(lines), 15)
        await asyncio.sleep(4.0)
        for phone in lines.values():
            await phone.hangup()
        await wait_until(lambda: not rig.phone.lines, 10)
        await stop_all(lines.values())  # complete recording files
        heard = {name: phone.recording()[8000:] for name, phone in lines.items()}

    assert level_at(heard["listener"], 1000.0) > HEARD  # the market place works
    assert level_at(heard["listener"], 700.0) < SILENT  # the muted voice is not in it
    assert level_at(heard["talker"], 700.0) < SILENT
    assert level_at(heard["muted"], 1000.0) > HEARD  # the muted caller still listens
