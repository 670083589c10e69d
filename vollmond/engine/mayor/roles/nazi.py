"""The evil team of seed 000: disguised as citizens, choose one victim together each night."""

from vollmond.engine.mayor.roles.base import RoleSpec
from vollmond.engine.mayor.types import Team

NAZI = RoleSpec(id="nazi", team=Team.NAZIS, night_room=True)
