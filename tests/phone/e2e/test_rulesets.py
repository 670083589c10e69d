"""A whole classic game and a whole mayor game by telephone: real baresip callers at a table
with bots, short phases, played to the end.

The round is founded as the web founds it (with short phases); two callers join by the
spoken-digit code and the free seats are filled with bots, which starts the game. Whenever a
caller has something to do, the test types its keys on the real phone (RFC 4733): it reads the
caller's own legal actions with their keys from the rule set (`RuleSet.keypad`), as a person
reads the prompt. The callers' commands reach the game only through their phone lines.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.phone.e2e.conftest import LiveRig
from tests.phone.e2e.support import Phone, phones, wait_until
from tests.phone.e2e.test_callers import dial, settle
from vollmond.engine.classic.options import ClassicOptions
from vollmond.engine.classic.options import Durations as ClassicDurations
from vollmond.engine.core import Viewer
from vollmond.engine.mayor.options import Durations as MayorDurations
from vollmond.engine.mayor.options import MayorOptions
from vollmond.engine.ruleset import HasKeypad, Key, KeyAction, Press
from vollmond.i18n import render_event
from vollmond.phone.session.codes import phone_code
from vollmond.store import read_commands
from vollmond.worlds import get_world

CALLERS = ("eins", "zwei")

CLASSIC_SHORT = ClassicDurations(
    setup_s=3.0, election_s=4.0, night_step_s=3.0, morning_s=1.0, day_s=4.0, decision_s=2.0
)
MAYOR_SHORT = MayorDurations(
    candidacy_s=3.0,
    introduction_s=2.0,
    ballot_s=3.0,
    night_s=3.0,
    morning_s=1.0,
    accusations_s=3.0,
    defence_s=2.0,
    vote_s=3.0,
)


def keys_of(presses: tuple[Press, ...]) -> str:
    typed = {Key.NOBODY: "0#", Key.YES: "1", Key.NO: "2", Key.DONE: "*#"}
    return "".join(f"{p.number}#" if p.key is Key.HOUSE else typed[p.key] for p in presses)


def pick(actions: list[KeyAction], seat: int) -> KeyAction:
    """What the caller chooses: someone else's house where there is one (so votes decide
    something), else the first action offered."""
    for action in actions:
        first = action.presses[0]
        if first.key is Key.HOUSE and first.number != seat:
            return action
    return actions[0]


async def to_the_table(live: LiveRig, lines: dict[str, Phone], code: str) -> None:
    """Every caller: 2 = guest, 2 = join by code, the 16 digits and #; then at the table."""
    for name, phone in lines.items():
        await dial(live, phone)
        await phone.keys("2")
        await settle(live, name)
        await phone.keys("2")
        await settle(live, name)
        await phone.keys(code + "#", gap=0.15)
    await wait_until(lambda: all(live.session(n).announcer.state == "lobby" for n in lines), 30)


async def play_by_phone(live: LiveRig, game_id: str, lines: dict[str, Phone]) -> None:
    """Until the game is over: each caller, once per phase, types the keys of one of its
    own legal actions (the bots play the other seats themselves)."""
    actor = live.hub.actors[game_id]
    rules = actor.ruleset
    assert isinstance(rules, HasKeypad)
    seats = {name: live.session(name).seat for name in lines}
    typed: set[tuple[str, int]] = set()
    async with asyncio.timeout(55):
        while (state := actor.state) is not None and not rules.is_over(state):
            for name, phone in lines.items():
                seat = seats[name]
                assert seat is not None
                turn = (name, rules.phase_seq(state))
                actions = list(rules.keypad(state, seat))
                if actions and turn not in typed:
                    typed.add(turn)
                    await phone.keys(keys_of(pick(actions, seat).presses), gap=0.12)
            await asyncio.sleep(0.1)


async def a_game_by_phone(live: LiveRig, ruleset: str, options: Any) -> None:
    founded = await live.hub.found(
        options, ruleset=ruleset, private=True, host_account_id=None, channel="web"
    )
    assert founded.invitation_code is not None
    game_id = founded.game.id
    async with phones(live.root / "phones", dict.fromkeys(CALLERS)) as lines:
        await to_the_table(live, lines, phone_code(founded.invitation_code))
        await live.hub.fill_with_bots(game_id, by_account_id=None)
        await wait_until(lambda: all(live.session(n).seat is not None for n in lines), 10)
        seats = {name: live.session(name).seat for name in CALLERS}
        await play_by_phone(live, game_id, lines)

        # Every caller gave commands by keys, and heard the end of the game.
        actor = live.hub.actors[game_id]
        history = await actor.history_for(Viewer.spectator(), 0)
        (over,) = [event for _, event in history if event.code == "game_over"]
        world = get_world(actor.options.world)
        end = render_event(over, "de", world, ruleset)
        for name in CALLERS:
            await wait_until(lambda n=name: end in live.session(n).spoken(), 15)  # type: ignore[misc]
        logged = await read_commands(live.hub.sessions, game_id)
        given = {
            entry.command["command"].get("actor")
            for entry in logged
            if isinstance(entry.command, dict) and isinstance(entry.command.get("command"), dict)
        }
        for name in CALLERS:
            assert seats[name] in given, (name, seats, given)
        for phone in lines.values():
            await phone.hangup()
        await wait_until(lambda: not live.phone.lines, 10)


@pytest.mark.rule("A5", "A6", "A9")
async def test_a_classic_game_by_phone_with_bots(live: LiveRig) -> None:
    options = ClassicOptions(players=5, durations=CLASSIC_SHORT, stalemate_rounds=2)
    await a_game_by_phone(live, "classic", options)


@pytest.mark.rule("B1", "B3", "B5")
async def test_a_mayor_game_by_phone_with_bots(live: LiveRig) -> None:
    options = MayorOptions(players=5, nazis=1, durations=MAYOR_SHORT, stalemate_rounds=2)
    await a_game_by_phone(live, "mayor", options)
