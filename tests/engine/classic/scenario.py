"""A readable scenario language for classic-rule tests (like tests/scenario.py).

    g = Game("werewolf seer villager villager villager", captain=False)
    g.until("wolves").run("wolf 1 -> 3; timeout")

Steps: `wolf A,B -> T`, `check A -> T`, `seek A -> T`, `heal A -> T`, `poison A -> T`,
`sense A -> T`, `take A -> CARD`, `link A -> T,U`, `pass A`, `elect A,B -> T`,
`vote A,B -> T` (`-> 0` keeps the hand down), `break A -> T`, `successor A -> T`,
`leave A`, `timeout`. `g.until(stage)` sends timeouts until that stage runs.
A refused step fails the test; `g.refused(step)` expects a refusal and returns its code.
"""

from __future__ import annotations

import random
import re

from tests.engine.driver import ScenarioError, ScriptedGame
from vollmond.engine.classic.commands import (
    Act,
    BreakTie,
    Command,
    Elect,
    Leave,
    NameSuccessor,
    PhaseTimeout,
    Vote,
)
from vollmond.engine.classic.options import ClassicOptions
from vollmond.engine.classic.rules import apply, start_with_roles
from vollmond.engine.classic.state import GameState
from vollmond.engine.classic.types import Kind, Phase, Role

KINDS = {
    "wolf": Kind.WOLF_VOTE,
    "check": Kind.CHECK,
    "seek": Kind.SEEK,
    "heal": Kind.HEAL,
    "poison": Kind.POISON,
    "sense": Kind.SENSE,
    "take": Kind.TAKE_CARD,
}
_ARROW = re.compile(r"^(\w+)\s+([\d,\s]+?)\s*->\s*([\d,]+)$")
_SINGLE = re.compile(r"^(\w+)\s+(\d+)$")


class Game(ScriptedGame[GameState, Command]):
    def __init__(self, roles: str, *, leftover: str = "", seed: int = 7, **options: object) -> None:
        cards = tuple(Role(w) for w in roles.split())
        rest = tuple(Role(w) for w in leftover.split())
        self.options = ClassicOptions(players=len(cards), **options)  # type: ignore[arg-type]
        rng = random.Random(seed)
        super().__init__(start_with_roles(self.options, cards, rest, rng), apply, rng)

    def until(self, stage: str, *, round: int | None = None) -> Game:
        for _ in range(200):
            if self.state.stage == stage and (round is None or self.state.round == round):
                return self
            if self.state.phase is Phase.OVER:
                break
            self.run("timeout")
        raise ScenarioError(f"stage {stage!r} never came (now {self.state.stage})")

    def parse(self, step: str) -> list[Command]:
        if step == "timeout":
            return [PhaseTimeout(self.state.phase_seq)]
        if m := _SINGLE.match(step):
            word, seat = m.group(1), int(m.group(2))
            if word == "pass":
                return [Act(seat, Kind.PASS)]
            if word == "leave":
                return [Leave(seat)]
        if m := _ARROW.match(step):
            word, actors, targets = m.groups()
            seats = [int(a) for a in actors.replace(" ", "").split(",") if a]
            ts = [int(t) for t in targets.split(",")]
            return [self._arrow(word, s, ts) for s in seats]
        raise ScenarioError(f"cannot parse {step!r}")

    def _arrow(self, word: str, seat: int, ts: list[int]) -> Command:
        if word == "link":
            return Act(seat, Kind.LINK, ts[0], ts[1])
        if word in KINDS:
            return Act(seat, KINDS[word], ts[0])
        if word == "elect":
            return Elect(seat, ts[0])
        if word == "vote":
            return Vote(seat, ts[0] or None)
        if word == "break":
            return BreakTie(seat, ts[0])
        if word == "successor":
            return NameSuccessor(seat, ts[0])
        raise ScenarioError(f"unknown step word {word!r}")

    # -- reading -----------------------------------------------------------------------------
    @property
    def dead(self) -> set[int]:
        return {p.seat for p in self.state.players if not p.alive}
