"""Callers with the real session: the greeting, founding a private round with 00#, joining by
code, and night calls by keys (accept, decline, busy) — baresip phones, RFC 4733 keys,
recordings of what each phone heard."""

from __future__ import annotations

import asyncio
import re

import numpy as np
import numpy.typing as npt
import pytest

from tests.phone.e2e.conftest import LiveRig
from tests.phone.e2e.support import (
    Phone,
    level_at,
    media_from,
    phones,
    rms,
    stop_all,
    tone,
    wait_until,
)
from vollmond.engine.standard.types import CallStatus, Phase
from vollmond.phone.media import Int16Array
from vollmond.phone.session.codes import invitation_from_phone, phone_code
from vollmond.store.games import get_game


def best_match(recording: Int16Array, expected: Int16Array) -> float:
    """The highest normalised cross-correlation of `expected` anywhere in `recording`
    (1.0 = the same waveform up to gain; unrelated speech stays well below 0.5)."""
    x = recording.astype(np.float64)
    y = expected.astype(np.float64)
    n = len(x) + len(y)
    size = 1 << (n - 1).bit_length()
    corr = np.fft.irfft(np.fft.rfft(x, size) * np.conj(np.fft.rfft(y, size)), size)[
        : len(x) - len(y) + 1
    ]
    energy = np.concatenate([[0.0], np.cumsum(x * x)])
    window = energy[len(y) :] - energy[: len(x) - len(y) + 1]
    scores = corr / (np.sqrt(np.maximum(window, 1e-9)) * np.linalg.norm(y))
    return float(np.max(scores))


def envelope(samples: npt.NDArray[np.int16], frame: int = 160) -> npt.NDArray[np.float64]:
    usable = len(samples) // frame * frame
    blocks = samples[:usable].astype(np.float64).reshape(-1, frame)
    result: npt.NDArray[np.float64] = np.sqrt(np.mean(blocks**2, axis=1))
    return result


def heard_code(live: LiveRig, name: str) -> str:
    """The 16-digit phone code the founder was told (four spoken groups of four digits)."""
    for line in live.session(name).spoken():
        found = re.search(r"(\d \d \d \d, ){3}\d \d \d \d", line)
        if found:
            return re.sub(r"\D", "", found.group(0))
    raise AssertionError(live.session(name).spoken())


async def dial(live: LiveRig, phone: Phone) -> None:
    """Call in and return once the call has its session and the server hears the phone's media
    (keys pressed from now on arrive)."""
    before = len(live.sessions.get(phone.name, []))
    await phone.dial(live.sip_port)
    await wait_until(lambda: len(live.sessions.get(phone.name, [])) > before, 15)
    await wait_until(lambda: media_from(live.phone, phone.name), 15)


async def settle(live: LiveRig, name: str, timeout: float = 20.0) -> None:
    """Wait until every key of this caller was handled and its prompts were rendered."""
    session = live.session(name)
    async with asyncio.timeout(timeout):
        await session.idle()
        await session.prompts.rendered()


async def private_round(live: LiveRig, lines: dict[str, Phone], names: list[str]) -> str:
    """The first caller founds a private round for everyone by keys (2 = guest, 00# found,
    1# the standard rules, 1# first world, N# seats); the others join by the code the
    founder heard (2 = guest, 2 = join by code, code #). Returns the game once every caller
    has a seat."""
    founder = names[0]
    await dial(live, lines[founder])
    await lines[founder].keys("2")
    await settle(live, founder)
    await lines[founder].keys(f"00#1#1#{len(names)}#1")
    await wait_until(lambda: live.session(founder).game_id is not None, 20)
    await settle(live, founder)
    game_id = live.session(founder).game_id
    assert game_id is not None
    code = heard_code(live, founder)
    assert phone_code(invitation_from_phone(code) or "") == code
    for name in names[1:]:
        await dial(live, lines[name])
        await lines[name].keys("2")
        await settle(live, name)
        await lines[name].keys("2")
        await settle(live, name)
        await lines[name].keys(code + "#", gap=0.15)
    await wait_until(lambda: all(live.session(n).seat is not None for n in names), 20)
    return game_id


@pytest.mark.rule("X1")
async def test_the_greeting_is_heard_and_is_the_spoken_prompt(live: LiveRig) -> None:
    async with phones(live.root / "phones", {"greeter": None}) as lines:
        await dial(live, lines["greeter"])
        await asyncio.sleep(7.0)
        await lines["greeter"].hangup()
        await wait_until(lambda: not live.phone.lines, 10)
        await stop_all(lines.values())  # complete recording files
        heard = lines["greeter"].recording()
    session = live.session("greeter")
    greeting = live.voice.render(session.t("phone.greeting"), "de")
    goodbye = live.voice.render(session.t("phone.goodbye"), "de")
    assert rms(heard[: 3 * 8000]) > 300  # not silence
    match = best_match(heard, greeting)
    other = best_match(heard, goodbye)
    print(f"greeting match {match:.3f}, other prompt {other:.3f}")
    assert match > 0.8, (match, other)
    assert other < 0.5, (match, other)
    # The loudness contour follows the rendered prompt too (envelope correlation).
    env_heard, env_expected = envelope(heard), envelope(greeting)
    lag = int(np.argmax(np.correlate(env_heard, env_expected, "valid")))
    window = env_heard[lag : lag + len(env_expected)]
    assert float(np.corrcoef(window, env_expected)[0, 1]) > 0.9


@pytest.mark.rule("P1", "X1")
async def test_a_private_round_founded_with_00_and_joined_by_code(live: LiveRig) -> None:
    names = ["founder", "second", "third", "fourth"]
    async with phones(live.root / "phones", dict.fromkeys(names)) as lines:
        game_id = await private_round(live, lines, names)
        game = await get_game(live.hub.sessions, game_id)
        assert game.private
        actor = live.hub.actors[game_id]
        assert actor.state is not None and actor.state.phase is Phase.NIGHT
        assert sorted(live.session(n).seat or 0 for n in names) == [1, 2, 3, 4]
        table = await live.hub.table(game_id)
        assert {s.channel for s in table.seats} == {"phone"}
        await asyncio.sleep(3.0)
        for phone in lines.values():
            await phone.hangup()
        await wait_until(lambda: not live.phone.lines, 10)
        await stop_all(lines.values())  # complete recording files
        for name in names:  # everyone heard the game begin (spoken, not silence)
            assert rms(lines[name].recording()[-3 * 8000 :]) > 200, name
            assert any("Hausnummer" in line for line in live.session(name).spoken()), name


@pytest.mark.rule("C1", "C2", "C3", "C4")
async def test_night_calls_by_keys_accept_decline_and_busy(live: LiveRig) -> None:
    names = ["anna", "bert", "cora", "dirk"]
    sources: dict[str, Int16Array | None] = dict.fromkeys(names)
    sources["anna"] = tone(1000.0, 90)
    sources["cora"] = tone(600.0, 90)
    async with phones(live.root / "phones", sources) as lines:
        game_id = await private_round(live, lines, names)
        actor = live.hub.actors[game_id]
        seat = {n: live.session(n).seat or 0 for n in names}
        await asyncio.sleep(1.0)

        def calls() -> list[tuple[int, int, CallStatus]]:
            assert actor.state is not None
            return [(c.caller, c.callee, c.status) for c in actor.state.calls]

        # Anna calls Bert (*0 NN #); Bert hears it ring and accepts with 1.
        await lines["anna"].keys(f"*0{seat['bert']}#")
        await wait_until(lambda: bool(calls()), 10)
        assert calls() == [(seat["anna"], seat["bert"], CallStatus.RINGING)]
        await settle(live, "bert")
        heard_by_bert = live.session("bert").transcript
        assert any(t.tone == "incoming_ring" for t in heard_by_bert)
        assert any("ruft dich an" in (t.text or "") for t in heard_by_bert)
        await lines["bert"].keys("1")
        await wait_until(lambda: calls() == [(seat["anna"], seat["bert"], CallStatus.ACTIVE)], 10)
        # Cora calls Anna, who is in a call: busy (C3).
        await lines["cora"].keys(f"*0{seat['anna']}#")
        await settle(live, "cora")
        await asyncio.sleep(2.0)
        assert [c for c in calls() if c[0] == seat["cora"]] == []  # nothing rang
        assert any(t.tone == "busy" for t in live.session("cora").transcript), [
            (t.text, t.tone) for t in live.session("cora").transcript
        ]
        # Anna hangs up with # (C4).
        await lines["anna"].keys("#")
        await wait_until(lambda: calls() == [], 10)
        # Cora calls Dirk, who declines with 2.
        await lines["cora"].keys(f"*0{seat['dirk']}#")
        await wait_until(lambda: any(c[:2] == (seat["cora"], seat["dirk"]) for c in calls()), 10)
        await settle(live, "dirk")
        await lines["dirk"].keys("2")
        await wait_until(lambda: calls() == [], 10)  # declined: the call is gone
        assert actor.state is not None and actor.state.phase is Phase.NIGHT
        await asyncio.sleep(0.5)
        for phone in lines.values():
            await phone.hangup()
        await wait_until(lambda: not live.phone.lines, 10)
        await stop_all(lines.values())  # complete recording files
        bert_heard = lines["bert"].recording()
        dirk_heard = lines["dirk"].recording()
    # Bert heard Anna's tone during the accepted call; Dirk (declined) never heard Cora.
    assert level_at(bert_heard, 1000.0) > 100.0
    assert level_at(dirk_heard, 600.0) < 60.0
