"""One projection for every channel: what a viewer may know of the game, and nothing more.

Channels never filter secrets themselves; if it is not in `view`, they cannot leak it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from vollmond.engine.core import Json, Viewer, ViewerKind
from vollmond.engine.kit import view as kit_view
from vollmond.engine.standard.chat import hears_market_quietly, is_on_market
from vollmond.engine.standard.commands import Command
from vollmond.engine.standard.legal import legal_actions
from vollmond.engine.standard.options import GameOptions
from vollmond.engine.standard.properties import (
    bonded_partners,
    bonds_known,
    in_night_room,
    night_room,
    spec_of,
)
from vollmond.engine.standard.state import DayState, Fact, GameState, Player
from vollmond.engine.standard.types import (
    ActionKind,
    CallKind,
    CallMode,
    CallStatus,
    NightStep,
    Phase,
    RoleId,
    Side,
    Trait,
)


def known_roles(state: GameState, viewer: Viewer) -> dict[int, RoleId]:
    """Roles the viewer may see: revealed ones, their own, their team's, their twin's."""
    over = state.phase is Phase.OVER
    known = {p.seat: p.role for p in state.players if p.revealed or over}
    if viewer.kind is not ViewerKind.PLAYER or viewer.seat is None:
        return known
    me = state.player(viewer.seat)
    known[me.seat] = me.role
    if not bonds_known(state):
        return known
    if in_night_room(me):
        for seat in night_room(state, living_only=False):
            known[seat] = state.player(seat).role
    if Trait.BONDED_PAIR in spec_of(me).traits:
        for p in state.players:
            if p.role is me.role:
                known[p.seat] = p.role
    return known


def _known_lovers(state: GameState, viewer: Viewer) -> set[int]:
    if state.phase is Phase.OVER:
        return {p.seat for p in state.players if p.lover}
    if viewer.seat is not None and viewer.kind is ViewerKind.PLAYER:
        me = state.player(viewer.seat)
        if me.lover:
            return {p.seat for p in state.players if p.lover}
    return set()


@dataclass(frozen=True, slots=True)
class SeatView:
    """One house as the viewer sees it: `role` only when the viewer may know it."""

    seat: int
    alive: bool
    role: RoleId | None
    lover: bool
    present: bool

    def to_json(self) -> dict[str, Json]:
        return {
            "seat": self.seat,
            "alive": self.alive,
            "role": self.role.value if self.role is not None else None,
            "lover": self.lover,
            "present": self.present,
        }


@dataclass(frozen=True, slots=True)
class CallView:
    """The viewer's own call (or séance) from their side of it."""

    id: int
    kind: CallKind
    other: int
    incoming: bool
    status: CallStatus
    mode: CallMode

    def to_json(self) -> dict[str, Json]:
        return {
            "id": self.id,
            "kind": self.kind.value,
            "with": self.other,
            "incoming": self.incoming,
            "status": self.status.value,
            "mode": self.mode.value,
        }


@dataclass(frozen=True, slots=True)
class MeView:
    """What a seated player knows about themself: role, charges, facts, partners, menu."""

    seat: int
    role: RoleId
    alive: bool
    memory: Mapping[str, int]
    facts: tuple[Fact, ...]
    partners: tuple[int, ...]
    call: CallView | None
    hears_market_quietly: bool
    legal: tuple[Command, ...]

    def to_json(self) -> dict[str, Json]:
        return {
            "seat": self.seat,
            "role": self.role.value,
            "alive": self.alive,
            "memory": dict(self.memory),
            "facts": [fact.to_json() for fact in self.facts],
            "partners": list(self.partners),
            "call": self.call.to_json() if self.call is not None else None,
            "hears_market_quietly": self.hears_market_quietly,
            "legal": [describe(cmd) for cmd in self.legal],
        }


@dataclass(frozen=True, slots=True)
class NightRoomView:
    """The evil team's room (N1-N7), only for its living members once bonds are known."""

    members: tuple[int, ...]
    votes: Mapping[int, int]
    victim_locked: bool
    victim: int | None

    def to_json(self) -> dict[str, Json]:
        return {
            "members": list(self.members),
            "votes": {str(v): t for v, t in sorted(self.votes.items())},
            "victim_locked": self.victim_locked,
            "victim": self.victim,
        }


@dataclass(frozen=True, slots=True)
class DayView:
    """The day's public record, plus the vote transfers the viewer is part of (S15)."""

    nominations: Mapping[int, int]
    nominees: tuple[int, ...]
    voted: tuple[int, ...]
    waiting_for: tuple[int, ...]
    floor: int | None
    my_transfers: Mapping[int, int]

    def to_json(self) -> dict[str, Json]:
        return {
            "nominations": {str(by): n for by, n in sorted(self.nominations.items())},
            "nominees": list(self.nominees),
            "voted": list(self.voted),
            "waiting_for": list(self.waiting_for),
            "floor": self.floor,
            "my_transfers": {str(giver): to for giver, to in self.my_transfers.items()},
        }


@dataclass(frozen=True, slots=True)
class OutcomeView:
    sides: tuple[Side, ...]
    winners: tuple[int, ...]

    def to_json(self) -> dict[str, Json]:
        return {"sides": [s.value for s in self.sides], "winners": list(self.winners)}


@dataclass(frozen=True, slots=True)
class StandardView:
    """Everything one viewer may know right now (the `RuleSet.view` of the standard rules).

    A typed value, so channels and tests can read it without string keys; `to_json` gives the
    JSON the protocol sends (docs/protocol.md).
    """

    phase: Phase
    round: int
    phase_seq: int
    step: NightStep | None
    world: str
    options: GameOptions
    seats: tuple[SeatView, ...]
    day: DayView | None
    instant_kill_used: bool
    outcome: OutcomeView | None
    me: MeView | None
    night_room: NightRoomView | None
    witch_victim: int | None

    def to_json(self) -> dict[str, Json]:
        return {
            "phase": self.phase.value,
            "round": self.round,
            "phase_seq": self.phase_seq,
            "step": self.step.value if self.step is not None else None,
            "world": self.world,
            "options": self.options.to_json(),
            "seats": [seat.to_json() for seat in self.seats],
            "day": self.day.to_json() if self.day is not None else None,
            "instant_kill_used": self.instant_kill_used,
            "outcome": self.outcome.to_json() if self.outcome is not None else None,
            "me": self.me.to_json() if self.me is not None else None,
            "night_room": self.night_room.to_json() if self.night_room is not None else None,
            "witch_victim": self.witch_victim,
        }


def _seats(state: GameState, viewer: Viewer) -> tuple[SeatView, ...]:
    roles = known_roles(state, viewer)
    lovers = _known_lovers(state, viewer)
    by_day = state.phase is not Phase.NIGHT
    return tuple(
        SeatView(
            seat=p.seat,
            alive=p.alive,
            role=roles.get(p.seat),
            lover=p.seat in lovers,
            present=by_day and is_on_market(state, p.seat),
        )
        for p in state.players
    )


def _me(state: GameState, player: Player) -> MeView:
    partners = bonded_partners(state, player)
    if not bonds_known(state):
        partners = frozenset(s for s in partners if player.lover and state.player(s).lover)
    call = state.call_of(player.seat)
    return MeView(
        seat=player.seat,
        role=player.role,
        alive=player.alive,
        memory=MappingProxyType(memory_of(player)),
        facts=player.facts,
        partners=tuple(sorted(partners)),
        call=None
        if call is None
        else CallView(
            id=call.id,
            kind=call.kind,
            other=call.other(player.seat),
            incoming=call.callee == player.seat,
            status=call.status,
            mode=call.mode_of(player.seat),
        ),
        hears_market_quietly=hears_market_quietly(state, player.seat),
        legal=tuple(legal_actions(state, player.seat)),
    )


_USED_TRAIT_NAMES: Mapping[Trait, str] = MappingProxyType(
    {Trait.SURVIVES_FIRST_BANISHMENT: "spared"}
)


def memory_of(player: Player) -> dict[str, int]:
    """The role state as the protocol's `memory` (docs/protocol.md): charges by their names
    ("heal", "poison", "bullets"), `last_<kind>` (0 = nobody), one-time effects used as 1."""
    memory: dict[str, int] = {}
    state = player.role_state
    for kind, left in state.charges.items():
        ability = player.spec.ability(kind)
        memory[ability.charge_name if ability is not None else kind.value] = left
    for kind, target in state.last_targets.items():
        memory[f"last_{kind.value}"] = target or 0
    for trait in sorted(state.used_traits):
        memory[_USED_TRAIT_NAMES.get(trait, trait.value)] = 1
    return memory


def describe(cmd: object) -> Json:
    """A command as the view's `legal` list shows it: its type name and its fields."""
    fields = getattr(cmd, "__slots__", ())
    out: dict[str, Json] = {"type": type(cmd).__name__}
    for name in fields:
        value = getattr(cmd, name)
        out[name] = value.value if hasattr(value, "value") else value
    return out


def _night_room(state: GameState, player: Player) -> NightRoomView | None:
    night = state.night
    if night is None or not in_night_room(player) or not player.alive or not bonds_known(state):
        return None
    return NightRoomView(
        members=tuple(sorted(night_room(state))),
        votes=MappingProxyType(dict(night.evil_votes)),
        victim_locked=night.victim_locked,
        victim=night.victim if night.victim_locked else None,
    )


def _witch_victim(state: GameState, player: Player) -> int | None:
    night = state.night
    holds_heal = spec_of(player).ability(ActionKind.HEAL) is not None
    if night is None or not holds_heal or not night.victim_locked or not player.alive:
        return None
    return night.victim


def _waiting_for(state: GameState, day: DayState, my_seat: int | None) -> tuple[int, ...]:
    """Who has not voted yet. A vote-giver looks like anyone still to vote, except to the
    two who know of the transfer (S15)."""
    known = {g for g, to in day.transfers.items() if my_seat in (g, to)}
    waiting = {p.seat for p in state.living() if p.seat not in known} - day.votes.keys()
    return tuple(sorted(waiting))


def _day(state: GameState, viewer: Viewer) -> DayView | None:
    day = state.day
    if day is None:
        return None
    my_seat = viewer.seat if viewer.kind is ViewerKind.PLAYER else None
    transfers = {giver: to for giver, to in day.transfers.items() if my_seat in (giver, to)}
    return DayView(
        nominations=MappingProxyType(dict(day.nominations)),
        nominees=day.nominees,
        voted=tuple(sorted(day.votes)),
        waiting_for=_waiting_for(state, day, my_seat) if state.phase is Phase.VOTE else (),
        floor=day.floor,
        my_transfers=MappingProxyType(transfers),
    )


def project(state: GameState, viewer: Viewer) -> StandardView:
    """Everything `viewer` may know right now, as a typed value."""
    me = night = witch = None
    if viewer.kind is ViewerKind.PLAYER and viewer.seat is not None:
        player = state.player(viewer.seat)
        me = _me(state, player)
        night = _night_room(state, player)
        witch = _witch_victim(state, player)
    outcome = state.outcome
    return StandardView(
        phase=state.phase,
        round=state.round,
        phase_seq=state.phase_seq,
        step=state.night.step if state.night is not None else None,
        world=state.options.world,
        options=state.options,
        seats=_seats(state, viewer),
        day=_day(state, viewer),
        instant_kill_used=state.instant_kill_used,
        outcome=None
        if outcome is None
        else OutcomeView(outcome.sides, tuple(sorted(outcome.winners))),
        me=me,
        night_room=night,
        witch_victim=witch,
    )


def view(state: GameState, viewer: Viewer) -> dict[str, Json]:
    """`project` as JSON-ready data: what every channel sends today."""
    return project(state, viewer).to_json()


visible_events = kit_view.visible_events
"""The part of an event stream that `viewer` may receive (the kit's, the same for every
rule set)."""
