"""One projection for every channel: what a viewer may know of a classic game, and nothing
more. Channels never filter secrets themselves; if it is not here, they cannot leak it.

Inside the wolves' room the members see each other's seats, not their cards, so the false
wolf looks like any wolf (A10); the pact maker knows the werewolves' seats (A12)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from vollmond.engine.classic.commands import Command
from vollmond.engine.classic.legal import legal_actions
from vollmond.engine.classic.properties import lovers, pack, wolves_room
from vollmond.engine.classic.state import Fact, GameState, Player
from vollmond.engine.classic.types import Kind, Phase, Role, Side, Step
from vollmond.engine.core import Json, Viewer, ViewerKind
from vollmond.engine.kit import view as kit_view


@dataclass(frozen=True, slots=True)
class SeatView:
    """One house as the viewer sees it: `role` only when the viewer may know it."""

    seat: int
    alive: bool
    role: Role | None
    captain: bool

    def to_json(self) -> dict[str, Json]:
        return {
            "seat": self.seat,
            "alive": self.alive,
            "role": self.role.value if self.role is not None else None,
            "captain": self.captain,
        }


@dataclass(frozen=True, slots=True)
class MeView:
    """What a seated player knows about themself and learned at night."""

    seat: int
    role: Role
    alive: bool
    spent: bool
    facts: tuple[Fact, ...]
    lovers: tuple[int, ...]
    wolves_room: tuple[int, ...]
    wolves: tuple[int, ...]
    wolf_votes: Mapping[int, int]
    victim: int | None
    cards: tuple[Role, ...]
    legal: tuple[Command, ...]

    def to_json(self) -> dict[str, Json]:
        return {
            "seat": self.seat,
            "role": self.role.value,
            "alive": self.alive,
            "spent": self.spent,
            "facts": [f.to_json() for f in self.facts],
            "lovers": list(self.lovers),
            "wolves_room": list(self.wolves_room),
            "wolves": list(self.wolves),
            "wolf_votes": {str(v): t for v, t in sorted(self.wolf_votes.items())},
            "victim": self.victim,
            "cards": [c.value for c in self.cards],
            "legal": [describe(cmd) for cmd in self.legal],
        }


@dataclass(frozen=True, slots=True)
class ClassicView:
    """Everything one viewer may know right now (the `RuleSet.view` of the classic rules)."""

    phase: Phase
    step: Step | None
    round: int
    phase_seq: int
    world: str
    seats: tuple[SeatView, ...]
    captain: int | None
    successor_due: int | None
    election: Mapping[int, int]
    day_votes: Mapping[int, int | None]
    tied: tuple[int, ...]
    sides: tuple[Side, ...]
    winners: tuple[int, ...]
    me: MeView | None

    def to_json(self) -> dict[str, Json]:
        return {
            "ruleset": "classic",
            "phase": self.phase.value,
            "step": self.step.value if self.step is not None else None,
            "round": self.round,
            "phase_seq": self.phase_seq,
            "world": self.world,
            "seats": [s.to_json() for s in self.seats],
            "captain": self.captain,
            "successor_due": self.successor_due,
            "election": {str(v): t for v, t in sorted(self.election.items())},
            "day_votes": {str(v): t for v, t in sorted(self.day_votes.items())},
            "tied": list(self.tied),
            "sides": [s.value for s in self.sides],
            "winners": list(self.winners),
            "me": self.me.to_json() if self.me is not None else None,
        }


def describe(cmd: object) -> Json:
    """A command as the view's `legal` list shows it: its type name and its fields."""
    out: dict[str, Json] = {"type": type(cmd).__name__}
    for name in getattr(cmd, "__slots__", ()):
        value = getattr(cmd, name)
        out[name] = value.value if hasattr(value, "value") else value
    return out


def _me(state: GameState, player: Player) -> MeView:
    night = state.night
    tonight = night is not None and night.number == state.round and state.phase is Phase.NIGHT
    in_room = player.spec.wakes_with_wolves and state.pack_known
    knows_lovers = player.lover or player.spec.ability(Kind.LINK) is not None
    victim = None
    if tonight and night is not None and player.alive:
        past_wolves = state.step not in (Step.THIEF, Step.AMOR, Step.WOLVES)
        sees = in_room or (
            state.step is Step.WITCH
            and player.spec.ability(Kind.HEAL) is not None
            and not player.spent
        )
        victim = night.victim if past_wolves and sees else None
    return MeView(
        seat=player.seat,
        role=player.role,
        alive=player.alive,
        spent=player.spent,
        facts=player.facts,
        lovers=tuple(sorted(lovers(state))) if knows_lovers else (),
        wolves_room=tuple(sorted(wolves_room(state, living_only=False))) if in_room else (),
        wolves=tuple(sorted(pack(state, living_only=False)))
        if player.spec.learns_wolves and state.pack_known
        else (),
        wolf_votes=MappingProxyType(dict(night.wolf_votes))
        if in_room and tonight and night is not None
        else MappingProxyType({}),
        victim=victim,
        cards=tuple(c.id for c in state.leftover)
        if player.spec.ability(Kind.TAKE_CARD) is not None
        else (),
        legal=tuple(legal_actions(state, player.seat)),
    )


def project(state: GameState, viewer: Viewer) -> ClassicView:
    over = state.phase is Phase.OVER
    me = None
    if viewer.kind is ViewerKind.PLAYER and viewer.seat is not None and state.has_seat(viewer.seat):
        me = _me(state, state.player(viewer.seat))
    seats = tuple(
        SeatView(
            seat=p.seat,
            alive=p.alive,
            role=p.role if over or p.revealed or (me is not None and me.seat == p.seat) else None,
            captain=state.captain == p.seat,
        )
        for p in state.players
    )
    day = state.day
    outcome = state.outcome
    return ClassicView(
        phase=state.phase,
        step=state.step,
        round=state.round,
        phase_seq=state.phase_seq,
        world=state.options.world,
        seats=seats,
        captain=state.captain,
        successor_due=state.successor_due,
        election=MappingProxyType(dict(state.election)),
        day_votes=MappingProxyType(dict(day.votes) if day is not None else {}),
        tied=day.tied if day is not None else (),
        sides=outcome.sides if outcome is not None else (),
        winners=tuple(sorted(outcome.winners)) if outcome is not None else (),
        me=me,
    )


def view(state: GameState, viewer: Viewer) -> dict[str, Json]:
    return project(state, viewer).to_json()


visible_events = kit_view.visible_events
"""The part of an event stream that `viewer` may receive (the kit's, the same for every
rule set)."""
