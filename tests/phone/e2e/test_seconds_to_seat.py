"""Seconds to a seat for a caller who knows the keys, with real baresip phones.

The caller listens to every prompt to its end (the line goes quiet) and only then types the
next step, at 0.25 s per key (the code at 0.15 s): an upper bound for someone who knows the
keys — cutting prompts short with a key (barge-in) is faster. Measured from the dial to the
moment the caller holds a seat. Targets (issue 11): founding ≤ 45 s, joining by code ≤ 35 s.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from tests.phone.e2e.conftest import LiveRig
from tests.phone.e2e.support import Phone, phones, wait_until
from tests.phone.e2e.test_callers import heard_code
from vollmond.phone.session import PhoneSession
from vollmond.phone.session.founding import Step

FOUNDING_TARGET_S = 45.0
JOINING_TARGET_S = 35.0


async def heard_out(live: LiveRig, name: str, ready: Callable[[PhoneSession], bool]) -> None:
    """Wait until the caller's session reached `ready` and its line went quiet."""
    await wait_until(lambda: name in live.sessions and ready(live.session(name)), 30, name)
    session = live.session(name)
    await session.idle()
    await session.prompts.rendered()
    await wait_until(lambda: not session.prompts.busy, 60, f"{name}: prompts end")


async def dial(live: LiveRig, phone: Phone) -> float:
    started = time.monotonic()
    await phone.dial(live.sip_port)
    await heard_out(live, phone.name, lambda s: s.announcer.ident.state == "choices")
    return started


@pytest.mark.rule("P1", "X1")
async def test_seconds_to_seat_founding_and_joining_by_code(live: LiveRig) -> None:
    async with phones(live.root / "phones", {"founder": None, "joiner": None}) as lines:
        founder = lines["founder"]
        started = await dial(live, founder)
        await founder.keys("2")  # guest
        await heard_out(live, "founder", lambda s: s.announcer.state == "menu")
        await founder.keys("00#")  # found a private round
        # The rules list is a menu: a caller who knows the keys cuts it with the first key
        # rather than hear all three rule sets (menus are interruptible; news and turns not).
        await wait_until(lambda: live.session("founder").announcer.state == "rulesets", 30)
        await founder.keys("1#")  # the standard rules
        await heard_out(live, "founder", lambda s: s.announcer.state == "worlds")
        await founder.keys("1#")  # Werwolf
        await heard_out(live, "founder", lambda s: s.announcer.state == "size")
        await founder.keys("5#")
        await heard_out(
            live,
            "founder",
            lambda s: s.announcer.state == "setup" and s.announcer.setup.step is Step.START,
        )
        await founder.keys("1")  # 1 für Standard
        session = live.session("founder")
        await wait_until(lambda: session.announcer.lobby_game is not None, 20, "founded")
        founding = time.monotonic() - started
        print(f"seconds to seat, founding: {founding:.1f} s")
        game_id = session.announcer.lobby_game
        assert game_id is not None
        await session.idle()
        code = heard_code(live, "founder")  # the code the founder was told

        joiner = lines["joiner"]
        started = await dial(live, joiner)
        await joiner.keys("2")  # guest
        await heard_out(live, "joiner", lambda s: s.announcer.state == "menu")
        await joiner.keys("2")  # join by code
        await heard_out(live, "joiner", lambda s: s.announcer.state == "code")
        await joiner.keys(code + "#", gap=0.15)
        joined = live.session("joiner")
        await wait_until(lambda: joined.announcer.lobby_game == game_id, 20, "joined")
        joining = time.monotonic() - started
        print(f"seconds to seat, joining by code: {joining:.1f} s")
        assert founding <= FOUNDING_TARGET_S
        assert joining <= JOINING_TARGET_S
        for phone in lines.values():
            await phone.hangup()
