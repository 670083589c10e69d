"""All roles of the standard rule set, by key. Adding a role is a module plus a line here."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from vollmond.engine.standard.roles import (
    creeper,
    defector,
    doctor,
    evil,
    filler,
    fox,
    hunter,
    knight,
    medium,
    necromancer,
    night_owl,
    princess,
    seer,
    trapper,
    twin,
    vagabond,
    vote_giver,
    witch,
)
from vollmond.engine.standard.roles.base import RoleSpec
from vollmond.engine.standard.types import RoleId

_ALL = (
    evil.ROLE,
    seer.ROLE,
    doctor.ROLE,
    witch.ROLE,
    night_owl.ROLE,
    hunter.ROLE,
    knight.ROLE,
    medium.ROLE,
    necromancer.ROLE,
    trapper.ROLE,
    twin.ROLE,
    defector.ROLE,
    fox.ROLE,
    vagabond.ROLE,
    vote_giver.ROLE,
    princess.ROLE,
    creeper.ROLE,
    filler.ROLE,
)

ROLES: Mapping[RoleId, RoleSpec] = MappingProxyType({role.id: role for role in _ALL})
