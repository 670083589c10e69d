"""A small readable scenario language for mayor games (like tests/scenario.py).

    g = MayorScenario("nazi nazi citizen citizen citizen citizen")   # seat 1 = nazi, ...
    g.run("stand 3; decline 1,2,4,5,6; yield; ")    # 3 is elected unopposed
    g.run("victim 1,2 -> 4")                        # the team agrees: the night ends

Steps: `stand A,B`, `decline A,B`, `vote A,B -> T`, `accuse A -> T`, `victim A,B -> T`,
`yield` (the current speaker ends the floor), `floor-timeout`, `timeout` (the stage's
timer), `leave A`, `say A: text`. A refused step fails the test; `g.refused(step)` expects a
refusal, checks that it changed nothing and returns its code.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

from tests.engine.driver import ScenarioError, ScriptedGame
from vollmond.engine.core import Event, Viewer
from vollmond.engine.mayor.commands import (
    Accuse,
    ChooseVictim,
    Command,
    FloorTimeout,
    Leave,
    PhaseTimeout,
    Say,
    Stand,
    Vote,
    YieldFloor,
)
from vollmond.engine.mayor.options import MayorOptions
from vollmond.engine.mayor.rules import apply, start_with_roles
from vollmond.engine.mayor.state import MayorState
from vollmond.engine.mayor.types import Stage, Status
from vollmond.engine.mayor.view import project

_ARROW = re.compile(r"^(\w+)\s+([\d,\s]+)\s*->\s*(\d+)$")
_SEATS = re.compile(r"^(\w+)\s+([\d,\s]+)$")
_SAY = re.compile(r"^say\s+(\d+):\s*(.*)$")


class MayorScenario(ScriptedGame[MayorState, Command]):
    def __init__(
        self, roles: str, *, lovers: tuple[int, int] | None = None, seed: int = 7, **options: Any
    ) -> None:
        role_ids = tuple(roles.split())
        self.options = MayorOptions(players=len(role_ids), **options)
        rng = random.Random(seed)
        opened = start_with_roles(self.options, role_ids, frozenset(lovers or ()), rng)
        super().__init__(opened, apply, rng)

    def parse(self, step: str) -> list[Command]:
        if step == "timeout":
            return [PhaseTimeout(self.state.phase_seq)]
        if step in ("yield", "floor-timeout"):
            floor = self.state.floor
            assert floor is not None and floor.speaker is not None, f"nobody has the floor: {step}"
            if step == "yield":
                return [YieldFloor(floor.speaker)]
            return [FloorTimeout(floor.speaker, self.state.phase_seq)]
        if m := _SAY.match(step):
            return [Say(int(m.group(1)), m.group(2))]
        if m := _ARROW.match(step):
            word, actors, target_text = m.groups()
            target = int(target_text)
            seats = [int(a) for a in actors.replace(" ", "").split(",") if a]
            makers: dict[str, Callable[[int, int], Command]] = {
                "vote": Vote,
                "accuse": Accuse,
                "victim": ChooseVictim,
            }
            if word in makers:
                return [makers[word](seat, target) for seat in seats]
        if m := _SEATS.match(step):
            word, actors = m.groups()
            seats = [int(a) for a in actors.replace(" ", "").split(",") if a]
            singles: dict[str, Callable[[int], Command]] = {
                "stand": lambda s: Stand(s, stand=True),
                "decline": lambda s: Stand(s, stand=False),
                "leave": Leave,
            }
            if word in singles:
                return [singles[word](seat) for seat in seats]
        raise ScenarioError(f"cannot parse step {step!r}")

    # -- asking ----------------------------------------------------------------------------
    def stage(self) -> Stage:
        """The current stage (a method, so a type checker never narrows it across steps)."""
        return self.state.stage

    @property
    def out(self) -> set[int]:
        return {p.seat for p in self.state.players if not p.alive}

    @property
    def alive(self) -> set[int]:
        return set(self.state.living_seats())

    def status(self, seat: int) -> Status:
        return self.state.player(seat).status

    def last(self, code: str) -> Event:
        for event in reversed(self.events):
            if event.code == code:
                return event
        raise ScenarioError(f"no event {code}")

    def events_for(self, seat: int, code: str | None = None) -> list[Event]:
        viewer = Viewer.player(seat)
        return [
            e
            for e in self.events
            if e.audience.includes(viewer) and (code is None or e.code == code)
        ]

    def view(self, seat: int) -> dict[str, Any]:
        return project(self.state, Viewer.player(seat)).to_json()

    # -- shortcuts -------------------------------------------------------------------------
    def elect(self, mayor: int) -> MayorScenario:
        """From a candidacy stage: only `mayor` stands, introduces themself, is elected."""
        assert self.stage() is Stage.CANDIDACY
        others = ",".join(str(s) for s in sorted(self.alive) if s != mayor)
        self.run(f"stand {mayor}; decline {others}; yield")
        assert self.state.mayor == mayor
        return self

    def quiet_night(self) -> MayorScenario:
        """From the night: nobody agrees, the night and the morning pass."""
        assert self.stage() is Stage.NIGHT
        return self.run("timeout; timeout")

    def night(self, victim: int) -> MayorScenario:
        """From the night: every living Nazi points at `victim`; the morning passes."""
        nazis = ",".join(str(s) for s in sorted(self.state.night_room()))
        self.run(f"victim {nazis} -> {victim}")
        assert self.stage() is Stage.MORNING
        return self.run("timeout")

    def all_vote(self, target: int) -> MayorScenario:
        voters = ",".join(str(s) for s in sorted(self.alive))
        return self.run(f"vote {voters} -> {target}")

    def defences(self) -> MayorScenario:
        """From the defence stage: every accused person yields the floor in turn."""
        while self.stage() is Stage.DEFENCE:
            self.run("yield")
        return self
