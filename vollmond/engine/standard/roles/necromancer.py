"""Talks with one dead player at night (S8)."""

from __future__ import annotations

from vollmond.engine.standard.abilities.night import Seance
from vollmond.engine.standard.roles.base import RoleSpec
from vollmond.engine.standard.types import RoleId, Team

ROLE = RoleSpec(
    id=RoleId.NECROMANCER,
    team=Team.VILLAGE,
    abilities=(Seance(),),
)
