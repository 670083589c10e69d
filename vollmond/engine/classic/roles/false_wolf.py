"""False wolf: a villager who wakes and votes with the wolves (A10)."""

from vollmond.engine.classic.abilities import WolfVote
from vollmond.engine.classic.roles.base import RoleSpec
from vollmond.engine.classic.types import Role, Team

ROLE = RoleSpec(Role.FALSE_WOLF, Team.VILLAGE, wakes_with_wolves=True, abilities=(WolfVote(),))
