"""Sets a trap that kills an attacker and saves the victim (S9)."""

from __future__ import annotations

from vollmond.engine.standard.abilities.night import Trap
from vollmond.engine.standard.roles.base import RoleSpec
from vollmond.engine.standard.types import RoleId, Team

ROLE = RoleSpec(
    id=RoleId.TRAPPER,
    team=Team.VILLAGE,
    abilities=(Trap(),),
)
