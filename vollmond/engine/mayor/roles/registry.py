"""Every role of the mayor rule set by id (the world file names each of them)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from vollmond.engine.mayor.roles.base import RoleSpec
from vollmond.engine.mayor.roles.citizen import CITIZEN
from vollmond.engine.mayor.roles.nazi import NAZI

ROLES: Mapping[str, RoleSpec] = MappingProxyType({role.id: role for role in (NAZI, CITIZEN)})
EVIL_ROLE = NAZI
"""The role the deal hands to the evil seats."""
GOOD_ROLE = CITIZEN
"""The role every other seat gets."""
