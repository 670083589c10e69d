"""The world's plain role (W5, W8)."""

from __future__ import annotations

from vollmond.engine.standard.roles.base import RoleSpec
from vollmond.engine.standard.types import RoleId, Team

ROLE = RoleSpec(
    id=RoleId.FILLER,
    team=Team.VILLAGE,
)
