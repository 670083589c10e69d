"""Villager: no night power; talks and votes by day."""

from vollmond.engine.classic.roles.base import RoleSpec
from vollmond.engine.classic.types import Role, Team

ROLE = RoleSpec(Role.VILLAGER, Team.VILLAGE)
