"""Conference rooms on real audio (X2): three baresip callers go through the announcer by keys
(2 guest, 5 conference rooms, NN# a world's room). Anna and Bert meet in the Werwolf room and
hear each other; Cora, alone in the Vampir room, hears neither and is heard by neither.

Each phone plays its own tone; the tail of each recording (after every prompt has been
played, so only the room is heard) shows who heard whom across two real G.711 legs.
"""

from __future__ import annotations

import asyncio

import pytest

from tests.phone.e2e.conftest import LiveRig
from tests.phone.e2e.support import level_at, phones, stop_all, tone, wait_until
from tests.phone.e2e.test_callers import dial, settle
from vollmond.phone.media import Int16Array

HEARD = 1500.0  # a 6000-amplitude tone arrives near full level
SILENT = 60.0  # G.711 idle noise and rounding stay far below this
TONES = {"anna": 1000.0, "bert": 700.0, "cora": 1300.0}
ROOMS = {"anna": "1#", "bert": "1#", "cora": "2#"}  # Werwolf, Werwolf, Vampir


@pytest.mark.rule("X2", "X1")
async def test_two_callers_in_a_room_hear_each_other_and_a_third_room_hears_nothing(
    live: LiveRig,
) -> None:
    sources: dict[str, Int16Array | None] = {n: tone(f, 300) for n, f in TONES.items()}
    async with phones(live.root / "phones", sources) as lines:
        for name, phone in lines.items():
            await dial(live, phone)
            await asyncio.sleep(0.8)
            await phone.keys("2")  # guest
            await settle(live, name)
            await phone.keys("5")  # conference rooms
            await settle(live, name)
            await phone.keys(ROOMS[name], gap=0.15)
        await wait_until(
            lambda: all(live.session(n).conference_seat is not None for n in lines), 30
        )
        werwolf, with_anna = (live.session(n).conference_seat for n in ("anna", "bert"))
        assert werwolf is not None and with_anna is not None
        assert with_anna.voice is werwolf.voice
        vampir = live.session("cora").conference_seat
        assert vampir is not None and vampir.voice is not werwolf.voice
        # Only the room is heard once every prompt ("Bert ist da", the keys) has played.
        await wait_until(lambda: not any(live.session(n).prompts.busy for n in lines), 60)
        await asyncio.sleep(3.0)
        for phone in lines.values():
            await phone.hangup()
        await wait_until(lambda: not live.phone.lines, 10)
        await stop_all(lines.values())  # complete recording files
        tail = {n: lines[n].recording()[-int(1.5 * 8000) - 4000 : -4000] for n in lines}

    assert level_at(tail["bert"], TONES["anna"]) > HEARD  # Bert hears Anna
    assert level_at(tail["anna"], TONES["bert"]) > HEARD  # Anna hears Bert
    assert level_at(tail["anna"], TONES["anna"]) < SILENT  # nobody hears themselves
    assert level_at(tail["bert"], TONES["bert"]) < SILENT
    for name in ("anna", "bert"):
        assert level_at(tail["cora"], TONES[name]) < SILENT, name  # the other room: nothing
        assert level_at(tail[name], TONES["cora"]) < SILENT, name  # and nothing from it
