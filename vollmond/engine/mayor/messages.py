"""The message schema of the mayor rule set: every event and rejection code with the names
of its parameters (the catalogues' placeholders; a property test checks every emitted event
against it)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from vollmond.engine.mayor.codes import Ev, Rej
from vollmond.engine.ruleset import MessageSchema, MessageSpec


def _spec(*required: str, optional: tuple[str, ...] = ()) -> MessageSpec:
    return MessageSpec(frozenset(required), frozenset(optional))


_RECORD = ("tally", "votes")
_EVENT_PARAMS: Mapping[Ev, MessageSpec] = {
    Ev.GAME_STARTED: _spec("world", "players", "nazis", "pairs"),
    Ev.ROLES_DEALT: _spec("roles", "lovers"),
    Ev.ROLE_ASSIGNED: _spec("role"),
    Ev.TEAM_REVEALED: _spec("members"),
    Ev.LOVERS_REVEALED: _spec("seats"),
    Ev.STAGE_STARTED: _spec("stage", "phase", "round", "seq", "seconds"),
    Ev.CANDIDATE_STOOD: _spec("seat"),
    Ev.CANDIDATE_DECLINED: _spec("seat"),
    Ev.NO_CANDIDATES: _spec("candidates"),
    Ev.FLOOR_GIVEN: _spec("seat", "seconds", "purpose"),
    Ev.FLOOR_RELEASED: _spec("seat"),
    Ev.BALLOT_OPENED: _spec("candidates"),
    Ev.VOTE_CAST: _spec("voter"),
    Ev.ELECTION_TIED: _spec("tied", *_RECORD),
    Ev.MAYOR_ELECTED: _spec("seat", "how", *_RECORD),
    Ev.MAYOR_LOST: _spec("seat"),
    Ev.ACCUSED: _spec("by", "seat"),
    Ev.NO_ACCUSATIONS: _spec("round"),
    Ev.TRIAL_OPENED: _spec("accused"),
    Ev.TRIAL_TIED: _spec("tied", *_RECORD),
    Ev.IMPRISONED: _spec("seat", "role", "how", "dead", *_RECORD),
    Ev.ACQUITTED: _spec(*_RECORD),
    Ev.VICTIM_CHOSEN: _spec("voter", "target"),
    Ev.NIGHT_VICTIM: _spec("round", "seat", "role", "dead"),
    Ev.NIGHT_QUIET: _spec("round"),
    Ev.CHAT: _spec("room", "seat", "text"),
    Ev.PLAYER_LEFT: _spec("seat", "dead"),
    Ev.GAME_OVER: _spec("side", "winners", "roles", "lovers"),
}
EVENTS: Mapping[str, MessageSpec] = MappingProxyType(
    {code.value: _EVENT_PARAMS[code] for code in Ev}
)

_TARGET = _spec("target")
_REJECTION_PARAMS: Mapping[Rej, MessageSpec] = {
    Rej.TARGET_UNKNOWN: _TARGET,
    Rej.TARGET_OUT: _TARGET,
    Rej.TARGET_TEAMMATE: _TARGET,
    Rej.NOT_A_CANDIDATE: _TARGET,
    Rej.TARGET_ACCUSED: _TARGET,
    Rej.TEXT_TOO_LONG: _spec("limit"),
}
REJECTIONS: Mapping[str, MessageSpec] = MappingProxyType(
    {code.value: _REJECTION_PARAMS.get(code, _spec()) for code in Rej}
)

SCHEMA = MessageSchema(events=EVENTS, rejections=REJECTIONS)

VARIANTS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        Ev.MAYOR_ELECTED.value: ("unopposed", "vote", "runoff", "lot"),
        Ev.IMPRISONED.value: ("vote", "runoff", "mayor"),
        Ev.FLOOR_GIVEN.value: ("introductions", "defence"),
        Ev.GAME_OVER.value: ("democrats", "nazis", "lovers", "draw"),
        Ev.CHAT.value: ("market", "night_room", "out"),
        Ev.STAGE_STARTED.value: (
            "candidacy",
            "introductions",
            "ballot",
            "runoff",
            "night",
            "morning",
            "accusations",
            "defence",
            "vote",
            "revote",
        ),
    }
)
"""Codes whose sentence changes with a string parameter's value: the catalogue has one
template per value (`mayor.event.<code>.<value>`), picked by the renderer."""
