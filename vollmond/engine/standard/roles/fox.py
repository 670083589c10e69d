"""Plays alone, wins in addition if alive at the end (S13)."""

from __future__ import annotations

from vollmond.engine.standard.roles.base import RoleSpec
from vollmond.engine.standard.types import RoleId, Team, Trait

ROLE = RoleSpec(
    id=RoleId.FOX,
    team=Team.LONER,
    traits=frozenset({Trait.WINS_IF_ALIVE}),
)
