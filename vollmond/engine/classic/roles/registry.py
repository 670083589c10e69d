"""All cards of the classic rule set, by id. Adding a card is a module plus a line here."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from vollmond.engine.classic.roles import (
    amor,
    black_wolf,
    death_seeker,
    false_wolf,
    herb_witch,
    pact_maker,
    sandman,
    seeing_wolf,
    seer,
    thief,
    villager,
    werewolf,
)
from vollmond.engine.classic.roles.base import RoleSpec
from vollmond.engine.classic.types import Role

_ALL = (
    werewolf.ROLE,
    villager.ROLE,
    seer.ROLE,
    thief.ROLE,
    amor.ROLE,
    herb_witch.ROLE,
    sandman.ROLE,
    false_wolf.ROLE,
    seeing_wolf.ROLE,
    pact_maker.ROLE,
    black_wolf.ROLE,
    death_seeker.ROLE,
)

ROLES: Mapping[Role, RoleSpec] = MappingProxyType({role.id: role for role in _ALL})
