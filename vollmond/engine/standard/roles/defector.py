"""Sides with evil, unknown to it; seen as harmless; not in the majority (S12)."""

from __future__ import annotations

from vollmond.engine.standard.roles.base import RoleSpec
from vollmond.engine.standard.types import RoleId, Team

ROLE = RoleSpec(
    id=RoleId.DEFECTOR,
    team=Team.EVIL,
)
