"""Linking a phone number over real HTTP (issue 8): the answer never says whose a number is,
the number links only once its code was typed from it, and requests are rate-limited."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from vollmond.moderation.audit import audit_log
from vollmond.settings import IdentitySettings
from vollmond.store import (
    create_phone_identity,
    credit_change,
    identify_caller,
    karma_change,
    karma_history,
    karma_total,
    verify_number,
)
from vollmond.store.merge import MERGED_PHONE
from vollmond.store.owners import Owner

from .support import ApiClient, Service

S = IdentitySettings()


def unique_number() -> str:
    return f"+4930{time.monotonic_ns() % 10**9:09d}"


async def test_linking_a_number_needs_its_code_and_reveals_no_owner(
    api: Callable[[], ApiClient], service: Service
) -> None:
    anonymous = api()
    assert (await anonymous.post("/api/phone", {"pin": "1234"})).status_code == 401
    assert (await anonymous.get("/api/phone")).status_code == 401
    first, second = api(), api()
    await first.signup(f"Telefon{time.monotonic_ns() % 100000}")
    await second.signup(f"Telefax{time.monotonic_ns() % 100000}")
    number = unique_number()
    asked = await first.post("/api/phone", {"number": number, "pin": "4711"})
    assert asked.status_code == 200, asked.text
    body = asked.json()
    assert body["has_pin"] is True and len(str(body["phone_id"])) == S.phone_id_digits
    assert body["number"] is None  # not linked yet: only pending
    pending = body["pending"]
    assert pending["number"] == number and len(pending["code"]) == S.code_digits
    assert 0 < pending["expires_in"] <= S.code_ttl_s
    assert await identify_caller(service.hub.sessions, number) is None
    # The page shows the pending link, never the code again.
    shown = (await first.get("/api/phone")).json()
    assert shown["pending"] == {"number": number, "expires_in": shown["pending"]["expires_in"]}
    # The caller types the code from that number (the announcer's key 4 calls this).
    verified = await verify_number(
        service.hub.sessions, number, pending["code"], asserted=False, settings=S
    )
    assert verified.identity is not None and verified.identity.account_id == first.account_id
    assert (await first.get("/api/phone")).json()["number"] == number
    # Someone else asking for the same number gets the same kind of answer as for a free one.
    taken = await second.post("/api/phone", {"number": number})
    free = await second.post("/api/phone", {"number": unique_number()})
    assert taken.status_code == free.status_code == 200
    assert set(taken.json()) == set(free.json())
    assert set(taken.json()["pending"]) == set(free.json()["pending"])
    assert taken.json()["number"] is None
    assert "another" not in taken.text and "taken" not in taken.text
    owner = await identify_caller(service.hub.sessions, number)
    assert owner is not None and owner.account_id == first.account_id


async def test_link_requests_are_limited_and_bad_input_is_a_json_error(
    api: Callable[[], ApiClient],
) -> None:
    client = api()
    await client.signup(f"Telegraf{time.monotonic_ns() % 100000}")
    for _ in range(S.link_requests):
        assert (await client.post("/api/phone", {"number": unique_number()})).status_code == 200
    limited = await client.post("/api/phone", {"number": unique_number()})
    assert limited.status_code == 429 and limited.json()["error"] == "too_many_requests"
    assert int(limited.headers["Retry-After"]) > 0
    assert (await client.post("/api/phone", {"pin": "2468"})).status_code == 200  # PIN: no limit
    for bad, code in (
        ({}, "invalid_request"),
        ({"pin": "12"}, "invalid_pin"),
        ({"number": "call me"}, "invalid_phone"),
        ({"number": "1" * 500}, "invalid_request"),
        ({"pin": 1234}, "invalid_request"),
        ({"owner": "x"}, "invalid_request"),
    ):
        response = await client.post("/api/phone", bad)
        assert response.status_code == 400, (bad, response.text)
        assert response.json()["error"] == code, bad


@pytest.mark.rule("P3")
async def test_linking_a_phone_only_identity_by_its_pin_merges_its_karma_once(
    api: Callable[[], ApiClient], service: Service
) -> None:
    """Issue 10 over HTTP: the signed-in account proves a phone ID by its PIN; the phone's
    karma and credit move to the account once, both histories show it, the audit has it."""
    sessions = service.hub.sessions
    identity = await create_phone_identity(sessions, pin="8642")
    phone = Owner.phone(identity.id)
    await karma_change(sessions, phone, 12, "game_won")
    await credit_change(sessions, phone, 9, "Gutschrift")
    client = api()
    await client.signup(f"Telefonist{time.monotonic_ns() % 100000}")
    wrong = await client.post("/api/phone", {"link_id": identity.id, "link_pin": "0000"})
    assert wrong.status_code == 403 and wrong.json()["error"] == "wrong_phone_pin"
    assert await karma_total(sessions, phone) == 12
    bad = await client.post("/api/phone", {"link_id": identity.id})
    assert bad.status_code == 400
    for _ in range(2):  # the second link changes nothing
        linked = await client.post("/api/phone", {"link_id": identity.id, "link_pin": "8642"})
        assert linked.status_code == 200, linked.text
    mine = (await client.get("/api/me/karma")).json()
    assert mine["karma"] == 12
    assert [(e["reason"], e["amount"]) for e in mine["history"]] == [(MERGED_PHONE, 12)]
    assert (await client.get("/api/me")).json()["account"]["credit"] == 9
    assert [(e.reason, e.amount) for e in await karma_history(sessions, phone)] == [
        (MERGED_PHONE, -12),
        ("game_won", 12),
    ]
    audited = await audit_log(sessions, target_kind="phone", target_id=identity.id)
    assert [a.actor_account_id for a in audited] == [client.account_id]
    other = api()
    await other.signup(f"Fremder{time.monotonic_ns() % 100000}")
    taken = await other.post("/api/phone", {"link_id": identity.id, "link_pin": "8642"})
    assert taken.status_code == 409 and taken.json()["error"] == "phone_linked"
