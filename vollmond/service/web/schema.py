"""The request bodies of the JSON API as strict msgspec structs (decoded in `edge`).

Unknown fields are refused, integers are bounded and strings carry no NUL, so nothing a client
sends reaches the hub, the engine or a query in a shape the code did not expect. Founding
options keep the wire format of the rule set's `encode_options` (docs/protocol.md); `ruleset`
names the rule set (default standard), which decodes and checks the rest.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from msgspec import UNSET, UnsetType

from vollmond.service.web.edge import INT_BOUND, BoundedInt, Long, Seconds, Short

MAX_CUSTOM_ROLES = 64
MAX_DURATIONS = 16


class Credentials(msgspec.Struct, forbid_unknown_fields=True):
    name: Short
    password: Long


class JoinByCode(msgspec.Struct, forbid_unknown_fields=True):
    code: Short


class SeatToken(msgspec.Struct, forbid_unknown_fields=True):
    token: Short


class HistoryRequest(msgspec.Struct, forbid_unknown_fields=True):
    token: Short | None = None
    lang: Short = "de"


class OperatorRequest(msgspec.Struct, forbid_unknown_fields=True):
    token: Short | None = None  # None: a signed-in spectator calls (docs/moderation.md)
    reason: BoundedInt | None = None
    player: BoundedInt | None = None


class CallsBody(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    enabled: bool | UnsetType = UNSET
    max_duration_s: Seconds | UnsetType = UNSET
    per_night: BoundedInt | UnsetType = UNSET
    by_day: bool | UnsetType = UNSET
    day_modes: Short | UnsetType = UNSET
    evil_may_call: bool | UnsetType = UNSET
    ring_s: Seconds | UnsetType = UNSET


class FoundingBody(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """`POST /api/games`. `size` is checked by the handler (its own error code)."""

    size: Any = None
    private: bool = False
    join: bool = True
    ruleset: Short = "standard"
    world: Short | UnsetType = UNSET
    deck: Short | UnsetType = UNSET
    custom_roles: (
        Annotated[list[tuple[Short, BoundedInt]], msgspec.Meta(max_length=MAX_CUSTOM_ROLES)]
        | UnsetType
    ) = UNSET
    lovers: bool | None = None
    unanimous: bool | UnsetType = UNSET
    instant_kill: bool | UnsetType = UNSET
    captain: bool | UnsetType = UNSET  # classic
    nazis: BoundedInt | UnsetType | None = UNSET  # mayor
    # null means "the defaults", like leaving the field out. The names of the durations are
    # the rule set's own (a standard `night_s`, a classic `night_step_s`); it refuses others.
    durations: (
        Annotated[dict[Short, Seconds], msgspec.Meta(max_length=MAX_DURATIONS)] | UnsetType | None
    ) = UNSET
    calls: CallsBody | UnsetType | None = UNSET
    stalemate_rounds: BoundedInt | UnsetType = UNSET

    def players(self) -> int | None:
        """The table size, if it is a whole number in range."""
        size = self.size
        if type(size) is not int or not -INT_BOUND <= size <= INT_BOUND:
            return None
        return size

    def engine_json(self, players: int) -> dict[str, Any]:
        """The options in the JSON form the rule set's `decode_options` reads."""
        out: dict[str, Any] = msgspec.to_builtins(self)
        for key in ("size", "private", "join", "ruleset"):
            out.pop(key, None)
        for key in ("durations", "calls"):
            if out.get(key) is None:
                out.pop(key, None)
        out["players"] = players
        return out
