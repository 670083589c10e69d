"""Telephone identity attacks (issue 8) against the real session, hub and store: a spoofed
caller number, PIN guessing across calls, sources and restarts, and confirming a number."""

from __future__ import annotations

from pathlib import Path

from vollmond.engine.standard import GameOptions
from vollmond.i18n import text
from vollmond.phone.caller import CallerId
from vollmond.service.hub import Hub
from vollmond.service.policy import Policy
from vollmond.settings import IdentitySettings
from vollmond.store import (
    create_account,
    create_phone_identity,
    identify_caller,
    open_store,
    request_number_link,
    set_account_pin,
)
from vollmond.worlds import get_world

from .support import call_in, heard, press, said, verified_number

W = get_world("werwolf")
S = IdentitySettings()


def t(key: str, **params: object) -> str:
    return text(key, "de", W, **params)  # type: ignore[arg-type]


async def seated_account(hub: Hub, name: str, number: str, pin: str) -> tuple[int, str, int]:
    """An account with a PIN and a verified number, holding a seat in a running game."""
    account = await create_account(hub.sessions, name, "correct horse battery staple")
    await set_account_pin(hub.sessions, account.id, pin)
    await verified_number(hub, account.id, number)
    founded = await hub.found(
        GameOptions(players=5), private=False, host_account_id=account.id, host_name=name
    )
    for i in range(4):
        await hub.join(founded.game.id, account_id=None, name=f"Web {i}", channel="web")
    assert founded.game.id in hub.actors and founded.token is not None
    seat = await hub.seat_for(founded.game.id, founded.token)
    assert seat is not None and seat.house is not None
    return account.id, founded.game.id, seat.house


async def test_a_spoofed_caller_number_neither_signs_in_nor_reaches_the_seat(hub: Hub) -> None:
    """The attack: call with the From number of a linked account, press 4 (back to the seat)
    and #9 1 (leave, role revealed). Before the fix the number alone signed in."""
    account_id, game_id, house = await seated_account(hub, "Marlene", "+4930555", "5550")
    attacker = await call_in(hub, CallerId("+4930555", None, "203.0.113.66"))
    assert said(attacker)[-1] == t("phone.ident.prefilled")
    assert attacker.account_id is None and attacker.identity_id is None
    assert attacker.announcer.rejoin is None
    await press(attacker, "4")  # the seat key of the announcer: here it is only a PIN digit
    await press(attacker, "#9")
    await press(attacker, "1")
    assert attacker.seat is None and attacker.game_id is None
    assert not any(t("phone.menu.rejoin", n=house) in line for line in said(attacker))
    actor = hub.actors[game_id]
    assert actor.state is not None and actor.state.has_seat(house)
    await attacker.close()
    # The owner, typing the PIN, gets the seat back.
    owner = await call_in(hub, "+4930555")
    await press(owner, "5550#")
    assert owner.account_id == account_id
    assert heard(owner, t("phone.menu.rejoin", n=house))
    await press(owner, "4")
    assert owner.seat == house and owner.game_id == game_id
    await owner.close()


async def test_a_trusted_proxy_signs_in_only_numbers_verified_through_it(hub: Hub) -> None:
    account = await create_account(hub.sessions, "Paula", "correct horse battery staple")
    await set_account_pin(hub.sessions, account.id, "1111")
    await verified_number(hub, account.id, "+4930777", asserted=True)
    via_proxy = await call_in(hub, CallerId("+4930777", "+4930777", "10.0.0.2"))
    assert said(via_proxy)[1] == t("phone.ident.known", name="Paula")
    assert via_proxy.account_id == account.id
    await via_proxy.close()
    # Without the proxy's assertion the same From number only pre-fills.
    direct = await call_in(hub, CallerId("+4930777", None, "198.51.100.3"))
    assert said(direct)[-1] == t("phone.ident.prefilled") and direct.account_id is None
    await direct.close()
    # A number verified by an ordinary call (From only) never signs in, even asserted.
    other = await create_account(hub.sessions, "Quirin", "correct horse battery staple")
    await set_account_pin(hub.sessions, other.id, "2222")
    await verified_number(hub, other.id, "+4930888")
    asserted = await call_in(hub, CallerId("+4930888", "+4930888", "10.0.0.2"))
    assert said(asserted)[-1] == t("phone.ident.prefilled") and asserted.account_id is None
    await asserted.close()


async def test_the_pin_lockout_outlasts_the_call_and_a_restart(hub: Hub, tmp_path: Path) -> None:
    identity = await create_phone_identity(hub.sessions, pin="4711")
    first = await call_in(hub, CallerId("anonymous", None, "192.0.2.10"))
    await press(first, "1")
    for _ in range(S.pin_attempts_per_call):
        await press(first, f"{identity.id}#0000#")
    assert heard(first, t("phone.ident.too_many"))
    await first.close()
    second = await call_in(hub, CallerId("anonymous", None, "192.0.2.11"))
    await press(second, "1")
    await press(second, f"{identity.id}#0000#")
    await press(second, f"{identity.id}#0000#")  # the fifth wrong PIN in a row
    minutes = round(S.lockout_s / 60)
    assert heard(second, t("phone.ident.locked_now", n=minutes))
    assert said(second)[-1] == t("phone.ident.choices")
    await press(second, "1")
    await press(second, f"{identity.id}#4711#")  # the right PIN: still locked
    assert heard(second, t("phone.ident.locked", n=minutes))
    assert second.identity_id is None
    await second.close()
    # A restart: a new hub on the same database.
    await hub.close()
    async with open_store(f"sqlite+aiosqlite:///{tmp_path / 'phone.db'}") as sessions:
        restarted = Hub(sessions, Policy())
        try:
            third = await call_in(restarted, CallerId("anonymous", None, "192.0.2.12"))
            await press(third, "1")
            await press(third, f"{identity.id}#4711#")
            assert heard(third, t("phone.ident.locked", n=minutes))
            assert third.identity_id is None
            await third.close()
        finally:
            await restarted.close()


async def test_wrong_pins_from_one_address_block_it_for_every_phone_id(hub: Hub) -> None:
    settings = IdentitySettings(source_failures=4, source_window_s=600)
    ids = [(await create_phone_identity(hub.sessions, pin="9876")).id for _ in range(4)]
    guesser = CallerId("anonymous", None, "203.0.113.7")
    for pair in (ids[:2], ids[2:]):  # two calls, two wrong PINs each, a new ID every time
        call = await call_in(hub, guesser, identity=settings)
        await press(call, "1")
        for phone_id in pair:
            await press(call, f"{phone_id}#0000#")
        await call.close()
    call = await call_in(hub, guesser, identity=settings)
    await press(call, "1")
    await press(call, f"{ids[0]}#9876#")  # right, but the address is blocked
    assert heard(call, t("phone.ident.source_blocked", n=10))
    assert call.identity_id is None
    await call.close()
    elsewhere = await call_in(hub, CallerId("anonymous", None, "198.51.100.20"), identity=settings)
    await press(elsewhere, "1")
    await press(elsewhere, f"{ids[0]}#9876#")
    assert elsewhere.identity_id == ids[0]
    await elsewhere.close()


async def test_key_4_confirms_a_number_with_the_browsers_code(hub: Hub) -> None:
    account = await create_account(hub.sessions, "Rosa", "correct horse battery staple")
    claim = await request_number_link(hub.sessions, account.id, "+49 40 123", settings=S)
    wrong = f"{(int(claim.code) + 1) % 10**S.code_digits:0{S.code_digits}d}"
    # From another number the right code does nothing; wrong codes are limited per call.
    elsewhere = await call_in(hub, "+4940999")
    await press(elsewhere, "4")
    assert said(elsewhere)[-1] == t("phone.ident.verify_ask", n=S.code_digits)
    await press(elsewhere, f"{claim.code}#")
    assert heard(elsewhere, t("phone.ident.verify_wrong"))
    for _ in range(S.code_attempts_per_call - 1):
        await press(elsewhere, f"{wrong}#")
    assert heard(elsewhere, t("phone.ident.verify_too_many"))
    assert said(elsewhere)[-1] == t("phone.ident.choices")
    await elsewhere.close()
    assert await identify_caller(hub.sessions, "+4940123") is None
    # From the number itself it links.
    caller = await call_in(hub, "+4940123")
    await press(caller, "4")
    await press(caller, f"{claim.code}#")
    assert heard(caller, t("phone.ident.verify_ok"))
    assert caller.account_id is None  # confirming is not signing in
    await caller.close()
    linked = await identify_caller(hub.sessions, "+4940123")
    assert linked is not None and linked.account_id == account.id
    hidden = await call_in(hub, "anonymous")
    await press(hidden, "4")
    assert heard(hidden, t("phone.ident.verify_no_number"))
    await hidden.close()
