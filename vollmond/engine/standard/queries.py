"""Questions about a game's roles for the channels: the role properties of `properties`,
plus `spec(role)`, a role's spec looked up by its id in the registry.

Inside the rules, modules below the role registry (abilities, deaths, victory, ...) use
`properties` instead, so the registry can be built from abilities without an import cycle.
"""

from __future__ import annotations

from vollmond.engine.standard.properties import (
    alive,
    bonded_partners,
    bonds_known,
    has_trait,
    in_night_room,
    is_day_time,
    night_room,
    on_team,
    seen_as_evil,
    spec_of,
)
from vollmond.engine.standard.roles.base import RoleSpec
from vollmond.engine.standard.roles.registry import ROLES
from vollmond.engine.standard.types import RoleId

__all__ = [
    "alive",
    "bonded_partners",
    "bonds_known",
    "has_trait",
    "in_night_room",
    "is_day_time",
    "night_room",
    "on_team",
    "seen_as_evil",
    "spec",
    "spec_of",
]


def spec(role: RoleId) -> RoleSpec:
    """The spec of a role by its id (menus, narration, decks)."""
    return ROLES[role]
