"""One healing and one poison potion per game (S3)."""

from __future__ import annotations

from vollmond.engine.standard.abilities.night import Heal, Poison
from vollmond.engine.standard.roles.base import RoleSpec
from vollmond.engine.standard.types import RoleId, Team

ROLE = RoleSpec(
    id=RoleId.WITCH,
    team=Team.VILLAGE,
    abilities=(Heal(), Poison()),
)
