"""A complete mixed game: four baresip callers and one browser player (HTTP API + WebSocket
protocol) in one private round with short phases, played to its end.

The browser player founds the round; the callers join by the spoken-digit code; the evil
player (a caller or the browser, as dealt) votes each night — by keys on the phone, by a
WebSocket command in the browser — until the evil team wins. The browser says something in
the market place, which the callers hear spoken; the browser sees who is on the phone.
"""

from __future__ import annotations

import asyncio

import pytest

from tests.phone.e2e.conftest import LiveRig
from tests.phone.e2e.support import Phone, phones, rms, wait_until
from tests.phone.e2e.test_callers import dial, settle
from tests.service.support import ApiClient, WsClient, hello, ws_client
from vollmond.engine.standard.queries import night_room
from vollmond.engine.standard.types import Phase
from vollmond.phone.session.codes import phone_code

SHORT = {
    "steal_s": 3.0,
    "night_s": 5.0,
    "morning_s": 1.5,
    "day_s": 5.0,
    "vote_s": 3.0,
    "floor_s": 2.0,
}


def command(actor: int, name: str, **fields: object) -> dict[str, object]:
    return {"type": "command", "id": actor, "command": {"type": name, "actor": actor, **fields}}


async def join_by_code(live: LiveRig, lines: dict[str, Phone], code: str) -> None:
    """Every caller: 2 = guest, 2 = join by code, the 16 digits and #."""
    for name, phone in lines.items():
        await dial(live, phone)
        await phone.keys("2")
        await settle(live, name)
        await phone.keys("2")
        await settle(live, name)
        await phone.keys(code + "#", gap=0.15)
    await wait_until(lambda: all(live.session(n).seat is not None for n in lines), 30)


async def play_to_the_end(
    live: LiveRig, game_id: str, lines: dict[str, Phone], ws: WsClient, browser_seat: int
) -> bool:
    """The evil player kills a caller each night (keys or WebSocket); on the first day the
    browser says hello in the market place. Returns whether the browser spoke."""
    actor = live.hub.actors[game_id]
    assert actor.state is not None
    (evil,) = night_room(actor.state)
    seat_of = {n: live.session(n).seat for n in lines}
    evil_phone = next((n for n, s in seat_of.items() if s == evil), None)
    said = False

    def evil_voted() -> bool:
        state = actor.state
        return state is None or state.night is None or evil in state.night.evil_votes

    async with asyncio.timeout(150):
        while (state := actor.state) is not None and state.phase is not Phase.OVER:
            living = [p.seat for p in state.living() if p.seat != evil]
            targets = [s for s in living if s != browser_seat] or living
            if state.phase is Phase.NIGHT and not evil_voted() and targets:
                if evil_phone is not None:
                    await lines[evil_phone].keys(f"{targets[0]}#")
                    await settle(live, evil_phone)
                else:
                    await ws.send(command(evil, "UseAbility", kind="evil_vote", target=targets[0]))
                await wait_until(evil_voted, 10)
            if state.phase is Phase.DAY and not said and state.player(browser_seat).alive:
                await ws.send(command(browser_seat, "Say", text="Hallo vom Browser"))
                said = True
            await asyncio.sleep(0.2)
    return said


@pytest.mark.rule("N2", "V2", "X5", "D1")
async def test_four_callers_and_a_browser_play_a_game_to_the_end(live: LiveRig) -> None:
    browser = ApiClient(live.service)
    try:
        await browser.signup("browserin")
        founded = await browser.found(size=5, private=True, durations=SHORT)
        game_id = str(founded["game"])
        names = ["eins", "zwei", "drei", "vier"]
        async with (
            phones(live.root / "phones", dict.fromkeys(names)) as lines,
            ws_client(live.service) as ws,
        ):
            await join_by_code(live, lines, phone_code(str(founded["invitation_code"])))
            welcome = await hello(ws, game_id, str(founded["token"]))
            assert welcome["type"] == "welcome", welcome
            phone_seats = {live.session(n).seat for n in names}
            browser_seat = ({1, 2, 3, 4, 5} - phone_seats).pop()
            # The browser sees who is on the phone.
            info = (await browser.get(f"/api/games/{game_id}")).json()["game"]
            channels = {p["house"]: p["channel"] for p in info["players"]}
            assert channels == {**dict.fromkeys(phone_seats, "phone"), browser_seat: "web"}

            said = await play_to_the_end(live, game_id, lines, ws, browser_seat)
            state = live.hub.actors[game_id].state
            assert state is not None and state.outcome is not None
            while (await ws.expect("event", timeout=10)).get("code") != "game_over":
                pass
            await asyncio.sleep(4.0)  # the callers hear the end
            for phone in lines.values():
                await phone.hangup()
            await wait_until(lambda: not live.phone.lines, 10)
            await asyncio.sleep(0.3)
            for name in names:
                spoken = live.session(name).spoken()
                assert any("Das Spiel ist aus" in line for line in spoken), (name, spoken[-5:])
                assert rms(lines[name].recording()) > 200, name
                if said:  # the browser spoke in the market place: every caller heard it
                    assert any("Hallo vom Browser" in line for line in spoken), name
    finally:
        await browser.close()
