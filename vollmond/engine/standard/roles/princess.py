"""Survives her first banishment, revealed (S16)."""

from __future__ import annotations

from vollmond.engine.standard.roles.base import RoleSpec
from vollmond.engine.standard.types import RoleId, Team, Trait

ROLE = RoleSpec(
    id=RoleId.PRINCESS,
    team=Team.VILLAGE,
    traits=frozenset({Trait.SURVIVES_FIRST_BANISHMENT}),
)
