"""Steals a role first thing in night 1 (S14)."""

from __future__ import annotations

from vollmond.engine.standard.abilities.steal import Steal
from vollmond.engine.standard.roles import filler
from vollmond.engine.standard.roles.base import RoleSpec
from vollmond.engine.standard.types import RoleId, Team

ROLE = RoleSpec(
    id=RoleId.VAGABOND,
    team=Team.VILLAGE,
    abilities=(Steal(plain=filler.ROLE),),
)
