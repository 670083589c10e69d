"""The message schema: every event and rejection code with its parameter names (the
catalogues' placeholders). A property test checks every emitted event fits it."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from vollmond.engine.classic.codes import Ev, Rej
from vollmond.engine.ruleset import MessageSchema, MessageSpec


def _spec(*required: str, optional: tuple[str, ...] = ()) -> MessageSpec:
    return MessageSpec(frozenset(required), frozenset(optional))


_EVENT_PARAMS: Mapping[Ev, MessageSpec] = {
    Ev.GAME_STARTED: _spec("world", "players", "deck", "composition", "captain"),
    Ev.ROLES_DEALT: _spec("roles", "leftover"),
    Ev.ROLE_ASSIGNED: _spec("role"),
    Ev.PHASE_STARTED: _spec("phase", "round", "seq", "seconds", optional=("step",)),
    Ev.THIEF_CARDS: _spec("cards", "must_take_wolf"),
    Ev.ROLE_TAKEN: _spec("role"),
    Ev.LOVERS_CHOSEN: _spec("seats"),
    Ev.LOVERS_REVEALED: _spec("seats"),
    Ev.ELECTION_VOTE: _spec("voter", "target"),
    Ev.CAPTAIN_ELECTED: _spec("captain", "tally", "by_lot"),
    Ev.PACK_REVEALED: _spec("members"),
    Ev.WOLVES_TOLD: _spec("wolves"),
    Ev.WOLF_VOTE_CAST: _spec("voter", "target", "tally"),
    Ev.WOLVES_CHOSE: _spec("victim"),
    Ev.SEEK_RESULT: _spec("target", "seer"),
    Ev.CHECK_RESULT: _spec("target", "wolf"),
    Ev.WITCH_VICTIM: _spec("victim"),
    Ev.SANDMAN_RESULT: _spec("target", "active"),
    Ev.ACTION_CONFIRMED: _spec("kind", "target"),
    Ev.MORNING_REPORT: _spec("round", "dead"),
    Ev.VOTE_CAST: _spec("voter", "target"),
    Ev.TIE_TO_CAPTAIN: _spec("tied", "captain"),
    Ev.VOTE_RESULT: _spec("tally", "banished", "role", "dead", "decided_by"),
    Ev.SUCCESSOR_NAMED: _spec("captain", "by_lot"),
    Ev.PLAYER_LEFT: _spec("seat", "dead"),
    Ev.GAME_OVER: _spec("sides", "winners", "roles", "lovers"),
}
EVENTS: Mapping[str, MessageSpec] = MappingProxyType(
    {code.value: _EVENT_PARAMS[code] for code in Ev}
)

_TARGET = _spec("target")
_REJECTION_PARAMS: Mapping[Rej, MessageSpec] = {
    Rej.NO_SUCH_ABILITY: _spec("kind"),
    Rej.TARGET_UNKNOWN: _TARGET,
    Rej.TARGET_DEAD: _TARGET,
    Rej.TARGET_PACK: _TARGET,
    Rej.TARGET_VICTIM: _TARGET,
    Rej.SAME_TWICE: _TARGET,
    Rej.NO_SUCH_CARD: _TARGET,
    Rej.NOT_TIED: _TARGET,
}
REJECTIONS: Mapping[str, MessageSpec] = MappingProxyType(
    {code.value: _REJECTION_PARAMS.get(code, _spec()) for code in Rej}
)

SCHEMA = MessageSchema(events=EVENTS, rejections=REJECTIONS)
