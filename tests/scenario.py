"""A small readable scenario language for engine tests.

    g = Scenario("evil evil seer doctor filler filler")     # seat 1 = evil, seat 2 = evil, ...
    g.run("evil 1,2 -> 3; protect 4 -> 3; timeout")         # night 1 ends
    assert g.dead == set()

Steps: `evil A,B -> T`, `<ability> A -> T` (check, protect, trap, heal, poison, visit,
seance, steal, shoot, transfer, instant), `seance A -> #` / `steal A -> #` (nobody),
`nominate A -> T`, `vote A,B -> T` / `vote A -> 0` (abstain), `call A -> B`, `accept A`,
`decline A`, `hangup A`, `toggle A`, `interject A`, `say A: text`, `timeout` (phase),
`ring-timeout`, `call-timeout`, `floor-timeout`. A step that the engine refuses fails the
test; use `g.refused("...")` to expect a refusal and get its code.
"""

from __future__ import annotations

import random
import re
from dataclasses import replace
from typing import Any

from vollmond.engine.core import Event, Rejection, Viewer
from vollmond.engine.standard import (
    ActionKind,
    AnswerCall,
    CallTimeout,
    Command,
    FloorTimeout,
    GameOptions,
    GameState,
    HangUp,
    Interject,
    Nominate,
    PhaseTimeout,
    PlaceCall,
    RoleId,
    Say,
    ToggleCallMode,
    UseAbility,
    Vote,
    apply,
    start_with_roles,
)
from vollmond.engine.standard.types import Phase
from vollmond.engine.standard.view import view

ABILITY_WORDS = {
    "evil": ActionKind.EVIL_VOTE,
    "check": ActionKind.CHECK,
    "protect": ActionKind.PROTECT,
    "trap": ActionKind.TRAP,
    "heal": ActionKind.HEAL,
    "poison": ActionKind.POISON,
    "visit": ActionKind.VISIT,
    "seance": ActionKind.SEANCE,
    "steal": ActionKind.STEAL,
    "shoot": ActionKind.SHOOT,
    "transfer": ActionKind.TRANSFER_VOTE,
    "instant": ActionKind.INSTANT_KILL,
}
_ARROW = re.compile(r"^(\w[\w-]*)\s+([\d,\s]+)\s*->\s*(#|\d+)$")
_SINGLE = re.compile(r"^(\w[\w-]*)\s+(\d+)$")
_SAY = re.compile(r"^say\s+(\d+):\s*(.*)$")


class ScenarioError(AssertionError):
    """A scenario step was refused or could not be parsed."""


class Scenario:
    def __init__(
        self,
        roles: str,
        *,
        lovers: tuple[int, int] | None = None,
        seed: int = 7,
        **options: Any,
    ) -> None:
        role_ids = tuple(RoleId(word) for word in roles.split())
        self.options = GameOptions(players=len(role_ids), **options)
        self.rng = random.Random(seed)
        result = start_with_roles(self.options, role_ids, frozenset(lovers or ()), self.rng)
        self.state: GameState = result.state
        self.events: list[Event] = list(result.events)
        self.last_events: list[Event] = list(result.events)
        self.timers = list(result.timers)

    # -- driving ---------------------------------------------------------------------------
    def send(self, command: Command) -> Rejection | None:
        outcome = apply(self.state, command, self.rng)
        if isinstance(outcome, Rejection):
            return outcome
        self.state = outcome.state
        self.last_events = list(outcome.events)
        self.events.extend(outcome.events)
        self.timers.extend(outcome.timers)
        return None

    def run(self, script: str) -> Scenario:
        for step in filter(None, (s.strip() for s in script.split(";"))):
            for command in self.parse(step):
                refused = self.send(command)
                if refused is not None:
                    raise ScenarioError(f"step {step!r} refused: {refused.code} {refused.params}")
        return self

    def refused(self, step: str) -> str:
        """Send a step that must be refused; return the rejection code."""
        commands = self.parse(step)
        before = self.state
        for command in commands:
            refused = self.send(command)
            if refused is not None:
                assert self.state is before, "a rejection must not change the state"
                return refused.code
        raise ScenarioError(f"step {step!r} was accepted")

    def parse(self, step: str) -> list[Command]:
        if step == "timeout":
            return [PhaseTimeout(self.state.phase_seq)]
        if step in ("ring-timeout", "call-timeout"):
            return [CallTimeout(c.id, active=step == "call-timeout") for c in self.state.calls]
        if step == "floor-timeout":
            assert self.state.day is not None and self.state.day.floor is not None
            return [FloorTimeout(self.state.day.floor, self.state.phase_seq)]
        if m := _SAY.match(step):
            return [Say(int(m.group(1)), m.group(2))]
        if m := _ARROW.match(step):
            word, actors, target_text = m.groups()
            seats = [int(a) for a in actors.replace(" ", "").split(",") if a]
            target = None if target_text == "#" else int(target_text)
            return [self._arrow(word, seat, target) for seat in seats]
        if m := _SINGLE.match(step):
            word, seat_text = m.groups()
            seat = int(seat_text)
            singles: dict[str, Command] = {
                "accept": AnswerCall(seat, accept=True),
                "decline": AnswerCall(seat, accept=False),
                "hangup": HangUp(seat),
                "toggle": ToggleCallMode(seat),
                "interject": Interject(seat),
            }
            if word in singles:
                return [singles[word]]
        raise ScenarioError(f"cannot parse step {step!r}")

    def _arrow(self, word: str, seat: int, target: int | None) -> Command:
        if word == "nominate":
            assert target is not None
            return Nominate(seat, target)
        if word == "vote":
            return Vote(seat, None if target == 0 else target)
        if word == "call":
            assert target is not None
            return PlaceCall(seat, target)
        if word in ABILITY_WORDS:
            return UseAbility(seat, ABILITY_WORDS[word], target)
        raise ScenarioError(f"unknown word {word!r}")

    # -- asking ----------------------------------------------------------------------------
    @property
    def dead(self) -> set[int]:
        return {p.seat for p in self.state.players if not p.alive}

    @property
    def alive(self) -> set[int]:
        return {p.seat for p in self.state.players if p.alive}

    @property
    def phase(self) -> Phase:
        return self.state.phase

    def role(self, seat: int) -> RoleId:
        return self.state.player(seat).role

    def events_for(self, seat: int, code: str | None = None) -> list[Event]:
        viewer = Viewer.player(seat)
        return [
            e
            for e in self.events
            if e.audience.includes(viewer) and (code is None or e.code == code)
        ]

    def last(self, code: str) -> Event:
        for event in reversed(self.events):
            if event.code == code:
                return event
        raise ScenarioError(f"no event {code}")

    def view(self, seat: int) -> dict[str, Any]:
        return view(self.state, Viewer.player(seat))

    def to_day(self) -> Scenario:
        """From any night: let the night end and the morning pass."""
        if self.state.phase is Phase.NIGHT:
            self.run("timeout")
        if self.state.phase is Phase.MORNING:
            self.run("timeout")
        return self

    def with_options(self, **changes: Any) -> None:
        self.state = replace(self.state, options=replace(self.state.options, **changes))


def next_night(g: Scenario) -> None:
    """End the night, pass the morning, let the day end without nominations."""
    g.to_day()
    g.run("timeout")
    assert g.phase is Phase.NIGHT


def banish(g: Scenario, target: int) -> None:
    """From the night: let the night pass, then let every living player vote `target` out."""
    g.to_day()
    voters = sorted(g.alive)
    nominator = next(s for s in voters if s != target)
    g.run(f"nominate {nominator} -> {target}; timeout")
    g.run(f"vote {','.join(str(s) for s in voters)} -> {target}")
    assert g.phase is Phase.NIGHT
