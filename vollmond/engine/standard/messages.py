"""The message schema of the standard rule set: every event and rejection code and the
parameter names it carries. The catalogues (vollmond/i18n) render exactly these; a property
test checks that every event the rules emit fits its entry."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from vollmond.engine.ruleset import MessageSchema, MessageSpec
from vollmond.engine.standard.codes import Ev, Rej


def _spec(*required: str, optional: tuple[str, ...] = ()) -> MessageSpec:
    return MessageSpec(frozenset(required), frozenset(optional))


_EVENT_PARAMS: Mapping[Ev, MessageSpec] = {
    Ev.GAME_STARTED: _spec(
        "world", "players", "deck", "composition", "lovers", "unanimous", "instant_kill"
    ),
    Ev.ROLES_DEALT: _spec("roles", "lovers"),
    Ev.ROLE_ASSIGNED: _spec("role"),
    Ev.TEAM_REVEALED: _spec("members"),
    Ev.PARTNER_REVEALED: _spec("kind", "seats"),
    Ev.PHASE_STARTED: _spec("phase", "round", "seq", "seconds", optional=("step",)),
    Ev.ROLE_TAKEN: _spec("role", "source"),
    Ev.ROLE_STOLEN: _spec("role"),
    Ev.TEAM_CHANGED: _spec(),
    Ev.ACTION_CONFIRMED: _spec("kind", "target"),
    Ev.EVIL_VOTE_CAST: _spec("voter", "target", "tally"),
    Ev.EVIL_VOTES_COMPLETE: _spec("victim"),
    Ev.WITCH_VICTIM: _spec("victim"),
    Ev.CHECK_RESULT: _spec("target", "evil"),
    Ev.MEDIUM_RESULT: _spec("target", "evil"),
    Ev.MORNING_REPORT: _spec("round", "dead"),
    Ev.SHOT_FIRED: _spec("target", "dead"),
    Ev.INSTANT_KILL: _spec("target", "dead"),
    Ev.NOMINATED: _spec("by", "nominee"),
    Ev.NO_NOMINATIONS: _spec("round"),
    Ev.VOTING_STARTED: _spec("nominees"),
    Ev.VOTE_CAST: _spec("voter"),
    Ev.VOTE_TRANSFERRED: _spec("giver", "to"),
    Ev.VOTE_RESULT: _spec("tally", "votes", "banished", "role", "spared", "dead"),
    Ev.INTERJECTION: _spec("seat", "seconds"),
    Ev.FLOOR_RELEASED: _spec("seat"),
    Ev.CALL_OUTGOING: _spec("call", "callee"),
    Ev.CALL_INCOMING: _spec("call", "caller"),
    Ev.CALL_BUSY: _spec("callee"),
    Ev.CALL_CONNECTED: _spec("call", "caller", "callee"),
    Ev.CALL_DECLINED: _spec("call", "callee"),
    Ev.CALL_MISSED: _spec("call"),
    Ev.CALL_ENDED: _spec("call", "reason", "kind"),
    Ev.CALL_MODE_CHANGED: _spec("call", "seat", "mode"),
    Ev.SEANCE_OPENED: _spec("call", "dead"),
    Ev.CHAT: _spec("room", "seat", "text"),
    Ev.PLAYER_LEFT: _spec("seat", "dead"),
    Ev.GAME_OVER: _spec("sides", "winners", "roles", "lovers"),
}
EVENTS: Mapping[str, MessageSpec] = MappingProxyType(
    {code.value: _EVENT_PARAMS[code] for code in Ev}
)

_TARGET = _spec(optional=("target",))
_REJECTION_PARAMS: Mapping[Rej, MessageSpec] = {
    Rej.NO_SUCH_ABILITY: _spec("kind"),
    Rej.TARGET_UNKNOWN: _spec("target"),
    Rej.TARGET_DEAD: _spec("target"),
    Rej.TARGET_ALIVE: _spec("target"),
    Rej.TARGET_BUSY: _spec("target"),
    Rej.TARGET_TEAMMATE: _spec("target"),
    Rej.REPEAT_TARGET: _spec("target"),
    Rej.ALREADY_NOMINATED: _spec("target"),
    Rej.NOT_NOMINATED: _spec("target"),
    Rej.VICTIM_UNKNOWN: _TARGET,
    Rej.CALL_LIMIT: _spec("limit"),
    Rej.TEXT_TOO_LONG: _spec("limit"),
    Rej.FLOOR_TAKEN: _spec("seat"),
}
REJECTIONS: Mapping[str, MessageSpec] = MappingProxyType(
    {code.value: _REJECTION_PARAMS.get(code, _spec()) for code in Rej}
)

SCHEMA = MessageSchema(
    events=EVENTS,
    rejections=REJECTIONS,
)
