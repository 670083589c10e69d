"""The spoofed caller ID attack (issue 8) with a real softphone: baresip calls with the From
number of an account that holds a seat and tries the announcer's seat key (4) and leaving
(#9 1). The number only pre-fills the phone ID: without the PIN the caller gets nowhere."""

from __future__ import annotations

import asyncio

from tests.phone.e2e.conftest import LiveRig
from tests.phone.e2e.support import phones, wait_until
from tests.service.support import ApiClient
from vollmond.engine.standard.types import Phase

NUMBER = "+4930555"


async def settle(live: LiveRig, timeout: float = 20.0) -> None:
    session = live.session(NUMBER)
    async with asyncio.timeout(timeout):
        await session.idle()
        await session.prompts.rendered()


async def seated_owner(live: LiveRig) -> tuple[str, int, str]:
    """Marlene signs up in the browser, sets a PIN, asks to link NUMBER (getting its code) and
    sits in a running game. Returns the game, her house and the code."""
    owner = ApiClient(live.service)
    try:
        await owner.signup("Marlene")
        asked = await owner.post("/api/phone", {"number": NUMBER, "pin": "5550"})
        assert asked.status_code == 200, asked.text
        code = str(asked.json()["pending"]["code"])
        game_id = str((await owner.found(size=5, private=False))["game"])
    finally:
        await owner.close()
    for i in range(4):
        await live.hub.join(game_id, account_id=None, name=f"p{i}", channel="web")
    actor = live.hub.actors[game_id]
    assert actor.state is not None and actor.state.phase is Phase.NIGHT
    seats = {s.account_id: s.house for s in (await live.hub.table(game_id)).seats}
    house = seats[owner.account_id]
    assert house is not None
    return game_id, house, code


async def test_a_spoofed_from_number_cannot_sign_in_or_reach_the_seat(live: LiveRig) -> None:
    game_id, house, code = await seated_owner(live)
    async with phones(live.root / "phones", {NUMBER: None}) as lines:
        phone = lines[NUMBER]
        # The owner confirms the number: key 4 and the code from the browser.
        await phone.dial(live.sip_port)
        await wait_until(lambda: bool(live.sessions.get(NUMBER)), 15)
        choices = live.session(NUMBER).t("phone.ident.choices")
        await wait_until(lambda: choices in live.session(NUMBER).spoken(), 15)
        await settle(live)
        await phone.keys("4")
        await settle(live)
        await phone.keys(code + "#", gap=0.15)
        confirming = live.session(NUMBER)
        done = confirming.t("phone.ident.verify_ok")
        await wait_until(lambda: done in confirming.spoken(), 15)
        await phone.hangup()
        await wait_until(lambda: not live.phone.lines, 10)
        # The attacker: the same From number, from anywhere, no PIN.
        await phone.dial(live.sip_port)
        await wait_until(lambda: len(live.sessions[NUMBER]) == 2, 15)
        attacker = live.session(NUMBER)
        prefilled = attacker.t("phone.ident.prefilled")
        await wait_until(lambda: prefilled in attacker.spoken(), 15)
        await settle(live)
        await phone.keys("4")  # the seat key of a signed-in caller
        await phone.keys("#9")  # then leave the game
        await phone.keys("1")
        # "41" ends as one entry after the digit timeout: a wrong PIN, spoken as such.
        await wait_until(lambda: attacker.t("phone.ident.wrong_pin") in attacker.spoken(), 15)
        await settle(live)
        assert attacker.account_id is None and attacker.identity_id is None
        assert attacker.seat is None and attacker.game_id is None
        assert attacker.t("phone.menu.rejoin", n=house) not in attacker.spoken()
        await phone.hangup()
        await wait_until(lambda: not live.phone.lines, 10)
    state = live.hub.actors[game_id].state
    assert state is not None and state.has_seat(house)
    assert state.phase is not Phase.OVER
