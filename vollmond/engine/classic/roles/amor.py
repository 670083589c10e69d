"""Amor: before the first night makes two players lovers, himself allowed (A4)."""

from vollmond.engine.classic.abilities import Link
from vollmond.engine.classic.roles.base import RoleSpec
from vollmond.engine.classic.types import Role, Team

ROLE = RoleSpec(Role.AMOR, Team.VILLAGE, abilities=(Link(),))
