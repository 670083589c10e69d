"""Expert mode is a setting of the phone identity: ``*7#`` outlasts the call and a restart of
the service, on SQLite and on the real PostgreSQL (issue 11)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import text as sql
from sqlalchemy.exc import SQLAlchemyError

from tests.store.support import BACKENDS, POSTGRES_URL
from vollmond.i18n import text
from vollmond.phone.session import PhoneSession
from vollmond.service.hub import Hub
from vollmond.service.policy import Policy
from vollmond.store import create_account, create_engine, open_store, set_account_pin
from vollmond.worlds import get_world

from .support import call_in, heard, press, said, verified_number

W = get_world("werwolf")
NUMBER = "+4930777"
PIN = "2468"


def t(key: str, **params: object) -> str:
    return text(key, "de", W, **params)  # type: ignore[arg-type]


@pytest.fixture(params=BACKENDS)
async def database(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[str, str | None]]:
    """(url, schema) of an empty database that outlives one hub, so a test can restart."""
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'phone.db'}", None
        return
    schema = f"vollmond_phone_{uuid.uuid4().hex[:16]}"
    admin = create_engine(POSTGRES_URL)
    try:
        async with admin.begin() as connection:
            await connection.execute(sql(f'CREATE SCHEMA "{schema}"'))
    except (OSError, TimeoutError, SQLAlchemyError) as exc:
        await admin.dispose()
        pytest.fail(f"PostgreSQL is required but {POSTGRES_URL} failed: {exc!r}", pytrace=False)
    try:
        yield POSTGRES_URL, schema
    finally:
        async with admin.begin() as connection:
            await connection.execute(sql(f'DROP SCHEMA "{schema}" CASCADE'))
        await admin.dispose()


def is_expert(session: PhoneSession) -> bool:
    """Read afresh each time (mypy would keep the value narrowed by an earlier assert)."""
    return session.expert


async def signed_in(hub: Hub) -> PhoneSession:
    session = await call_in(hub, NUMBER)
    await press(session, PIN + "#")
    assert session.identity_id is not None
    return session


async def test_expert_mode_outlasts_the_call_and_a_restart(
    database: tuple[str, str | None],
) -> None:
    url, schema = database
    async with open_store(url, schema=schema) as sessions:
        hub = Hub(sessions, Policy())
        try:
            account = await create_account(sessions, "eve", "correct horse battery eve")
            await set_account_pin(sessions, account.id, PIN)
            await verified_number(hub, account.id, NUMBER)
            first = await signed_in(hub)
            assert not is_expert(first) and heard(first, t("phone.ident.welcome", name="eve"))
            await press(first, "*7#")
            assert is_expert(first) and said(first)[-1] == t("phone.expert_on")
            await first.close()  # hang up
            again = await signed_in(hub)
            assert is_expert(again)
            assert not heard(again, t("phone.ident.welcome", name="eve"))  # only the essentials
        finally:
            await hub.close()
    # The service restarts: a new engine and hub on the same database.
    async with open_store(url, schema=schema) as sessions:
        hub = Hub(sessions, Policy())
        try:
            restarted = await signed_in(hub)
            assert is_expert(restarted)
            assert said(restarted)[-1] == t("phone.menu.choices")
            await press(restarted, "*7#")
            assert not is_expert(restarted) and said(restarted)[-1] == t("phone.expert_off")
            await restarted.close()
            plain = await signed_in(hub)
            assert not is_expert(plain) and heard(plain, t("phone.ident.welcome", name="eve"))
            await plain.close()
        finally:
            await hub.close()


async def test_a_guest_keeps_expert_mode_for_the_call_only(
    database: tuple[str, str | None],
) -> None:
    url, schema = database
    async with open_store(url, schema=schema) as sessions:
        hub = Hub(sessions, Policy())
        try:
            guest = await call_in(hub, "+4930999")
            await press(guest, "*7#")
            assert is_expert(guest) and said(guest)[-1] == t("phone.expert_on")
            await guest.close()
            back = await call_in(hub, "+4930999")
            assert not is_expert(back)
            await back.close()
        finally:
            await hub.close()
