"""Black werewolf: a werewolf the seer sees as a villager (A13)."""

from vollmond.engine.classic.abilities import WolfVote
from vollmond.engine.classic.roles.base import RoleSpec
from vollmond.engine.classic.types import Role, Team

ROLE = RoleSpec(
    Role.BLACK_WOLF, Team.WOLVES, wolf=True, wakes_with_wolves=True, abilities=(WolfVote(),)
)
