"""Pact maker: on the wolves' side, told the werewolves in the first night, unknown to them,
no night power (A12)."""

from vollmond.engine.classic.roles.base import RoleSpec
from vollmond.engine.classic.types import Role, Team

ROLE = RoleSpec(Role.PACT_MAKER, Team.WOLVES, learns_wolves=True)
