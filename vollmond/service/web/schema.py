"""The request bodies of the JSON API as strict msgspec structs (decoded in `edge`).

Unknown fields are refused, integers are bounded and strings carry no NUL, so nothing a client
sends reaches the hub, the engine or a query in a shape the code did not expect. Founding
options keep the wire format of `GameOptions.to_json` (docs/protocol.md).
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from msgspec import UNSET, UnsetType

from vollmond.service.web.edge import INT_BOUND, BoundedInt, Long, Seconds, Short

MAX_CUSTOM_ROLES = 64


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


class DurationsBody(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    steal_s: Seconds | UnsetType = UNSET
    night_s: Seconds | UnsetType = UNSET
    morning_s: Seconds | UnsetType = UNSET
    day_s: Seconds | UnsetType = UNSET
    vote_s: Seconds | UnsetType = UNSET
    floor_s: Seconds | UnsetType = UNSET


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
    world: Short | UnsetType = UNSET
    deck: Short | UnsetType = UNSET
    custom_roles: (
        Annotated[list[tuple[Short, BoundedInt]], msgspec.Meta(max_length=MAX_CUSTOM_ROLES)]
        | UnsetType
    ) = UNSET
    lovers: bool | None = None
    unanimous: bool | UnsetType = UNSET
    instant_kill: bool | UnsetType = UNSET
    # null means "the defaults", like leaving the field out.
    durations: DurationsBody | UnsetType | None = UNSET
    calls: CallsBody | UnsetType | None = UNSET
    stalemate_rounds: BoundedInt | UnsetType = UNSET

    def players(self) -> int | None:
        """The table size, if it is a whole number in range."""
        size = self.size
        if type(size) is not int or not -INT_BOUND <= size <= INT_BOUND:
            return None
        return size

    def engine_json(self, players: int) -> dict[str, Any]:
        """The options in the JSON form `options_from_json` reads."""
        out: dict[str, Any] = msgspec.to_builtins(self)
        for key in ("size", "private", "join"):
            out.pop(key, None)
        for key in ("durations", "calls"):
            if out.get(key) is None:
                out.pop(key, None)
        out["players"] = players
        return out
