"""Away from home at night; dies visiting evil or the victim (S4)."""

from __future__ import annotations

from vollmond.engine.standard.abilities.night import Visit
from vollmond.engine.standard.roles.base import RoleSpec
from vollmond.engine.standard.types import RoleId, Team

ROLE = RoleSpec(
    id=RoleId.NIGHT_OWL,
    team=Team.VILLAGE,
    abilities=(Visit(),),
)
