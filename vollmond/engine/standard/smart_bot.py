"""A bot that plays its seat from what the seat may know, better than chance.

It reads only ``view(state, Viewer.player(seat))`` — its own role and facts (a seer's checks),
its partners and, when evil, the team's night room — plus the public record it watched itself:
who nominated whom, and the roles of the dead once revealed. It never looks at another seat's
secrets in the state. From that it keeps a suspicion score per seat:

* a fact says evil: certainly evil; a fact says harmless: certainly not;
* nominating someone later revealed as harmless makes a seat suspect, nominating someone later
  revealed as evil clears it a little (the village's only public evidence).

The village votes and shoots at the most suspect; the evil team agrees on one night victim (a
teammate's vote if there is one, otherwise the seat that accused them most) and banishes
outsiders by day. Abilities it has no opinion on are used as the random bot would.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

from vollmond.engine.core import Viewer
from vollmond.engine.standard.bots import RandomBot, Temperament
from vollmond.engine.standard.commands import (
    AnswerCall,
    Command,
    Interject,
    Nominate,
    PlaceCall,
    UseAbility,
    Vote,
)
from vollmond.engine.standard.legal import legal_actions
from vollmond.engine.standard.queries import spec
from vollmond.engine.standard.state import GameState
from vollmond.engine.standard.types import ActionKind, RoleId, Team
from vollmond.engine.standard.view import view

CERTAIN: Final = 100.0
NOMINATE_ABOVE: Final = 0.5
"""A villager nominates only with a case (a nomination of a harmless seat, or a fact)."""


@dataclass(slots=True)
class Knowledge:
    """What the seat knows now, rebuilt from its view at every decision."""

    seat: int
    alive: set[int]
    evil_team: frozenset[int]  # known teammates (only when the bot is evil)
    i_am_evil: bool
    score: dict[int, float]  # suspicion: higher = more likely evil
    victim: int | None  # the witch's victim, if known
    team_votes: Mapping[int, int]  # the evil team's night votes (seat -> target)


@dataclass(slots=True)
class Record:
    """The public record the bot watched: nominations per day, revealed roles."""

    nominations: dict[tuple[int, int], int] = field(default_factory=dict)  # (round, by) -> target
    revealed_evil: dict[int, bool] = field(default_factory=dict)  # dead seat -> was evil


class SmartBot:
    def __init__(
        self, seat: int, rng: random.Random, temperament: Temperament | None = None
    ) -> None:
        self.seat = seat
        self.rng = rng
        self.fallback = RandomBot(seat, rng, temperament)
        self.record = Record()

    def choose(self, state: GameState) -> Command | None:
        """One command to give now, or None to wait for the phase to move on."""
        seen = view(state, Viewer.player(self.seat))
        me = seen.get("me")
        if not isinstance(me, dict) or not me.get("alive"):
            return None
        self._watch(seen)
        legal = legal_actions(state, self.seat)
        if not legal:
            return None
        know = self._knowledge(seen, me)
        for decide in (self._answer, self._ability, self._nominate, self._vote):
            command = decide(legal, know)
            if command is not None:
                return command
        other = [c for c in legal if not isinstance(c, PlaceCall | Interject)]
        if other and self.rng.random() < 0.2:
            return self.fallback.choose(state)
        return None

    # -- watching the public record --------------------------------------------------------
    def _watch(self, seen: Mapping[str, Any]) -> None:
        day = seen.get("day")
        if isinstance(day, dict):
            for by, target in day.get("nominations", {}).items():
                self.record.nominations[(int(seen["round"]), int(by))] = int(target)
        for entry in seen.get("seats", []):
            role = entry.get("role")
            if not entry.get("alive") and isinstance(role, str):
                self.record.revealed_evil[int(entry["seat"])] = _evil(role)

    def _knowledge(self, seen: Mapping[str, Any], me: Mapping[str, Any]) -> Knowledge:
        seats = [int(s["seat"]) for s in seen.get("seats", [])]
        alive = {int(s["seat"]) for s in seen.get("seats", []) if s.get("alive")}
        room = seen.get("night_room")
        i_am_evil = _evil(str(me.get("role")))
        team = frozenset(room.get("members", [])) if isinstance(room, dict) else frozenset()
        team_votes = (
            {int(k): int(v) for k, v in room.get("votes", {}).items() if v is not None}
            if isinstance(room, dict)
            else {}
        )
        score: dict[int, float] = defaultdict(float)
        for seat in seats:
            score[seat] += self.rng.random() * 0.1  # breaks ties without a pattern
        for (_, by), target in self.record.nominations.items():
            was_evil = self.record.revealed_evil.get(target)
            if was_evil is False:
                score[by] += 1.0
            elif was_evil is True:
                score[by] -= 2.0
        for fact in me.get("facts", []):
            subject, evil = fact.get("subject"), fact.get("evil")
            if isinstance(subject, int) and isinstance(evil, bool):
                score[subject] += CERTAIN if evil else -CERTAIN
        if i_am_evil:
            for mate in team:
                score[mate] = -CERTAIN
        score[self.seat] = -CERTAIN
        victim = seen.get("witch_victim")
        return Knowledge(
            self.seat,
            alive,
            team,
            i_am_evil,
            dict(score),
            victim if isinstance(victim, int) else None,
            team_votes,
        )

    # -- decisions -------------------------------------------------------------------------
    def _answer(self, legal: Sequence[Command], know: Knowledge) -> Command | None:
        return next((c for c in legal if isinstance(c, AnswerCall) and c.accept), None)

    def _ability(self, legal: Sequence[Command], know: Knowledge) -> Command | None:
        by_kind: dict[ActionKind, list[UseAbility]] = defaultdict(list)
        for command in legal:
            if isinstance(command, UseAbility):
                by_kind[command.kind].append(command)
        for kind, options in by_kind.items():
            pick = TARGETING.get(kind, _any_target)
            chosen = pick(self, options, know)
            if chosen is not None:
                return chosen
        return None

    def _nominate(self, legal: Sequence[Command], know: Knowledge) -> Command | None:
        options = [c for c in legal if isinstance(c, Nominate)]
        if not options:
            return None
        best = self._most_suspect([c.target for c in options], know)
        if best is None or (not know.i_am_evil and know.score[best] < NOMINATE_ABOVE):
            return None  # no case against anyone yet: let others speak first
        return next(c for c in options if c.target == best)

    def _vote(self, legal: Sequence[Command], know: Knowledge) -> Command | None:
        options = [c for c in legal if isinstance(c, Vote)]
        if not options:
            return None
        nominees = [c.target for c in options if c.target is not None]
        best = self._most_suspect(nominees, know)
        if best is None or know.score[best] <= -CERTAIN / 2:
            return next((c for c in options if c.target is None), None)
        return next(c for c in options if c.target == best)

    def _most_suspect(self, seats: Sequence[int | None], know: Knowledge) -> int | None:
        """The most suspect of `seats`, never a known teammate of an evil bot."""
        candidates = [s for s in seats if s is not None and s not in know.evil_team]
        if not candidates:
            return None
        return max(candidates, key=lambda s: know.score.get(s, 0.0))

    # -- targets per ability (a table, not a chain of roles) -------------------------------
    def evil_vote(self, options: Sequence[UseAbility], know: Knowledge) -> UseAbility | None:
        """Agree with the team: a teammate's target if any, else whoever suspects us most."""
        targets = {c.target: c for c in options}
        for target in know.team_votes.values():
            if target in targets:
                return targets[target]
        accusers: dict[int, float] = defaultdict(float)
        for (_, by), target in self.record.nominations.items():
            if target in know.evil_team:
                accusers[by] += 1.0
        outsiders = [t for t in targets if t is not None and t not in know.evil_team]
        if not outsiders:
            return None
        best = max(outsiders, key=lambda t: (accusers.get(t, 0.0), -t))
        return targets[best]

    def check(self, options: Sequence[UseAbility], know: Knowledge) -> UseAbility | None:
        """Check someone not known yet (score near zero)."""
        unknown = [c for c in options if c.target is not None and abs(know.score[c.target]) < 50]
        return self.rng.choice(unknown or list(options))

    def protect(self, options: Sequence[UseAbility], know: Knowledge) -> UseAbility | None:
        """Guard the least suspect seat (likely a valuable villager)."""
        usable = [c for c in options if c.target is not None]
        if not usable:
            return None
        return min(usable, key=lambda c: know.score.get(c.target or 0, 0.0))

    def heal(self, options: Sequence[UseAbility], know: Knowledge) -> UseAbility | None:
        """Heal a victim not known to be evil."""
        for command in options:
            if command.target is not None and know.score.get(command.target, 0.0) < CERTAIN / 2:
                return command
        return None

    def strike(self, options: Sequence[UseAbility], know: Knowledge) -> UseAbility | None:
        """Poison, shoot, kill at once: only someone certainly (or, for the evil team, any
        outsider) on the other side."""
        usable = [c for c in options if c.target is not None]
        if not usable:
            return None
        best = max(usable, key=lambda c: know.score.get(c.target or 0, 0.0))
        if know.i_am_evil or know.score.get(best.target or 0, 0.0) >= CERTAIN / 2:
            return best
        return None


def _any_target(bot: SmartBot, options: Sequence[UseAbility], know: Knowledge) -> UseAbility:
    return bot.rng.choice(list(options))


Targeting = Callable[[SmartBot, Sequence[UseAbility], Knowledge], UseAbility | None]

TARGETING: Final[Mapping[ActionKind, Targeting]] = MappingProxyType(
    {
        ActionKind.EVIL_VOTE: SmartBot.evil_vote,
        ActionKind.CHECK: SmartBot.check,
        ActionKind.PROTECT: SmartBot.protect,
        ActionKind.HEAL: SmartBot.heal,
        ActionKind.POISON: SmartBot.strike,
        ActionKind.SHOOT: SmartBot.strike,
        ActionKind.INSTANT_KILL: SmartBot.strike,
    }
)
"""How the smart bot picks targets per ability; other abilities are used as by chance."""


def _evil(role: str) -> bool:
    try:
        return spec(RoleId(role)).team is Team.EVIL
    except ValueError:
        return False
