"""Guest seat codes are kept in the store: hashed, with an expiry, and they outlast a restart
of the service, on SQLite and on the real PostgreSQL (issue 11). The operators' ``[phone]``
settings decide their length, the tries and how long they are kept."""

from __future__ import annotations

import asyncio
import secrets
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from vollmond.engine.standard.types import RoleId
from vollmond.phone.session import PhoneSession
from vollmond.phone.session.codes import phone_code
from vollmond.service.config import Settings
from vollmond.service.hub import Hub
from vollmond.service.policy import Policy
from vollmond.settings import PhoneSettings
from vollmond.settings.toml import ConfigError
from vollmond.store import open_store
from vollmond.store.models import SeatCodeRow
from vollmond.store.seat_codes import find_seat_code, issue_seat_code
from vollmond.store.types import utcnow

from .support import call_in, press, said, wait_until
from .test_expert import database  # noqa: F401 (the fixture: one database, two hubs)
from .test_game import custom
from .test_priorities import listen, spoken_seat_code, t


async def seated_guest(
    hub: Hub, game_id: str, digits: str, phone: PhoneSettings | None = None
) -> PhoneSession:
    guest = await call_in(hub, "+4930333", phone=phone)
    await press(guest, "2")  # guest
    await press(guest, "2")  # join by code
    await press(guest, digits + "#")
    assert guest.game_id == game_id
    return guest


async def back_with(hub: Hub, code: str, phone: PhoneSettings | None = None) -> PhoneSession:
    back = await call_in(hub, "+4930333", phone=phone)
    await press(back, "2")
    await press(back, "4")
    await press(back, code + "#")
    return back


async def test_a_guest_seat_code_outlasts_a_restart_and_only_its_hash_is_stored(
    database: tuple[str, str | None],  # noqa: F811
) -> None:
    url, schema = database
    key = secrets.token_bytes(32)  # from the data directory's secret.key in the service
    options = custom(RoleId.EVIL, RoleId.SEER, RoleId.FILLER, RoleId.FILLER)
    async with open_store(url, schema=schema) as sessions:
        hub = Hub(sessions, Policy(), invitation_key=key)
        try:
            founded = await hub.found(options, private=True, host_account_id=None, channel="web")
            assert founded.invitation_code is not None
            guest = await seated_guest(hub, founded.game.id, phone_code(founded.invitation_code))
            code = spoken_seat_code(guest)
            await guest.close()  # the call drops at the table
            async with sessions() as session:
                stored = list(await session.scalars(select(SeatCodeRow)))
            assert len(stored) == 1 and code not in stored[0].code_hash
            assert stored[0].expires_at > utcnow() + timedelta(hours=11)  # the default 12 h
        finally:
            await hub.close()
    # The service restarts: a new engine and hub on the same database and secret.
    async with open_store(url, schema=schema) as sessions:
        hub = Hub(sessions, Policy(), invitation_key=key)
        try:
            back = await back_with(hub, code)
            assert back.game_id == founded.game.id and back.announcer.state == "lobby"
            assert len((await hub.table(founded.game.id)).seats) == 1  # the same seat
            assert spoken_seat_code(back) == code  # told again, the same code
            await back.close()
        finally:
            await hub.close()


async def test_a_seat_code_expires(hub: Hub) -> None:
    options = custom(RoleId.EVIL, RoleId.SEER, RoleId.FILLER, RoleId.FILLER)
    founded = await hub.found(options, private=True, host_account_id=None, channel="web")
    joined = await hub.join(founded.game.id, account_id=None, name="Gast", channel="phone")
    now = utcnow()
    code = await issue_seat_code(
        hub.sessions,
        hub.invitation_key,
        game_id=founded.game.id,
        seat_id=joined.seat.id,
        digits=5,
        ttl_s=60.0,
        now=now,
    )
    found = await find_seat_code(
        hub.sessions, hub.invitation_key, code, now + timedelta(seconds=59)
    )
    assert found is not None and found.seat_id == joined.seat.id
    later = now + timedelta(seconds=61)
    assert await find_seat_code(hub.sessions, hub.invitation_key, code, later) is None


# -- the operators' [phone] settings -----------------------------------------------------------
async def test_the_seat_code_length_and_the_tries_per_call_are_settings(hub: Hub) -> None:
    phone = PhoneSettings(seat_code_digits=4, seat_code_tries_per_call=1)
    options = custom(RoleId.EVIL, RoleId.SEER, RoleId.FILLER, RoleId.FILLER)
    founded = await hub.found(options, private=True, host_account_id=None, channel="web")
    assert founded.invitation_code is not None
    digits = phone_code(founded.invitation_code)
    guest = await seated_guest(hub, founded.game.id, digits, phone=phone)
    code = spoken_seat_code(guest)
    assert len(code) == 4
    await guest.close()
    wrong = await back_with(hub, "0000" if code != "0000" else "1111", phone=phone)
    await press(wrong, "4")
    await press(wrong, code + "#")  # one wrong try was all this call had
    assert t("phone.menu.code_limit") in said(wrong)
    assert wrong.game_id is None
    await wrong.close()


async def test_the_silence_before_a_reminder_and_the_reminders_are_settings(hub: Hub) -> None:
    """One reminder instead of three before goodbye; the default silence would be 8 s."""
    session = await call_in(hub, phone=PhoneSettings(silence_s=0.05, reminders=1))
    await press(session, "2")
    await listen(session)
    await wait_until(lambda: session.prompts.busy, 2.0)
    assert said(session)[-1] == t("phone.reminder", keys=t("phone.menu.choices"))
    await listen(session)
    await asyncio.wait_for(session.hangup_requested.wait(), 2.0)
    assert said(session)[-2:] == [t("phone.reminder_end"), t("phone.goodbye")]
    await session.close()


def test_the_phone_table_of_the_settings_file_reaches_the_sessions(tmp_path: Path) -> None:
    config = tmp_path / "vollmond.toml"
    config.write_text("[phone]\nsilence_s = 3.5\nreminders = 2\nseat_code_digits = 6\n")
    settings = Settings.from_env(config)
    assert settings.phone == PhoneSettings(silence_s=3.5, reminders=2, seat_code_digits=6)
    config.write_text("[phone]\nseat_code_digits = 9\n")
    with pytest.raises(ConfigError):
        Settings.from_env(config)
