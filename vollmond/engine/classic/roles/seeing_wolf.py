"""Seeing werewolf: a werewolf who also searches for the seer (A11)."""

from vollmond.engine.classic.abilities import Seek, WolfVote
from vollmond.engine.classic.roles.base import RoleSpec
from vollmond.engine.classic.types import Role, Team

ROLE = RoleSpec(
    Role.SEEING_WOLF,
    Team.WOLVES,
    wolf=True,
    wakes_with_wolves=True,
    seen_as_wolf=True,
    abilities=(WolfVote(), Seek()),
)
