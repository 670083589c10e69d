"""Request bodies of the moderation console's JSON API (`/api/mod/...`), strict like `schema`.

Unknown fields are refused, integers bounded and strings free of NUL; enumerations (outcome,
sanction kind, role, grant kind) are decoded by msgspec into the core's own enums, so a value
the core does not know never reaches it. Durations are whole minutes (a ban's `minutes` null
means permanent, which only admins may impose — the core decides that, not this schema).
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from vollmond.moderation import Outcome, SanctionKind
from vollmond.moderation.administration import GrantKind
from vollmond.service.web.edge import BoundedInt, Short
from vollmond.store import Role

#: A note, reason or hold reason: the core's own limit is 500 characters.
Text = Annotated[str, msgspec.Meta(max_length=500, pattern=r"^[^\x00]*$")]
#: A positive number of minutes (a year at most; longer is a permanent ban).
Minutes = Annotated[int, msgspec.Meta(ge=1, le=366 * 24 * 60)]
#: A positive id of an account or a phone identity.
Id = Annotated[int, msgspec.Meta(ge=1, le=2**31 - 1)]


class ResolveBody(msgspec.Struct, forbid_unknown_fields=True):
    outcome: Outcome
    note: Text = ""


class SanctionBody(msgspec.Struct, forbid_unknown_fields=True):
    """Exactly one of `account` and `phone` names the person."""

    kind: SanctionKind
    reason: Text
    account: Id | None = None
    phone: Id | None = None
    area: Short | None = None
    minutes: Minutes | None = None
    game_id: Short | None = None
    alarm_id: Id | None = None


class HoldBody(msgspec.Struct, forbid_unknown_fields=True):
    reason: Text


class RoleBody(msgspec.Struct, forbid_unknown_fields=True):
    role: Role


class GrantBody(msgspec.Struct, forbid_unknown_fields=True):
    """Premium needs `days`; credit and karma an `amount` (negative takes); private_seats an
    `amount` of seats and optionally `days`."""

    kind: GrantKind
    reason: Text
    amount: BoundedInt | None = None
    days: Annotated[int, msgspec.Meta(ge=1, le=3660)] | None = None
