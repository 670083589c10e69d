"""Werewolf: wakes with the pack and chooses the night's victim (A6)."""

from vollmond.engine.classic.abilities import WolfVote
from vollmond.engine.classic.roles.base import RoleSpec
from vollmond.engine.classic.types import Role, Team

ROLE = RoleSpec(
    Role.WEREWOLF,
    Team.WOLVES,
    wolf=True,
    wakes_with_wolves=True,
    seen_as_wolf=True,
    abilities=(WolfVote(),),
)
