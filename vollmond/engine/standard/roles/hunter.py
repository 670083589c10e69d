"""Shoots by day while bullets last (S5)."""

from __future__ import annotations

from vollmond.engine.standard.abilities.day import Shoot
from vollmond.engine.standard.roles.base import RoleSpec
from vollmond.engine.standard.types import RoleId, Team

ROLE = RoleSpec(
    id=RoleId.HUNTER,
    team=Team.VILLAGE,
    abilities=(Shoot(),),
)
