"""Seer: one vision a night, thumb up or down (A2, A6)."""

from vollmond.engine.classic.abilities import Check
from vollmond.engine.classic.roles.base import RoleSpec
from vollmond.engine.classic.types import Role, Team

ROLE = RoleSpec(Role.SEER, Team.VILLAGE, abilities=(Check(),))
