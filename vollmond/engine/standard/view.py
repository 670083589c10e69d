"""One projection for every channel: what a viewer may know of the game, and nothing more.

Channels never filter secrets themselves; if it is not in `view`, they cannot leak it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from vollmond.engine.core import Json, Viewer, ViewerKind, evolve
from vollmond.engine.kit import view as kit_view
from vollmond.engine.kit.kept import MISSING, Kept
from vollmond.engine.standard.chat import hears_market_quietly, is_on_market
from vollmond.engine.standard.commands import Command
from vollmond.engine.standard.legal import legal_menu
from vollmond.engine.standard.menus import describe
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
    if viewer.kind is ViewerKind.PLAYER and viewer.seat is not None:
        known.update(_roles_told(state, state.player(viewer.seat)))
    return known


def _roles_told(
    state: GameState, me: Player, room: frozenset[int] | None = None
) -> dict[int, RoleId]:
    """The roles a seated player knows beyond the revealed ones: their own, their team's
    (the night room, dead members too: `room` when the caller has it), their twin's."""
    known = {me.seat: me.role}
    if not bonds_known(state):
        return known
    if in_night_room(me):
        for seat in night_room(state, living_only=False) if room is None else room:
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
    legal_json: list[Json] | None = field(default=None, compare=False, repr=False)
    """`legal` as JSON when the menu came with it (`legal_menu`); rows shared, never changed."""

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
            "legal": list(self.legal_json)
            if self.legal_json is not None
            else [describe(cmd) for cmd in self.legal],
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
    shared: _Shared | None = field(default=None, compare=False, repr=False)
    """The state's part common to every viewer (its JSON made once), when `project` made this."""
    own_seats: _Houses | None = field(default=None, compare=False, repr=False)
    """The `seats` `project` made, the indices where they differ from the JSON rows they
    start from (what this viewer knows more), and those rows: only the indices need JSON of
    their own."""

    def to_json(self) -> dict[str, Json]:
        shared = self.shared
        made = self.own_seats
        if shared is not None and self.seats is shared.seats:
            seats = list(shared.seats_json())
        elif made is not None and self.seats is made[0]:
            seats = list(made[2])
            for index in made[1]:
                seats[index] = self.seats[index].to_json()
        else:
            seats = [seat.to_json() for seat in self.seats]
        if self.day is None:
            day = None
        elif shared is not None and self.day is shared.day:
            day = shared.day_json()
        else:
            day = self.day.to_json()
        return {
            "phase": self.phase.value,
            "round": self.round,
            "phase_seq": self.phase_seq,
            "step": self.step.value if self.step is not None else None,
            "world": self.world,
            "options": self.options.to_json()
            if shared is None
            else shared.options_json(self.options),
            "seats": seats,
            "day": day,
            "instant_kill_used": self.instant_kill_used,
            "outcome": self.outcome.to_json() if self.outcome is not None else None,
            "me": self.me.to_json() if self.me is not None else None,
            "night_room": self.night_room.to_json() if self.night_room is not None else None,
            "witch_victim": self.witch_victim,
        }


def views_follow_events(before: GameState, after: GameState) -> bool:
    """Whether a change shows only to the seats its events reach (`RuleSet.views_follow_events`).

    Everything a view shows comes with an event to whoever sees it, but one thing: by day,
    everyone sees who is away from the market in an answered call (`present`), and answering,
    hanging up or a call's timeout tells only its two parties. So a change is quiet when the
    seats in answered calls stayed the same."""
    return before.calls is after.calls or _in_answered_calls(before) == _in_answered_calls(after)


def _in_answered_calls(state: GameState) -> frozenset[int]:
    return frozenset(
        seat
        for call in state.calls
        if call.status is CallStatus.ACTIVE
        for seat in (call.caller, call.callee)
    )


def _public_seats(state: GameState) -> tuple[SeatView, ...]:
    """The houses as everyone sees them (revealed roles; lovers only after the end)."""
    over = state.phase is Phase.OVER
    by_day = state.phase is not Phase.NIGHT
    return tuple(
        SeatView(
            seat=p.seat,
            alive=p.alive,
            role=p.role if p.revealed or over else None,
            lover=over and p.lover,
            present=by_day and is_on_market(state, p.seat),
        )
        for p in state.players
    )


_Houses = tuple[tuple[SeatView, ...], tuple[int, ...], list[Json]]
"""Houses as one viewer sees them, the indices where they differ from the JSON rows they
start from, and those rows (shared: copied before a viewer's own rows go in)."""


def _seats(state: GameState, viewer: Viewer, shared: _Shared) -> _Houses:
    """The public houses, with what this viewer knows beyond them put in (own role, team,
    twin, lover); a spectator's are the public ones themselves. The night room's members
    start from the houses with their team's roles in, made once per state for all of them."""
    if viewer.kind is not ViewerKind.PLAYER or viewer.seat is None:
        return shared.seats, (), shared.seats_json()
    me = state.player(viewer.seat)
    if in_night_room(me) and bonds_known(state):
        base, changed, base_json = shared.team(state)
    else:
        base, changed, base_json = shared.seats, (), shared.seats_json()
    roles = {me.seat: me.role}
    if bonds_known(state) and Trait.BONDED_PAIR in spec_of(me).traits:
        roles.update((p.seat, p.role) for p in state.players if p.role is me.role)
    lovers = _known_lovers(state, viewer)
    seats = list(base)
    own = list(changed)
    for seat in sorted(roles.keys() | lovers):
        index = seat - 1
        seen = base[index]
        role = roles.get(seat, seen.role)
        lover = seat in lovers
        if role is not seen.role or lover is not seen.lover:
            seats[index] = SeatView(seen.seat, seen.alive, role, lover, seen.present)
            own.append(index)
    return tuple(seats), tuple(own), base_json


def _me(state: GameState, player: Player) -> MeView:
    partners = bonded_partners(state, player)
    if not bonds_known(state):
        partners = frozenset(s for s in partners if player.lover and state.player(s).lover)
    call = state.call_of(player.seat)
    legal, legal_json = legal_menu(state, player.seat)
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
        legal=legal,
        legal_json=legal_json,
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


def _public_day(state: GameState) -> DayView | None:
    """The day's record as someone outside every vote transfer sees it."""
    day = state.day
    if day is None:
        return None
    return DayView(
        nominations=MappingProxyType(dict(day.nominations)),
        nominees=day.nominees,
        voted=tuple(sorted(day.votes)),
        waiting_for=_waiting_for(state, day, None) if state.phase is Phase.VOTE else (),
        floor=day.floor,
        my_transfers=MappingProxyType({}),
    )


def _day(state: GameState, viewer: Viewer, public: DayView | None) -> DayView | None:
    """The public record, or for a giver or receiver of a transfer (S15) their own."""
    day = state.day
    my_seat = viewer.seat if viewer.kind is ViewerKind.PLAYER else None
    if day is None or public is None or my_seat is None:
        return public
    transfers = {giver: to for giver, to in day.transfers.items() if my_seat in (giver, to)}
    if not transfers:
        return public
    return evolve(
        public,
        waiting_for=_waiting_for(state, day, my_seat) if state.phase is Phase.VOTE else (),
        my_transfers=MappingProxyType(transfers),
    )


class _Shared:
    """The part of every viewer's view that is the same for all of them, built once per
    state, and its JSON, made by the first viewer that asks (rows shared by every viewer's
    JSON: readers never change a view's data)."""

    __slots__ = (
        "_day_json",
        "_night_room",
        "_options_json",
        "_seats_json",
        "_team",
        "day",
        "outcome",
        "seats",
    )

    def __init__(
        self, seats: tuple[SeatView, ...], day: DayView | None, outcome: OutcomeView | None
    ) -> None:
        self.seats = seats
        self.day = day
        self.outcome = outcome
        self._seats_json: list[Json] | None = None
        self._day_json: dict[str, Json] | None = None
        self._options_json: tuple[GameOptions, dict[str, Json]] | None = None
        self._night_room: frozenset[int] | None = None
        self._team: _Houses | None = None

    def team(self, state: GameState) -> _Houses:
        """The houses as the night room's members all see them (their team's roles in),
        once bonds are known (of the state this part was built for)."""
        if self._team is None:
            seats = list(self.seats)
            changed: list[int] = []
            for seat in sorted(self.night_room(state)):
                seen = seats[seat - 1]
                role = state.player(seat).role
                if role is not seen.role:
                    seats[seat - 1] = SeatView(
                        seen.seat, seen.alive, role, seen.lover, seen.present
                    )
                    changed.append(seat - 1)
            rows = list(self.seats_json())
            for index in changed:
                rows[index] = seats[index].to_json()
            self._team = (tuple(seats), (), rows)
        return self._team

    def night_room(self, state: GameState) -> frozenset[int]:
        """The night room's seats, the dead too (of the state this part was built for)."""
        if self._night_room is None:
            self._night_room = night_room(state, living_only=False)
        return self._night_room

    def seats_json(self) -> list[Json]:
        if self._seats_json is None:
            self._seats_json = [seat.to_json() for seat in self.seats]
        return self._seats_json

    def day_json(self) -> dict[str, Json]:
        assert self.day is not None
        if self._day_json is None:
            self._day_json = self.day.to_json()
        return self._day_json

    def options_json(self, options: GameOptions) -> dict[str, Json]:
        cached = self._options_json
        if cached is None or cached[0] is not options:
            cached = self._options_json = (options, options.to_json())
        return cached[1]


SHARED_STATES = 64
"""States whose shared part is kept: a fan-out asks for every seat of one state, and several
games' fan-outs may interleave."""
_shared_parts: Kept[GameState, _Shared] = Kept(SHARED_STATES)


def _shared(state: GameState) -> _Shared:
    """The shared part of `state`'s views, kept by the state's identity (kit/kept.py)."""
    hit = _shared_parts.get(state)
    if hit is not MISSING:
        return hit
    outcome = state.outcome
    shared = _Shared(
        seats=_public_seats(state),
        day=_public_day(state),
        outcome=None
        if outcome is None
        else OutcomeView(outcome.sides, tuple(sorted(outcome.winners))),
    )
    return _shared_parts.put(state, shared)


def project(state: GameState, viewer: Viewer) -> StandardView:
    """Everything `viewer` may know right now, as a typed value: the part shared by every
    viewer is built once per state, per viewer only what is theirs."""
    shared = _shared(state)
    houses = _seats(state, viewer, shared)
    me = night = witch = None
    if viewer.kind is ViewerKind.PLAYER and viewer.seat is not None:
        player = state.player(viewer.seat)
        me = _me(state, player)
        night = _night_room(state, player)
        witch = _witch_victim(state, player)
    return StandardView(
        phase=state.phase,
        round=state.round,
        phase_seq=state.phase_seq,
        step=state.night.step if state.night is not None else None,
        world=state.options.world,
        options=state.options,
        seats=houses[0],
        day=_day(state, viewer, shared.day),
        instant_kill_used=state.instant_kill_used,
        outcome=shared.outcome,
        me=me,
        night_room=night,
        witch_victim=witch,
        shared=shared,
        own_seats=houses,
    )


def view(state: GameState, viewer: Viewer) -> dict[str, Json]:
    """`project` as JSON-ready data: what every channel sends today."""
    return project(state, viewer).to_json()


visible_events = kit_view.visible_events
"""The part of an event stream that `viewer` may receive (the kit's, the same for every
rule set)."""
