"""Thief: before the first night takes one of the two cards left over (A3)."""

from vollmond.engine.classic.abilities import TakeCard
from vollmond.engine.classic.roles.base import RoleSpec
from vollmond.engine.classic.types import Role, Team

ROLE = RoleSpec(Role.THIEF, Team.VILLAGE, abilities=(TakeCard(),))
