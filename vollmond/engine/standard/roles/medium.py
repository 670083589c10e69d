"""Learns each night whether the last banished was evil (S7)."""

from __future__ import annotations

from vollmond.engine.standard.roles.base import RoleSpec
from vollmond.engine.standard.types import RoleId, Team, Trait

ROLE = RoleSpec(
    id=RoleId.MEDIUM,
    team=Team.VILLAGE,
    traits=frozenset({Trait.LEARNS_BANISHED}),
)
