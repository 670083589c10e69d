"""Taken at night, drags a random attacker along (S17)."""

from __future__ import annotations

from vollmond.engine.standard.roles.base import RoleSpec
from vollmond.engine.standard.types import RoleId, Team, Trait

ROLE = RoleSpec(
    id=RoleId.CREEPER,
    team=Team.VILLAGE,
    traits=frozenset({Trait.DRAGS_ATTACKER}),
)
