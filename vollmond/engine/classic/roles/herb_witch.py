"""Herb witch: sees the victim; heals it or poisons another, once in the whole game (A7)."""

from vollmond.engine.classic.abilities import Heal, Pass, Poison
from vollmond.engine.classic.roles.base import RoleSpec
from vollmond.engine.classic.types import Role, Team

ROLE = RoleSpec(Role.HERB_WITCH, Team.VILLAGE, abilities=(Heal(), Poison(), Pass()))
