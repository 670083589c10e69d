"""Always two: know each other, may call, die together (S10)."""

from __future__ import annotations

from vollmond.engine.standard.roles.base import RoleSpec
from vollmond.engine.standard.types import RoleId, Team, Trait

ROLE = RoleSpec(
    id=RoleId.TWIN,
    team=Team.VILLAGE,
    traits=frozenset({Trait.BONDED_PAIR}),
)
