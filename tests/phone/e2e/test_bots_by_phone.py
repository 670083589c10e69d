"""Seven seats, three people by phone and four bots, played to the end — by keys only.

Three baresip callers: one founds a private round with ``00#`` (standard rules, Werwolf, seven
seats, own settings: the automatic deck, no extras, short night and day), the other two join
by the code the founder heard, and the founder fills the four free seats with bots (``2#`` at
the table); the game starts and is played by keys until it is over. The people play as people
who know what the test knows (the evil player's house): a witch among them poisons the evil
player in the first night, a hunter shoots them in the morning, and every other living villager
nominates and votes for them by day (the evil player abstains). With the automatic deck's one
evil player among seven, the callers hold the witch or the hunter in 5 deals of 7: the round
ends in the first night or morning (about 15 s from the first dial). Otherwise a vote decides
(about 70 s: the morning keeps its standard 20 s and the vote its 60 s, over once everyone
voted, and the bots vote at a person's pace; a phone founder chooses only the night and the
day), and when the evil bot's own nominee draws level, another round follows. Every step waits
for the session's state or the game's, never for a fixed time.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import numpy as np
import pytest

from tests.phone.e2e.conftest import LiveRig
from tests.phone.e2e.support import RATE, Phone, phones, rms, stop_all, wait_until
from tests.phone.e2e.test_callers import heard_code
from vollmond.bots.table import BOT_CHANNEL, BotSeat
from vollmond.engine.standard.state import GameState
from vollmond.engine.standard.types import Phase, RoleId
from vollmond.phone.session import PhoneSession
from vollmond.phone.session.founding import Step

NIGHT_S = 4
DAY_S = 6
SEATS = 7
MAX_GAME_S = 360
NAMES = ("gruenderin", "zwei", "drei")


async def call(live: LiveRig, phone: Phone) -> PhoneSession:
    """Dial and wait until the identification question is asked (keys are read from then)."""
    await phone.dial(live.sip_port)
    await wait_until(
        lambda: (
            phone.name in live.sessions
            and live.session(phone.name).announcer.ident.state == "choices"
        ),
        20,
        phone.name,
    )
    return live.session(phone.name)


async def step(phone: Phone, session: PhoneSession, keys: str, ready: Callable[[], bool]) -> None:
    """Type `keys` (a caller who knows them does not wait for the prompt to end) and wait
    until the session has moved on."""
    await phone.keys(keys, gap=0.15)
    await wait_until(ready, 20, f"{phone.name}: {keys}")
    await session.idle()  # what the step says is queued (the founder's code, say)


async def found(live: LiveRig, phone: Phone) -> str:
    """00#, the standard rules, Werwolf, 7 seats, own settings: the automatic deck, no
    extras, the night and day lengths. Returns the game."""
    s = await call(live, phone)
    a = s.announcer
    await step(phone, s, "2", lambda: a.state == "menu")
    await step(phone, s, "00#", lambda: a.state == "rulesets")
    await step(phone, s, "1#", lambda: a.state == "worlds")
    await step(phone, s, "1#", lambda: a.state == "size")
    await step(phone, s, f"{SEATS}#", lambda: a.state == "setup" and a.setup.step is Step.START)
    await step(phone, s, "2", lambda: a.setup.step is Step.DECK)
    await step(phone, s, "1#", lambda: a.setup.step is Step.EXTRAS)
    await step(phone, s, "0#", lambda: a.setup.step is Step.NIGHT)
    await step(phone, s, f"{NIGHT_S}#", lambda: a.setup.step is Step.DAY)
    await step(phone, s, f"{DAY_S}#", lambda: a.lobby_game is not None)
    assert a.lobby_game is not None
    return a.lobby_game


async def join(live: LiveRig, phone: Phone, code: str, game_id: str) -> None:
    """2 guest, 2 join by code, the 16 digits and #."""
    s = await call(live, phone)
    a = s.announcer
    await step(phone, s, "2", lambda: a.state == "menu")
    await step(phone, s, "2", lambda: a.state == "code")
    await step(phone, s, code + "#", lambda: a.lobby_game == game_id)


class People:
    """The three callers' moves: what each living one types in the phase the game is in."""

    def __init__(self, live: LiveRig, lines: dict[str, Phone], state: GameState) -> None:
        self.lines = lines
        self.seat = {name: live.session(name).seat or 0 for name in lines}
        self.role = {name: state.player(self.seat[name]).role for name in lines}
        (self.evil,) = [p.seat for p in state.players if p.role is RoleId.EVIL]
        self.done: set[tuple[str, str]] = set()

    def keys(self, state: GameState, name: str) -> str | None:
        """The keys `name` types now, once per phase and kind of move; None: nothing."""
        me, evil = state.player(self.seat[name]), self.evil
        if not me.alive:
            return None
        phase = state.phase
        moves: list[tuple[str, str, bool]] = [
            # (move, keys, whether it fits now)
            ("poison", f"{evil}#", phase is Phase.NIGHT and self.role[name] is RoleId.WITCH),
            (
                "shot",
                f"**{evil}#",
                phase in (Phase.MORNING, Phase.DAY) and self.role[name] is RoleId.HUNTER,
            ),
            ("nominate", f"{evil}#", phase is Phase.DAY and me.seat != evil),
            ("vote", f"{evil}#" if me.seat != evil else "0#", phase is Phase.VOTE),
        ]
        for move, keys, fits in moves:
            once = (move, name) if move in ("poison", "shot") else (move, f"{name}{state.round}")
            if fits and once not in self.done:
                self.done.add(once)
                return keys
        return None

    async def play(self, state: GameState) -> None:
        typed = {name: self.keys(state, name) for name in self.lines}
        await asyncio.gather(
            *(self.lines[n].keys(k, gap=0.15) for n, k in typed.items() if k is not None)
        )


@pytest.mark.rule("X1", "P1")
async def test_three_callers_and_four_bots_play_seven_seats_to_the_end_by_phone(
    live: LiveRig,
) -> None:
    started = time.monotonic()
    # Silence to send for longer than the longest game (a phone that stops sending is hung up
    # after the RTP timeout): usually over in the first night or morning, after a vote in
    # about one game in four, in a second round now and then.
    quiet = np.zeros(RATE * MAX_GAME_S, dtype=np.int16)
    async with phones(live.root / "phones", dict.fromkeys(NAMES, quiet)) as lines:
        game_id = await found(live, lines[NAMES[0]])
        code = heard_code(live, NAMES[0])
        await asyncio.gather(*(join(live, lines[n], code, game_id) for n in NAMES[1:]))
        host = live.session(NAMES[0])
        await step(lines[NAMES[0]], host, "2#", lambda: host.seat is not None)  # bots
        await wait_until(lambda: all(live.session(n).seat is not None for n in NAMES), 20)
        seated = time.monotonic() - started
        table = await live.hub.table(game_id)
        assert sorted(s.channel for s in table.seats) == [BOT_CHANNEL] * 4 + ["phone"] * 3
        actor = live.hub.actors[game_id]
        state = actor.state
        assert state is not None and state.options.players == SEATS
        assert state.options.durations.night_s == NIGHT_S
        assert state.options.durations.day_s == DAY_S
        people = People(live, lines, state)
        bots = [s for s in actor.subscribers if isinstance(s, BotSeat)]
        assert len(bots) == SEATS - len(NAMES)
        async with asyncio.timeout(MAX_GAME_S - 60):
            while (state := actor.state) is not None and state.phase is not Phase.OVER:
                await people.play(state)  # each move once: nothing while there is none
                await asyncio.sleep(0.05)
        assert state is not None and state.outcome is not None
        played = time.monotonic() - started - seated
        print(
            f"seated after {seated:.1f} s, played to the end in {played:.1f} s "
            f"(roles of the callers: {sorted(r.value for r in people.role.values())}, "
            f"round {state.round}, winners {sorted(s.value for s in state.outcome.sides)})"
        )
        assert any(bot.commands for bot in bots)  # the bots played (someone acts each night)
        for name in NAMES:
            session = live.session(name)
            await wait_until(lambda s=session: s.game_id is None, 15, name)  # type: ignore[misc]
            assert any("Das Spiel ist aus" in line for line in session.spoken()), name
        for phone in lines.values():
            await phone.hangup()
        await wait_until(lambda: not live.phone.lines, 10)
        await stop_all(lines.values())  # complete recording files
        for name in NAMES:  # they heard it on the line, not only in the transcript
            assert rms(lines[name].recording()) > 200, name
