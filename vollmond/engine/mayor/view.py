"""One projection for every channel: what a viewer may know of a mayor game, nothing more.

A role is known to: its own seat; everyone once the seat is out (dead or in prison, the card
is turned over) or the game is over; the Nazis among each other from the first night on.
The lovers know each other from the first night on. How the Nazis point at night is known to
the living Nazis only; who voted for whom only once the result is announced.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from vollmond.engine.core import Json, Viewer, ViewerKind
from vollmond.engine.kit import view as kit_view
from vollmond.engine.mayor.commands import Command
from vollmond.engine.mayor.legal import legal_commands
from vollmond.engine.mayor.options import MayorOptions
from vollmond.engine.mayor.phases import current_stage
from vollmond.engine.mayor.state import MayorState, Player
from vollmond.engine.mayor.types import Phase, Side, Stage, Status


def _seat_of(viewer: Viewer) -> int | None:
    return viewer.seat if viewer.kind is ViewerKind.PLAYER else None


def known_roles(state: MayorState, viewer: Viewer) -> dict[int, str]:
    known = {p.seat: p.role.id for p in state.players if not p.alive or state.is_over}
    seat = _seat_of(viewer)
    if seat is None or not state.has_seat(seat):
        return known
    me = state.player(seat)
    known[seat] = me.role.id
    if me.role.night_room and state.bonds_known:
        known.update({p.seat: p.role.id for p in state.players if p.role.night_room})
    return known


def known_lovers(state: MayorState, viewer: Viewer) -> frozenset[int]:
    lovers = frozenset(state.lovers())
    if state.is_over:
        return lovers
    seat = _seat_of(viewer)
    if seat is not None and seat in lovers and state.bonds_known:
        return lovers
    return frozenset()


@dataclass(frozen=True, slots=True)
class SeatView:
    seat: int
    status: Status
    role: str | None
    lover: bool
    mayor: bool

    def to_json(self) -> dict[str, Json]:
        return {
            "seat": self.seat,
            "status": self.status.value,
            "alive": self.status is Status.ALIVE,
            "role": self.role,
            "lover": self.lover,
            "mayor": self.mayor,
        }


@dataclass(frozen=True, slots=True)
class ElectionView:
    candidates: tuple[int, ...]
    declined: tuple[int, ...]
    runoff: tuple[int, ...]

    def to_json(self) -> dict[str, Json]:
        return {
            "candidates": list(self.candidates),
            "declined": list(self.declined),
            "runoff": list(self.runoff),
        }


@dataclass(frozen=True, slots=True)
class TrialView:
    accusations: Mapping[int, int]
    accused: tuple[int, ...]
    runoff: tuple[int, ...]

    def to_json(self) -> dict[str, Json]:
        return {
            "accusations": {str(a): t for a, t in sorted(self.accusations.items())},
            "accused": list(self.accused),
            "runoff": list(self.runoff),
        }


@dataclass(frozen=True, slots=True)
class BallotView:
    """An open vote: the candidates, who has voted and who has not (never for whom)."""

    candidates: tuple[int, ...]
    voted: tuple[int, ...]
    waiting_for: tuple[int, ...]

    def to_json(self) -> dict[str, Json]:
        return {
            "candidates": list(self.candidates),
            "voted": list(self.voted),
            "waiting_for": list(self.waiting_for),
        }


@dataclass(frozen=True, slots=True)
class FloorView:
    speaker: int | None
    queue: tuple[int, ...]
    purpose: Stage
    seconds: float

    def to_json(self) -> dict[str, Json]:
        return {
            "speaker": self.speaker,
            "queue": list(self.queue),
            "purpose": self.purpose.value,
            "seconds": self.seconds,
        }


@dataclass(frozen=True, slots=True)
class NightRoomView:
    """The living Nazis' room: its members and where each of them points."""

    members: tuple[int, ...]
    choices: Mapping[int, int]

    def to_json(self) -> dict[str, Json]:
        return {
            "members": list(self.members),
            "choices": {str(s): t for s, t in sorted(self.choices.items())},
        }


@dataclass(frozen=True, slots=True)
class MeView:
    seat: int
    role: str
    status: Status
    team: tuple[int, ...]
    partner: int | None
    legal: tuple[Command, ...]

    def to_json(self) -> dict[str, Json]:
        return {
            "seat": self.seat,
            "role": self.role,
            "status": self.status.value,
            "team": list(self.team),
            "partner": self.partner,
            "legal": [describe(cmd) for cmd in self.legal],
        }


@dataclass(frozen=True, slots=True)
class OutcomeView:
    side: Side
    winners: tuple[int, ...]

    def to_json(self) -> dict[str, Json]:
        return {"side": self.side.value, "winners": list(self.winners)}


@dataclass(frozen=True, slots=True)
class MayorView:
    """Everything one viewer may know right now (`RuleSet.view` of the mayor rules)."""

    stage: Stage
    phase: Phase
    round: int
    phase_seq: int
    world: str
    options: MayorOptions
    mayor: int | None
    seats: tuple[SeatView, ...]
    election: ElectionView | None
    trial: TrialView | None
    ballot: BallotView | None
    floor: FloorView | None
    night_room: NightRoomView | None
    me: MeView | None
    outcome: OutcomeView | None

    def to_json(self) -> dict[str, Json]:
        return {
            "ruleset": "mayor",
            "stage": self.stage.value,
            "phase": self.phase.value,
            "round": self.round,
            "phase_seq": self.phase_seq,
            "world": self.world,
            "options": self.options.to_json(),
            "mayor": self.mayor,
            "seats": [s.to_json() for s in self.seats],
            "election": None if self.election is None else self.election.to_json(),
            "trial": None if self.trial is None else self.trial.to_json(),
            "ballot": None if self.ballot is None else self.ballot.to_json(),
            "floor": None if self.floor is None else self.floor.to_json(),
            "night_room": None if self.night_room is None else self.night_room.to_json(),
            "me": None if self.me is None else self.me.to_json(),
            "outcome": None if self.outcome is None else self.outcome.to_json(),
        }


def describe(cmd: object) -> Json:
    """A command as the view's `legal` list shows it: its type name and its fields."""
    out: dict[str, Json] = {"type": type(cmd).__name__}
    for name in getattr(cmd, "__slots__", ()):
        out[name] = getattr(cmd, name)
    return out


def _me(state: MayorState, player: Player) -> MeView:
    team: tuple[int, ...] = ()
    if player.role.night_room and state.bonds_known:
        team = tuple(p.seat for p in state.players if p.role.night_room)
    partner = None
    if player.lover and state.bonds_known:
        partner = next(s for s in state.lovers() if s != player.seat)
    return MeView(
        seat=player.seat,
        role=player.role.id,
        status=player.status,
        team=team,
        partner=partner,
        legal=tuple(legal_commands(state, player.seat)),
    )


def _night_room(state: MayorState, player: Player) -> NightRoomView | None:
    night = state.night
    if night is None or not player.alive or not player.role.night_room:
        return None
    room = state.night_room()
    return NightRoomView(
        members=tuple(sorted(room)),
        choices=MappingProxyType({s: t for s, t in night.choices.items() if s in room}),
    )


def project(state: MayorState, viewer: Viewer) -> MayorView:
    """Everything `viewer` may know right now, as a typed value."""
    roles = known_roles(state, viewer)
    lovers = known_lovers(state, viewer)
    seat = _seat_of(viewer)
    player = state.player(seat) if seat is not None and state.has_seat(seat) else None
    election, trial, ballot, floor = state.election, state.trial, state.ballot, state.floor
    living = state.living_seats()
    return MayorView(
        stage=state.stage,
        phase=Phase.OVER if state.is_over else current_stage(state).phase,
        round=state.round,
        phase_seq=state.phase_seq,
        world=state.options.world,
        options=state.options,
        mayor=state.mayor,
        seats=tuple(
            SeatView(p.seat, p.status, roles.get(p.seat), p.seat in lovers, p.seat == state.mayor)
            for p in state.players
        ),
        election=None
        if election is None
        else ElectionView(election.candidates, tuple(sorted(election.declined)), election.runoff),
        trial=None
        if trial is None
        else TrialView(MappingProxyType(dict(trial.accusations)), trial.accused, trial.runoff),
        ballot=None
        if ballot is None
        else BallotView(
            ballot.candidates,
            tuple(sorted(ballot.votes)),
            tuple(sorted(living - ballot.votes.keys())),
        ),
        floor=None
        if floor is None
        else FloorView(floor.speaker, floor.queue, floor.purpose, floor.seconds),
        night_room=None if player is None else _night_room(state, player),
        me=None if player is None else _me(state, player),
        outcome=None
        if state.outcome is None
        else OutcomeView(state.outcome.side, tuple(sorted(state.outcome.winners))),
    )


visible_events = kit_view.visible_events
"""The part of an event stream that `viewer` may receive (the kit's, the same for every
rule set)."""
