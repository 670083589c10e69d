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
from vollmond.engine.core import Event, Rejection

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


class ScenarioError(AssertionError):
    """A step was refused or could not be parsed."""


class Game:
    def __init__(self, roles: str, *, leftover: str = "", seed: int = 7, **options: object) -> None:
        cards = tuple(Role(w) for w in roles.split())
        rest = tuple(Role(w) for w in leftover.split())
        self.options = ClassicOptions(players=len(cards), **options)  # type: ignore[arg-type]
        self.rng = random.Random(seed)
        result = start_with_roles(self.options, cards, rest, self.rng)
        self.state: GameState = result.state
        self.events: list[Event] = list(result.events)
        self.last: list[Event] = list(result.events)

    def send(self, command: Command) -> Rejection | None:
        outcome = apply(self.state, command, self.rng)
        if isinstance(outcome, Rejection):
            return outcome
        self.state = outcome.state
        self.last = list(outcome.events)
        self.events.extend(outcome.events)
        return None

    def run(self, script: str) -> Game:
        for step in filter(None, (s.strip() for s in script.split(";"))):
            for command in self.parse(step):
                refused = self.send(command)
                if refused is not None:
                    raise ScenarioError(f"{step!r} refused: {refused.code} {dict(refused.params)}")
        return self

    def refused(self, step: str) -> str:
        before = self.state
        for command in self.parse(step):
            refused = self.send(command)
            if refused is not None:
                assert self.state is before
                return refused.code
        raise ScenarioError(f"{step!r} was accepted")

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

    def codes(self, events: list[Event] | None = None) -> list[str]:
        return [e.code for e in (self.events if events is None else events)]

    def of(self, code: str) -> list[Event]:
        return [e for e in self.events if e.code == code]
