"""Checks one other person each night (S1)."""

from __future__ import annotations

from vollmond.engine.standard.abilities.night import Check
from vollmond.engine.standard.roles.base import RoleSpec
from vollmond.engine.standard.types import RoleId, Team

ROLE = RoleSpec(
    id=RoleId.SEER,
    team=Team.VILLAGE,
    abilities=(Check(),),
)
