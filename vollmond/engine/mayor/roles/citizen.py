"""The democratic citizens of seed 000: no night action; they uncover the evil team by day."""

from vollmond.engine.mayor.roles.base import RoleSpec
from vollmond.engine.mayor.types import Team

CITIZEN = RoleSpec(id="citizen", team=Team.DEMOCRATS)
