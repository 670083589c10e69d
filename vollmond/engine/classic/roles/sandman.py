"""Sandman: learns whether someone was active this night (A8)."""

from vollmond.engine.classic.abilities import Sense
from vollmond.engine.classic.roles.base import RoleSpec
from vollmond.engine.classic.types import Role, Team

ROLE = RoleSpec(Role.SANDMAN, Team.VILLAGE, abilities=(Sense(),))
