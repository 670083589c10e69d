"""Death-seeker: a party of his own; banished by the village he alone wins (A14)."""

from vollmond.engine.classic.roles.base import RoleSpec
from vollmond.engine.classic.types import Role, Team

ROLE = RoleSpec(Role.DEATH_SEEKER, Team.LONER, wins_if_banished=True)
